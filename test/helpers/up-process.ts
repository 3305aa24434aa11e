/**
 * `callpipe up` as users run it, for tests: a separate process with its own CALLPIPE_HOME and free ports,
 * and the /proc reading that tells which of its children are still alive.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readProcStat } from '../../cli/stack/proc-stat.ts';
import { setTimeout as sleep } from 'node:timers/promises';

const CLI = fileURLToPath(new URL('../../bin/callpipe.js', import.meta.url));

/** Every descendant pid of `pid`, read from /proc. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    // Undefined when the process ended while listing.
    const ppid = Number(readProcStat(`/proc/${entry}/stat`)?.field(4));
    if (ppid) children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie (state, field 3, Z) is dead for our purposes; so is one gone since the signal.
    const state = readProcStat(`/proc/${pid}/stat`)?.field(3);
    return state !== undefined && state !== 'Z';
  } catch {
    return false;
  }
}

/** The pids of `pids` still alive once they stopped, or after `patienceMs` (a liveness bound, not a speed). */
export async function survivorsAfter(pids: number[], patienceMs = 60_000): Promise<number[]> {
  const deadline = Date.now() + patienceMs;
  while (pids.some(alive) && Date.now() < deadline) await sleep(200);
  return pids.filter(alive);
}

/** `up --json`, or with `json: false` as a person runs it (progress and the addresses as text). */
export function upProcess(
  home: string,
  extraEnv: Record<string, string> = {},
  args: string[] = [],
  { json = true } = {},
): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [CLI, 'up', ...(json ? ['--json'] : []), ...args], {
    env: {
      ...process.env,
      CALLPIPE_HOME: home,
      CALLPIPE_TEMPORAL_PORT: '0',
      CALLPIPE_TEMPORAL_UI_PORT: '0',
      CALLPIPE_S3_PORT: '0',
      CALLPIPE_EMULATOR_PORT: '0',
      CALLPIPE_METRICS_PORT: '0',
      CALLPIPE_EMULATOR_SPEED: '100',
      ...extraEnv,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/**
 * The addresses once healthy: the line `up --json` prints, or (text mode) those its stack.json records once
 * it says it is up. `stderr()` is everything it wrote to stderr so far.
 */
export function upReady(
  up: ChildProcessWithoutNullStreams,
  home: string,
): { addresses: Promise<Record<string, string>>; stderr: () => string } {
  let stderr = '';
  up.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const addresses = new Promise<Record<string, string>>((resolve, reject) => {
    let out = '';
    up.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.startsWith('{') && out.includes('\n')) {
        resolve(JSON.parse(out.split('\n')[0]!) as Record<string, string>);
      } else if (out.includes('Press Ctrl-C to stop.')) {
        const record = JSON.parse(readFileSync(join(home, 'stack.json'), 'utf8')) as {
          addresses: Record<string, string>;
        };
        resolve(record.addresses);
      }
    });
    up.once('exit', (code) => reject(new Error(`callpipe up exited early with ${code}: ${stderr}`)));
  });
  return { addresses, stderr: () => stderr };
}
