/**
 * A manifest's check holds what it must of each row, not the rows (issue 41, findings 4 and 5): one
 * recording under two call ids is refused naming both lines (it would be recognized and paid for twice),
 * as two recordings under one call id were; and the check of a 500,001-row manifest, streamed to it,
 * runs in a process whose JavaScript heap may not pass 160 MiB (it held over 500 MB when the rows were
 * kept), refusing the last row as beyond the bound.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { ManifestError, parseManifest } from '../../activities/backfill/manifest.ts';
import { MANIFEST_LIMITS } from '../../schemas/manifest.ts';

const refusal = (csv: string) =>
  parseManifest(csv, 'b').then(
    () => {
      throw new Error('accepted');
    },
    (err: unknown) => err as ManifestError,
  );

describe('manifest rows', () => {
  it('refuses one recording under two call ids, naming both lines', async () => {
    const err = await refusal(
      'uri,call_id\ns3://calls/a.wav,c-1\ns3://calls/b.wav,c-2\ns3://calls/a.wav,c-3\n',
    );
    expect(err).toBeInstanceOf(ManifestError);
    expect(err.message).toBe(
      'manifest refused: line 4: the recording of line 2, under another call id (it would be recognized and paid for twice: keep one row)',
    );
  });

  it('refuses a recording given once with a call id and once without (its derived one)', async () => {
    const err = await refusal('key,call_id\nin/a.wav,c-1\nin/a.wav,\n');
    expect(err.message).toMatch(/^manifest refused: line 3: the recording of line 2, under another call id/);
  });

  it('still takes an exact repeat once and names every problem by its line', async () => {
    const entries = await parseManifest('key,call_id\nin/a.wav,c-1\nin/b.wav,c-2\nin/a.wav,c-1\n', 'b');
    expect(entries.map((e) => [e.line, e.duplicateOf])).toEqual([
      [2, undefined],
      [3, undefined],
      [4, 2],
    ]);
    const err = await refusal(
      'key,call_id\nin/a.wav,c-1\nin/a.wav,c-2\nin/b.wav,c-1\nin/c.wav,c-3\nin/c.wav,c-4\n',
    );
    expect(err.problems).toEqual([
      'line 3: the recording of line 2, under another call id (it would be recognized and paid for twice: keep one row)',
      "line 4: call id of line 2, for another recording (a call id names one call's results: give each recording its own)",
      'line 6: the recording of line 5, under another call id (it would be recognized and paid for twice: keep one row)',
    ]);
  });

  it('checks a 500,001-row manifest within a 160-MiB heap', async () => {
    const rows = MANIFEST_LIMITS.maxRows + 1;
    const manifest = new URL('../../activities/backfill/manifest.ts', import.meta.url).href;
    // The rows are made as they are read (nothing of the file is held by the child but what the check keeps).
    const script = `
        import { readManifest } from ${JSON.stringify(manifest)};
        async function* rows() {
          yield 'key,agent,started_at,queue\\n';
          let chunk = '';
          for (let i = 0; i < ${rows}; i++) {
            chunk += 'recordings/2026/11/01/call-' + i.toString(36) + '-abcdef.wav,agent-' + (i % 50) + ',2026-11-01T10:00:00Z,billing\\n';
            if (chunk.length > 65536) { yield chunk; chunk = ''; }
          }
          yield chunk;
        }
        const outcome = await readManifest(rows(), 'b').then((r) => 'accepted ' + r.rows, (e) => e.message);
        console.log(outcome);`;
    const child = spawn(process.execPath, ['--max-old-space-size=160', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr.slice(-2000)).toBe(0);
    expect(stdout.trim()).toBe(
      `manifest refused: more than 500,000 rows (line ${rows + 1} is row 500,001): split the manifest into several`,
    );
  }, 240_000);
});
