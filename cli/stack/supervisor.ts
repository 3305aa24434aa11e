/**
 * The foreground stack's supervision (`callpipe up`): the moment a part of the stack ends without being
 * asked to (the S3 server killed, Temporal crashed, the workers stopped by their watchdog), the user is
 * told which part, how it ended (exit code or signal) and the last lines of its log, and the part is
 * started again. A part that keeps dying is not restarted for ever: past {@link MAX_RESTARTS} restarts
 * within {@link RESTART_WINDOW_MS} the supervisor gives up, and `up` stops the whole stack and exits
 * non-zero with the reason, rather than run on with a piece missing.
 */
import { describeExit, type ExitStatus } from './process.ts';

/** Restarts of one part allowed within {@link RESTART_WINDOW_MS}; one more death stops the stack. */
export const MAX_RESTARTS = 3;
export const RESTART_WINDOW_MS = 10 * 60_000;
/** Log lines shown with a death: enough for a server's last error. */
const TAIL_LINES = 12;

/** One process of the stack as the supervisor sees it (cli/stack/process.ts ManagedProcess). */
interface SupervisedProcess {
  readonly pid: number | undefined;
  readonly options: { name: string; logFile: string };
  exitStatus(): Promise<ExitStatus>;
  tail(lines?: number): string;
}

/** What the supervisor watches: the stack's current processes by part, and how to start one again. */
export interface SupervisedStack {
  processes: Record<string, SupervisedProcess | undefined>;
  restart(part: string): Promise<SupervisedProcess>;
}

export interface SupervisorOptions {
  /** Lines for the user (stderr): deaths, restarts. */
  notice: (line: string) => void;
  maxRestarts?: number;
  windowMs?: number;
  now?: () => number;
}

export interface Supervisor {
  /** Resolves with the reason once the supervisor gave up on a part (the stack must stop). */
  gaveUp: Promise<string>;
  /** Stops watching (the stack is being stopped on purpose). */
  stop(): void;
}

/** Starts watching every part of `stack` that runs now. */
export function superviseStack(stack: SupervisedStack, options: SupervisorOptions): Supervisor {
  const { notice, maxRestarts = MAX_RESTARTS, windowMs = RESTART_WINDOW_MS, now = Date.now } = options;
  let stopped = false;
  let giveUp!: (reason: string) => void;
  const gaveUp = new Promise<string>((resolve) => (giveUp = resolve));
  const restarts = new Map<string, number[]>();

  const fail = (reason: string) => {
    if (stopped) return;
    stopped = true;
    giveUp(reason);
  };

  async function watch(part: string, proc: SupervisedProcess): Promise<void> {
    for (;;) {
      const status = await proc.exitStatus();
      if (stopped) return;
      const name = proc.options.name;
      if (status.requested) {
        // Stopped on purpose (a restart of the workers by the stack's owner): watch what replaces it.
        const next = stack.processes[part];
        if (!next || next === proc) return;
        proc = next;
        continue;
      }
      const tail = proc.tail(TAIL_LINES);
      notice(
        `callpipe up: ${name} (pid ${proc.pid}) ${describeExit(status)}; last lines of ${proc.options.logFile}:` +
          (tail ? `\n${tail.replace(/^/gm, '  ')}` : ' (empty)'),
      );
      const recent = (restarts.get(part) ?? []).filter((t) => now() - t < windowMs);
      if (recent.length >= maxRestarts) {
        return fail(
          `${name} ${describeExit(status)} after ${recent.length} restarts within ${Math.round(windowMs / 60_000)} minutes; stopping the stack (log: ${proc.options.logFile})`,
        );
      }
      restarts.set(part, [...recent, now()]);
      notice(`callpipe up: restarting ${name} (restart ${recent.length + 1} of at most ${maxRestarts})…`);
      try {
        proc = await stack.restart(part);
      } catch (err) {
        return fail(`${name} could not be restarted: ${(err as Error).message}; stopping the stack`);
      }
      if (stopped) return;
      notice(`callpipe up: ${name} is running again (pid ${proc.pid})`);
    }
  }

  for (const [part, proc] of Object.entries(stack.processes)) {
    if (proc) watch(part, proc).catch((err: unknown) => fail(`${part}: ${(err as Error).message}`));
  }
  return {
    gaveUp,
    stop() {
      stopped = true;
    },
  };
}
