/**
 * The CLI's public names (issue 12): `concurrency` end to end with `window` still read, the deprecated
 * spellings still accepted with a one-line notice, and `partial` shown and counted apart from `failed`.
 * No stack: the CLI is run only where it answers before connecting.
 */
import { describe, expect, it } from 'vitest';
import { backfillInputSchema, DEFAULT_CONCURRENCY, type BackfillRequest } from '../../schemas/backfill.ts';
import { currentBackfillInput, type BackfillProgress } from '../../workflows/backfill.ts';
import { outcomeDetail, outcomeExitCode, outcomeTally } from '../../cli/commands/process.ts';
import { progressLine } from '../../cli/commands/backfill.ts';
import type { ProcessRecordingResult } from '../../workflows/process-recording.ts';
import { callpipe as run } from '../helpers/cli.ts';
import { callSpecOf } from '../../schemas/call-spec.ts';
import { loadConfig } from '../../schemas/config-loader.ts';

const callpipe = (...args: string[]) => run(args);

const request: BackfillRequest = {
  batchId: 'b-1',
  source: { kind: 'prefix', bucket: 'callpipe', prefix: 'in/' },
  output: { bucket: 'callpipe', prefix: 'results/' },
  spec: callSpecOf(loadConfig({ env: {} }), { bucket: 'callpipe', prefix: 'results/' }),
};

describe('backfill concurrency', () => {
  it('is the input field, defaulted by the schema', () => {
    expect(backfillInputSchema.parse({ ...request, concurrency: 7 }).concurrency).toBe(7);
    expect(backfillInputSchema.parse(request).concurrency).toBe(DEFAULT_CONCURRENCY);
  });

  it('is read from `window` (0.1 inputs, schedules created before), which it wins over', () => {
    const parsed = backfillInputSchema.parse({ ...request, window: 3 });
    expect(parsed.concurrency).toBe(3);
    expect(parsed).not.toHaveProperty('window');
    expect(backfillInputSchema.parse({ ...request, window: 3, concurrency: 5 }).concurrency).toBe(5);
    expect(() => backfillInputSchema.parse({ ...request, window: 0 })).toThrow();
  });

  it('is read from `window` by the workflow too (a running batch started before the rename)', () => {
    const { concurrency: _c, ...current } = backfillInputSchema.parse(request);
    const migrated = currentBackfillInput({ ...current, window: 4 });
    expect(migrated.concurrency).toBe(4);
    expect(migrated).not.toHaveProperty('window');
    expect(currentBackfillInput({ ...current, concurrency: 6, window: 4 }).concurrency).toBe(6);
    expect(() => currentBackfillInput(current)).toThrow(/no concurrency/);
  });
});

describe('partial calls', () => {
  const done: ProcessRecordingResult = { callId: 'a', status: 'done', resultKey: 'results/a/result.json' };
  const partial: ProcessRecordingResult = {
    callId: 'b',
    status: 'partial',
    resultKey: 'results/b/result.json',
    stepFailures: [{ step: 'summary', reason: 'rate limited' }],
  };
  const failed: ProcessRecordingResult = {
    callId: 'c',
    status: 'failed',
    stage: 'probe',
    reason: 'not audio',
  };

  it('are shown with the failed steps, counted apart, and are not failures for the exit code', () => {
    expect(outcomeDetail(partial)).toBe('results/b/result.json (summary failed)');
    expect(outcomeDetail(failed)).toBe('probe: not audio');
    expect(outcomeDetail({ callId: 'd', status: 'failed', reason: 'terminated' })).toBe('terminated');
    expect(outcomeTally([done, partial, partial])).toBe('3 calls: 1 done, 2 partial');
    expect(outcomeExitCode([done, partial, { callId: 'e', status: 'skipped' }])).toBe(0);
    expect(outcomeExitCode([done, partial, failed])).toBe(1);
  });

  it('settle a batch in its progress line', () => {
    const p: BackfillProgress = {
      batchId: 'b-1',
      phase: 'done',
      listed: 2,
      filtered: 0,
      skipped: 0,
      missing: 0,
      started: 2,
      done: 1,
      partial: 1,
      failed: 0,
      cancelled: 0,
      audioSeconds: 60,
      running: 0,
      audioHours: 0.017,
      run: 0,
      pages: 1,
      listingFinished: true,
      maxHistoryEvents: 0,
    };
    const line = progressLine(p);
    expect(line).toContain('done 1 partial 1 failed 0');
    expect(line).toMatch(/^\[#{30}\]/);
  });
});

describe('deprecated spellings', () => {
  it('schedule --timezone still works, with one line saying to write --time-zone', async () => {
    const args = ['schedule', 'nightly', '--cron', '0 3 * * *', '--source', 's3://b/{yyyy}/{mm}/{dd}/'];
    const old = await callpipe(...args, '--timezone', 'Nowhere/Atlantis');
    expect(old.code).toBe(2);
    expect(old.stderr).toMatch(/^callpipe schedule: --timezone is deprecated; use --time-zone/);
    // Accepted: its value is what was validated.
    expect(old.stderr).toContain("unknown time zone 'Nowhere/Atlantis'");
    const current = await callpipe(...args, '--time-zone', 'Nowhere/Atlantis');
    expect(current.stderr).not.toContain('deprecated');
    expect(current.stderr).toContain("unknown time zone 'Nowhere/Atlantis'");
    expect((await callpipe(...args, '--time-zone', 'UTC', '--timezone', 'UTC')).stderr).toMatch(
      /give --time-zone once/,
    );
  });

  it('process waits by default: --detach returns at once, and contradicts the old --wait', async () => {
    const both = await callpipe('process', 'x.wav', '--wait', '--detach');
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--wait and --detach contradict/);
    const local = await callpipe('process', 'x.wav', '--detach', '--out', 'some-dir');
    expect(local.stderr).toMatch(/--out <dir> .* not with --detach/);
  });
});
