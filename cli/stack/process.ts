/**
 * A child process of the local stack: started with its output in a log file, health-checked, and stopped
 * with SIGTERM then SIGKILL. Children get their own process group so a stop reaches their children too
 * (no orphan `weed` or `temporal` sub-process survives `callpipe up`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ManagedProcessOptions {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  logFile: string;
  /** Resolves true when the service answers; polled until `startTimeoutMs`. */
  healthCheck: () => Promise<boolean>;
  startTimeoutMs?: number;
  /** Called with each stdout line (e.g. to read a JSON ready line). */
  onStdoutLine?: (line: string) => void;
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
  exitCode: number | null = null;

  constructor(readonly options: ManagedProcessOptions) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return !!this.child && this.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<void> {
    const { name, command, args, env, cwd, logFile, healthCheck } = this.options;
    mkdirSync(dirname(logFile), { recursive: true });
    const log = createWriteStream(logFile, { flags: 'a' });
    const child = spawn(command, args, {
      env: env ?? process.env,
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.child = child;
    this.exitCode = null;
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      log.write(chunk);
      if (!this.options.onStdoutLine) return;
      buffered += chunk.toString('utf8');
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        this.options.onStdoutLine(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    });
    child.stderr!.pipe(log);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitCode = code ?? (signal ? 128 : 0);
        resolve();
      });
      child.once('error', () => resolve());
    });
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
      if (await healthCheck().catch(() => false)) return;
      await sleep(200);
    }
    await this.stop();
    throw new Error(
      `${name} did not become healthy within ${this.options.startTimeoutMs ?? 60_000} ms; log: ${logFile}\n${this.tail()}`,
    );
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
    if (!pid) return;
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

  /** SIGKILL at once, as a crash would (fault drills). */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.signalGroup('SIGKILL');
    await this.exited;
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.child || !this.running) return;
    this.signalGroup('SIGTERM');
    const done = await Promise.race([this.exited!.then(() => true), sleep(graceMs).then(() => false)]);
    if (!done) {
      this.signalGroup('SIGKILL');
      await this.exited;
    }
  }
}
