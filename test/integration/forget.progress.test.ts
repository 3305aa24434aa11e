/**
 * `callpipe forget` says where it is and shows calls as they are looked up (issue 41, finding 5), on the
 * real stack: a dry run over 40 call ids prints a progress line on stderr every tenth of them and each
 * call's listing line on stdout as soon as it is known (the first before the lookup ends), in the order
 * asked; without a terminal and without --yes it refuses before looking anything up.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { inject } from 'vitest';
import { CALLPIPE_BIN } from '../helpers/cli.ts';
import { runId } from '../helpers/run-id.ts';
import { stackConfig } from '../helpers/stack.ts';

/** Runs the command, recording stdout and stderr lines in the order they arrive. */
async function runLogged(args: string[]): Promise<{ code: number | null; events: [string, string][] }> {
  const child = spawn(process.execPath, [CALLPIPE_BIN, ...args], {
    env: { ...process.env, ...inject('stackEnv') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events: [string, string][] = [];
  for (const [name, stream] of [
    ['stdout', child.stdout],
    ['stderr', child.stderr],
  ] as const) {
    let rest = '';
    stream.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop()!;
      for (const line of lines) events.push([name, line]);
    });
  }
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, events };
}

describe('callpipe forget on many calls', () => {
  const run = runId();
  const out = `s3://${stackConfig().s3.bucket}/forget-progress-${run}/`;
  const ids = Array.from({ length: 40 }, (_, i) => `progress-${run}-${String(i).padStart(2, '0')}`);

  it('prints progress and each call as it is looked up', async () => {
    const { code, events } = await runLogged(['forget', ...ids, '--out', out, '--dry-run']);
    expect(code, events.map((e) => e.join(': ')).join('\n')).toBe(0);
    const stderr = events.filter(([s]) => s === 'stderr').map(([, l]) => l);
    expect(stderr).toEqual([
      'forget: looking up what callpipe holds of 40 calls…',
      ...[4, 8, 12, 16, 20, 24, 28, 32, 36, 40].map((n) => `forget: looked up ${n} of 40 calls`),
    ]);
    const stdout = events.filter(([s]) => s === 'stdout').map(([, l]) => l);
    expect(stdout[0]).toBe('would erase (dry run, nothing erased):');
    expect(stdout[1]).toMatch(/^call {2,}what {2,}object$/);
    // Every call in the order asked, its columns aligned with the header's.
    expect(stdout.slice(2)).toEqual(ids.map((id) => `${id}  nothing held`));
    // Streamed: the first call was shown before the last was looked up.
    const first = events.findIndex(([s, l]) => s === 'stdout' && l.startsWith(ids[0]!));
    const done = events.findIndex(([, l]) => l === 'forget: looked up 40 of 40 calls');
    expect(first).toBeGreaterThan(-1);
    expect(first).toBeLessThan(done);
  });

  it('without a terminal or --yes refuses before looking anything up', async () => {
    const { code, events } = await runLogged(['forget', ...ids, '--out', out]);
    expect(code).toBe(2);
    expect(events).toEqual([
      [
        'stderr',
        'callpipe: forget: no terminal to confirm the erasure on; nothing was erased. Pass --yes to erase without asking',
      ],
    ]);
  });
});
