/**
 * A child process of the local stack: started with its output in a log file, health-checked, and stopped
 * with SIGTERM then SIGKILL. Each child leads its own process group, so a stop reaches what it started too
 * (ffmpeg under the workers).
 *
 * A child never outlives the process that started it, however that one ends: SIGTERM or
 * Ctrl-C stop the children in order (`stop()`); for SIGKILL, a crash or a closed terminal, where nothing of
 * ours runs any more, two watches that need no help from the dying parent:
 * - the kernel's parent-death signal: children are started through util-linux's `setpriv --pdeathsig
 *   SIGTERM`, which sets it and execs the program (same pid, no extra process), so the Temporal CLI and
 *   SeaweedFS's `weed`, which know nothing of us, get SIGTERM the moment the parent dies (the kernel ties
 *   it to the thread that spawned the child: start the stack from a process's main thread, as every caller
 *   does, never from a worker thread that may end first);
 * - a pipe on stdin that only the parent holds open: our own Node children (workers, emulator) stop when
 *   it reaches end of file (`workers/parent-watch.ts`), also where there is no `setpriv`.
 * Children write their output straight to the log file rather than through the parent, so a dead parent
 * costs them no broken pipe, and nothing is lost from the log.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { STOP_WITH_PARENT_VARIABLE } from '../../workers/parent-watch.ts';
import { WATCHDOG_EXIT_CODE } from '../../workers/exit-codes.ts';
import { childEnv } from '../../schemas/child-env.ts';

/**
 * The file-mode mask children start with: what the stack's servers write under CALLPIPE_HOME (databases,
 * stored objects, logs) is readable by the user alone.
 */
const PRIVATE_UMASK = 0o077;

/** How a child ended: its exit code, or the signal that killed it; `requested` when `stop()` asked it to. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
  requested: boolean;
}

/** "exited with code 3" or "was killed by SIGKILL"; a worker's own reason when its exit code gives one. */
export function describeExit(status: Pick<ExitStatus, 'code' | 'signal'>): string {
  if (status.signal) return `was killed by ${status.signal}`;
  if (status.code === WATCHDOG_EXIT_CODE)
    return `exited with code ${status.code} (a worker's event-loop watchdog: an activity blocked its event loop; the log names it)`;
  return `exited with code ${status.code}`;
}

/** util-linux's setpriv, where the platform has it (Linux). */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));

export interface ManagedProcessOptions {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  logFile: string;
  /** Resolves true when the service answers; polled until `startTimeoutMs`. Default: always true. */
  healthCheck?: () => Promise<boolean>;
  /** Healthy only once this text appears in the log after this start (e.g. a JSON ready line). */
  readyWhenLogged?: string;
  startTimeoutMs?: number;
  /**
   * Run as this user (through setpriv, when this process is root): PostgreSQL refuses to run as root.
   * The parent-death signal is set after the switch (a change of user clears it).
   */
  user?: string;
  /** Files the program leaves behind where no option moves them: removed once it has exited. */
  removeAfterExit?: string[];
}

/**
 * Signals a child and what it started: each child leads its own process group (`detached`), so the
 * group's id is its pid; a process that is not a group leader gets the signal alone.
 */
export function signalProcessGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** A health check: the URL answers HTTP at all (any status) within a second. */
export async function httpAnswers(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
  await res.arrayBuffer();
  return res.status > 0;
}

export class ManagedProcess {
  private child?: ChildProcess;
  private exited?: Promise<void>;
  private status?: Promise<ExitStatus>;
  private stopRequested = false;
  private logOffset = 0;
  exitCode: number | null = null;

  readonly options: ManagedProcessOptions;
  constructor(options: ManagedProcessOptions) {
    this.options = options;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return !!this.child && this.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the child and waits until it is healthy; `onSpawn` hears its pid at once (the stack records it). */
  async start(onSpawn?: (pid: number) => void): Promise<void> {
    const { name, command, args, env, cwd, logFile } = this.options;
    mkdirSync(dirname(logFile), { recursive: true });
    this.logOffset = existsSync(logFile) ? statSync(logFile).size : 0;
    const log = openSync(logFile, 'a', 0o600);
    const asUser =
      this.options.user && process.getuid?.() === 0
        ? ['--reuid', this.options.user, '--regid', this.options.user, '--init-groups']
        : [];
    const [file, argv] = SETPRIV
      ? [SETPRIV, [...asUser, '--pdeathsig', 'SIGTERM', '--', command, ...args]]
      : [command, args];
    let child: ChildProcess;
    // The child inherits the mask at spawn, which forks synchronously: this process's own is restored at once.
    const umask = process.umask(PRIVATE_UMASK);
    try {
      child = spawn(file, argv, {
        env: { ...(env ?? childEnv()), [STOP_WITH_PARENT_VARIABLE]: 'stdin' },
        cwd,
        // stdin: the parent-watch pipe, never written, closed by the kernel when the parent dies.
        stdio: ['pipe', log, log],
        detached: true,
      });
    } finally {
      process.umask(umask);
      closeSync(log);
    }
    this.child = child;
    this.exitCode = null;
    this.stopRequested = false;
    this.status = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitCode = code ?? (signal ? 128 : 0);
        for (const path of this.options.removeAfterExit ?? []) rmSync(path, { force: true });
        resolve({ code, signal, requested: this.stopRequested });
      });
      child.once('error', () => resolve({ code: null, signal: null, requested: this.stopRequested }));
    });
    this.exited = this.status.then(() => {});
    if (child.pid !== undefined) onSpawn?.(child.pid);
    const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));

    const deadline = Date.now() + (this.options.startTimeoutMs ?? 60_000);
    while (Date.now() < deadline) {
      const error = await Promise.race([spawnError, sleep(0).then(() => undefined)]);
      if (error) throw new Error(`${name}: could not start ${command}: ${error.message}`);
      if (this.exitCode !== null) {
        throw new Error(
          `${name} exited with code ${this.exitCode} while starting; last log lines:\n${this.tail()}`,
        );
      }
      if (await this.healthy()) return;
      await sleep(200);
    }
    await this.stop();
    throw new Error(
      `${name} did not become healthy within ${this.options.startTimeoutMs ?? 60_000} ms; log: ${logFile}\n${this.tail()}`,
    );
  }

  /** Resolves when the child of the latest start ends, however it ends. */
  exitStatus(): Promise<ExitStatus> {
    if (!this.status) throw new Error(`${this.options.name} was never started`);
    return this.status;
  }

  private async healthy(): Promise<boolean> {
    const { readyWhenLogged, healthCheck } = this.options;
    if (readyWhenLogged !== undefined && !this.logSinceStart().includes(readyWhenLogged)) return false;
    return healthCheck ? await healthCheck().catch(() => false) : true;
  }

  /** What the child logged since this start (the log file is appended to across starts). */
  private logSinceStart(): string {
    let fd: number | undefined;
    try {
      fd = openSync(this.options.logFile, 'r');
      const size = statSync(this.options.logFile).size - this.logOffset;
      if (size <= 0) return '';
      const buffer = Buffer.alloc(size);
      const read = readSync(fd, buffer, 0, size, this.logOffset);
      return buffer.subarray(0, read).toString('utf8');
    } catch {
      return '';
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /** Last lines of the log, for error messages. */
  tail(lines = 15): string {
    try {
      return readFileSync(this.options.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid) signalProcessGroup(pid, signal);
  }

  /** SIGKILL at once, as a crash would (fault drills). */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.signalGroup('SIGKILL');
    await this.exited;
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.child || !this.running) return;
    this.stopRequested = true;
    this.signalGroup('SIGTERM');
    const done = await Promise.race([this.exited!.then(() => true), sleep(graceMs).then(() => false)]);
    if (!done) {
      this.signalGroup('SIGKILL');
      await this.exited;
    }
  }
}
