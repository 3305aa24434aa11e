/**
 * `callpipe forget` says where it is and shows calls as they are looked up (issue 41, finding 5), on the
 * real stack: a dry run over 40 call ids prints a progress line on stderr every tenth of them and each
 * call's listing line on stdout as soon as it is known (the first before the lookup ends, as the lines of
 * both streams written to one file show), in the order asked; without a terminal and without --yes it
 * refuses before looking anything up.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  const dir = mkdtempSync(join(tmpdir(), 'callpipe-forget-progress-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
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
  });

  it('shows each call as it is looked up, between the progress lines', async () => {
    // stdout and stderr into one file: the order of the lines is the order the command wrote them.
    const path = join(dir, 'merged.txt');
    const fd = openSync(path, 'w');
    const child = spawn(process.execPath, [CALLPIPE_BIN, 'forget', ...ids, '--out', out, '--dry-run'], {
      env: { ...process.env, ...inject('stackEnv') },
      stdio: ['ignore', fd, fd],
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    closeSync(fd);
    const lines = readFileSync(path, 'utf8').split('\n');
    expect(code, lines.join('\n')).toBe(0);
    // Each call between the progress lines of its tenth: shown as looked up, not all at the end.
    const at = (id: string) => lines.findIndex((l) => l.startsWith(`${id} `));
    for (const [n, id] of [
      [4, ids[3]!],
      [8, ids[7]!],
      [40, ids[39]!],
    ] as const) {
      const progress = lines.indexOf(`forget: looked up ${n} of 40 calls`);
      expect(at(id)).toBeGreaterThan(-1);
      expect(at(id), id).toBeLessThan(progress);
      expect(at(ids[n] ?? 'none'), ids[n]).toSatisfy((i: number) => i === -1 || i > progress);
    }
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
