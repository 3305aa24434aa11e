import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogEntry } from '../../emulator/stats.ts';
import { requestLogLines, textRequestsPerAudioHour } from '../../bench/lib/text-requests.ts';

const entry = (endpoint: string, status = 200, code?: number): LogEntry => ({
  time: '2026-11-23T00:00:00.000Z',
  method: 'POST',
  endpoint,
  status,
  ...(code !== undefined ? { code } : {}),
  ms: 1,
});

describe('textRequestsPerAudioHour', () => {
  it('counts text requests per audio hour by endpoint, refusals included, recognition and tokens left out', () => {
    const entries = [
      ...Array.from({ length: 600 }, () => entry('/api/dev/nlp/v1/sentiment')),
      ...Array.from({ length: 580 }, () => entry('/api/dev/nlp/v1/sentence_type')),
      entry('/api/dev/nlp/v1/sentence_type', 429, 99997),
      ...Array.from({ length: 40 }, () => entry('/api/dev/nlp/v1/ne')),
      ...Array.from({ length: 60 }, () => entry('/api/dev/nlp/beta/remove_filler')),
      entry('/api/dev/nlp/v1/summary'),
      ...Array.from({ length: 5000 }, () => entry('/api/asr/v1/speech_recognition/general')),
      entry('/v1/oauth/accesstokens', 201),
    ];
    // Two audio hours.
    const figures = textRequestsPerAudioHour(entries, 7200);
    expect(figures.byEndpoint).toEqual({
      sentiment: 300,
      sentence_type: 291,
      remove_filler: 30,
      ne: 20,
      summary: 1,
    });
    expect(figures.total).toBe(641);
    expect(figures.refused).toBe(1);
    expect(figures.withinBudget).toBe(true);
    expect(figures.redactionShareOfBefore).toBeCloseTo(20 / 1324, 3);
    expect(textRequestsPerAudioHour(entries, 3600 * 0.9).withinBudget).toBe(false);
  });

  it("reads a pass's own lines of the log", () => {
    const dir = mkdtempSync(join(tmpdir(), 'callpipe-text-requests-'));
    try {
      const path = join(dir, 'log.jsonl');
      writeFileSync(
        path,
        [entry('/a'), entry('/b'), entry('/c')].map((e) => JSON.stringify(e)).join('\n') + '\n',
      );
      expect(requestLogLines(path, 1).map((e) => e.endpoint)).toEqual(['/b', '/c']);
      expect(requestLogLines(join(dir, 'missing.jsonl'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
