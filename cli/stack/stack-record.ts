/**
 * `<CALLPIPE_HOME>/stack.json`: how other commands find a running local stack (docs/design.md: through
 * CALLPIPE_HOME), and how the next `callpipe up` finds what a killed one left behind. It is written as soon
 * as the stack starts and again as each child is spawned, so even an `up` killed half-way through its start
 * leaves the pids of everything it started; the addresses appear once the whole stack is healthy.
 *
 * A pid alone is not an identity (pids are reused): every pid is recorded with the process's start time
 * (`/proc/<pid>/stat`, field 22), and a process is only signalled when both still match.
 */
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readProcStat } from './proc-stat.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { StackAddresses } from './stack.ts';
import { signalProcessGroup } from './process.ts';
import { LOCAL_S3_SECRET_KEY } from '../../schemas/config.ts';

/** One process of the stack: its pid and start time (clock ticks after boot; absent where /proc is not). */
export interface RecordedProcess {
  name: string;
  pid: number;
  startTicks?: string;
}

/**
 * Where a secret of the stack comes from, recorded in place of its value (no secret is ever written under
 * CALLPIPE_HOME): `local-stack`, the stack's own fixed local credential (its S3 server's key); `caller`,
 * the configuration of whichever process reads the record (its environment, config file or default, as
 * for `up` itself): a command run with another client secret than `up`'s uses its own.
 */
export type SecretSource = 'local-stack' | 'caller';

/** The values of `local-stack` secrets, by variable. */
const LOCAL_STACK_SECRETS: Record<string, string> = { CALLPIPE_S3_SECRET_ACCESS_KEY: LOCAL_S3_SECRET_KEY };

/**
 * What `stack.json` holds. `addresses` and `env` are there once the stack is ready; `env` holds no secret
 * variable, `secrets` says where each comes from.
 */
export interface StackRecord {
  /** The `callpipe up` (or test, or benchmark) process that owns the stack. */
  pid: number;
  startTicks?: string;
  processes: RecordedProcess[];
  addresses?: StackAddresses;
  env?: Record<string, string>;
  secrets?: Record<string, SecretSource>;
}

/** The record's variables with its `local-stack` secrets filled in; `caller` ones are the reader's own. */
export function recordedStackEnv(record: StackFile): Record<string, string> {
  const local = Object.entries(record.secrets ?? {})
    .filter(([name, source]) => source === 'local-stack' && LOCAL_STACK_SECRETS[name] !== undefined)
    .map(([name]) => [name, LOCAL_STACK_SECRETS[name]!]);
  return { ...record.env, ...Object.fromEntries(local) };
}

/** A ready stack, as commands that talk to it need it. */
export type StackFile = StackRecord & { addresses: StackAddresses; env: Record<string, string> };

export function stackFile(home: string): string {
  return join(home, 'stack.json');
}

/** The process's start time from /proc, or undefined where there is no /proc (or no such process). */
export function processStartTicks(pid: number): string | undefined {
  return readProcStat(`/proc/${pid}/stat`)?.field(22);
}

/** True while the recorded process runs (a zombie counts as gone) and is the one that was recorded. */
export function isRecordedProcessAlive(p: { pid: number; startTicks?: string }): boolean {
  try {
    process.kill(p.pid, 0);
  } catch {
    return false;
  }
  if (existsSync('/proc/self/stat')) {
    // Gone since the signal, or a zombie (state, field 3, Z): not alive.
    const state = readProcStat(`/proc/${p.pid}/stat`)?.field(3);
    if (state === undefined || state === 'Z') return false;
    return p.startTicks === undefined || processStartTicks(p.pid) === p.startTicks;
  }
  return true;
}

export function recordProcess(name: string, pid: number): RecordedProcess {
  const startTicks = processStartTicks(pid);
  return startTicks === undefined ? { name, pid } : { name, pid, startTicks };
}

function readStackRecord(home: string): StackRecord | undefined {
  const file = stackFile(home);
  if (!existsSync(file)) return undefined;
  try {
    const data = JSON.parse(readFileSync(file, 'utf8')) as StackRecord;
    return typeof data.pid === 'number' ? { ...data, processes: data.processes ?? [] } : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the record, readable by the user alone. */
export function writeStackRecord(home: string, record: StackRecord): void {
  const file = stackFile(home);
  writeFileSync(file, JSON.stringify(record, null, 2), { mode: 0o600 });
  chmodSync(file, 0o600);
}

export function removeStackRecord(home: string): void {
  rmSync(stackFile(home), { force: true });
}

/** The running stack recorded under `home`: its owner is alive and it is ready. */
export function readStackFile(home: string): StackFile | undefined {
  const record = readStackRecord(home);
  if (!record || !record.addresses || !record.env) return undefined;
  return isRecordedProcessAlive(record) ? (record as StackFile) : undefined;
}

/** A stack whose owner process is alive, ready or still starting. */
export function liveStackOwner(home: string): number | undefined {
  const record = readStackRecord(home);
  return record && isRecordedProcessAlive(record) ? record.pid : undefined;
}

async function waitGone(processes: RecordedProcess[], ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (processes.some(isRecordedProcessAlive)) {
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
  return true;
}

/**
 * Stops what a stack whose owner died left running under `home` (SIGTERM, then SIGKILL after `graceMs`),
 * and removes its record. Returns one line for the user, or undefined when there was no stale stack.
 * A recorded pid that now belongs to another process (start time differs) is left alone.
 */
export async function stopStaleStack(home: string, graceMs = 10_000): Promise<string | undefined> {
  const record = readStackRecord(home);
  if (!record || isRecordedProcessAlive(record)) return undefined;
  const survivors = record.processes.filter(isRecordedProcessAlive);
  const names = survivors.map((p) => `${p.name} ${p.pid}`).join(', ');
  const owner = `callpipe up (pid ${record.pid})`;
  if (survivors.length === 0) {
    removeStackRecord(home);
    return `a stack in ${home} was not stopped cleanly (${owner} is gone); none of its processes was still running`;
  }
  if (!existsSync('/proc/self/stat')) {
    // Without /proc a pid cannot be told from a reused one: name them rather than signal a stranger.
    removeStackRecord(home);
    return `a stack in ${home} was not stopped cleanly (${owner} is gone); stop what is left of it yourself if still running: ${names}`;
  }
  for (const p of survivors) signalProcessGroup(p.pid, 'SIGTERM');
  let how = 'SIGTERM';
  if (!(await waitGone(survivors, graceMs))) {
    for (const p of survivors.filter(isRecordedProcessAlive)) signalProcessGroup(p.pid, 'SIGKILL');
    await waitGone(survivors, graceMs);
    how = 'SIGKILL';
  }
  const left = survivors.filter(isRecordedProcessAlive);
  if (left.length > 0) {
    throw new Error(
      `a stale stack in ${home} (${owner} is gone) could not be stopped: ${left.map((p) => `${p.name} ${p.pid}`).join(', ')} still run`,
    );
  }
  removeStackRecord(home);
  return `stopped a stale stack in ${home} left by ${owner}: ${names} (${how})`;
}
