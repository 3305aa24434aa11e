/**
 * The event-loop watchdog of a worker process. Activities share the process's one JavaScript thread with
 * every queue's work: an activity that never yields (a runaway regular expression, a synchronous loop over
 * a huge input) stops every heartbeat, poll answer and timer of the process, and Temporal retries its
 * activities into the same process, where nothing runs any more.
 *
 * The watch lives on a thread of its own (`event-loop-watchdog-thread.ts`), which a blocked main thread
 * cannot stop: the main thread stamps the time into shared memory from a timer, and tells the thread
 * which activities start and end (an activity interceptor). Once the stamp is older than the bound, the
 * thread reports the running activities and since when the loop has been blocked, then asks the main
 * thread, through the inspector's interrupt (which V8 serves even inside a runaway loop or regular
 * expression), to name the activity on its stack and where it is, and to exit with
 * {@link WATCHDOG_EXIT_CODE}; a thread blocked outside JavaScript (a native call) is killed instead.
 * Whoever supervises the process starts it again: the local stack (`cli/stack/process.ts`), Docker's
 * restart policy. Temporal retries the activities it held after their heartbeat timeouts.
 *
 * The bound is the shortest heartbeat timeout among the running activities: blocked that long, the
 * process has lost that activity to Temporal already, and holds every other one hostage. Activities
 * scheduled without a heartbeat timeout count as {@link FALLBACK_BOUND_MS}.
 */
import { Worker } from 'node:worker_threads';
import { writeSync } from 'node:fs';
import type { Context, Info } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { activityContext } from '../activities/activity-context.ts';
import { WATCHDOG_EXIT_CODE } from './exit-codes.ts';

export { WATCHDOG_EXIT_CODE };

/**
 * The bound when no running activity has a heartbeat timeout (or none runs): the longest heartbeat
 * timeout the workflows set (a batch's table compaction).
 */
export const FALLBACK_BOUND_MS = 120_000;

/** How often the main thread stamps the time: far below any bound, cheap enough to never matter. */
const TICK_MS = 500;

/** How long the main thread gets to report and exit once asked, before the process is killed. */
const EXIT_GRACE_MS = 10_000;

/** The global the inspector's evaluation calls on the main thread (a plain name would be a variable). */
export const EXIT_HOOK = Symbol.for('callpipe.eventLoopWatchdog.exit');

/**
 * What a report says of an activity: what Temporal's own activity log lines carry (type, id, workflow,
 * attempt), never its input.
 */
export interface ActivityReport {
  activityType: string;
  activityId: string;
  workflowId?: string;
  workflowRunId?: string;
  workflowType?: string;
  attempt: number;
  taskQueue: string;
  heartbeatTimeoutMs?: number;
  /** When this process started it (the watch's record; the blocked main thread does not know). */
  startedAt?: string;
}

/** Messages from the main thread to the watch. */
export type WatchdogMessage =
  { type: 'start'; key: number; activity: ActivityReport } | { type: 'end'; key: number };

/** What the watch thread is started with. */
export interface WatchdogThreadData {
  stamp: SharedArrayBuffer;
  /** Where report lines go. */
  fd: number;
  fallbackBoundMs: number;
  exitGraceMs: number;
  checkMs: number;
  exitCode: number;
}

export interface EventLoopWatchdogOptions {
  /** Default {@link FALLBACK_BOUND_MS}. */
  fallbackBoundMs?: number;
  /** Default {@link EXIT_GRACE_MS}. */
  exitGraceMs?: number;
  /** Where the report lines go (a file descriptor written synchronously: the process exits next). */
  fd?: number;
}

export interface EventLoopWatchdog {
  /** For every Worker of the process (`interceptors.activity`): tells the watch what runs. */
  readonly interceptor: ActivityInterceptorsFactory;
  /** Ends the watch (graceful shutdown). */
  stop(): Promise<void>;
}

function activityReport(info: Info, startedAt?: Date): ActivityReport {
  return {
    activityType: info.activityType,
    activityId: info.activityId,
    ...(info.workflowExecution
      ? { workflowId: info.workflowExecution.workflowId, workflowRunId: info.workflowExecution.runId }
      : {}),
    ...(info.workflowType ? { workflowType: info.workflowType } : {}),
    attempt: info.attempt,
    taskQueue: info.taskQueue,
    ...(info.heartbeatTimeoutMs ? { heartbeatTimeoutMs: info.heartbeatTimeoutMs } : {}),
    ...(startedAt ? { startedAt: startedAt.toISOString() } : {}),
  };
}

/** The bound for these running activities: the shortest heartbeat timeout, else the fallback. */
export function blockedBoundMs(
  running: Iterable<Pick<ActivityReport, 'heartbeatTimeoutMs'>>,
  fallbackMs: number,
) {
  let bound = fallbackMs;
  for (const activity of running) bound = Math.min(bound, activity.heartbeatTimeoutMs ?? fallbackMs);
  return bound;
}

/** One JSON log line, written at once (the process may exit right after). */
export function writeLogLine(fd: number, fields: Record<string, unknown>): void {
  writeSync(fd, `${JSON.stringify({ time: new Date().toISOString(), ...fields })}\n`);
}

/** Frames of `stack` below the watchdog's own (the hook and the inspector's evaluation). */
function blockedFrames(stack: string | undefined): string[] {
  const frames = (stack ?? '')
    .split('\n')
    .slice(1)
    .map((line) => line.trim());
  const ours = frames.findIndex((line) => /^at <anonymous>:\d+:\d+$/.test(line));
  return frames.slice(ours + 1);
}

/**
 * Runs on the main thread, inside the inspector's interrupt, on top of the blocked code: the activity
 * context there is the blocked activity's, and the stack shows where it is.
 */
function exitHook(fd: number, exitCode: number): () => void {
  return () => {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 30;
    const stack = new Error('blocked here').stack;
    Error.stackTraceLimit = limit;
    const ctx: Context | undefined = activityContext();
    writeLogLine(fd, {
      level: 'ERROR',
      msg: 'event loop watchdog: the blocked activity',
      ...(ctx ? { activity: activityReport(ctx.info) } : { activity: null }),
      stack: blockedFrames(stack),
      exitCode,
    });
    process.exit(exitCode);
  };
}

/** Starts the watch of this process's main thread. One per process. */
export function startEventLoopWatchdog(options: EventLoopWatchdogOptions = {}): EventLoopWatchdog {
  const fd = options.fd ?? 2;
  const stamp = new SharedArrayBuffer(BigInt64Array.BYTES_PER_ELEMENT);
  const now = new BigInt64Array(stamp);
  const tick = () => Atomics.store(now, 0, BigInt(Date.now()));
  tick();
  const ticker = setInterval(tick, TICK_MS);
  ticker.unref();
  (globalThis as Record<symbol, unknown>)[EXIT_HOOK] = exitHook(fd, WATCHDOG_EXIT_CODE);

  const workerData: WatchdogThreadData = {
    stamp,
    fd,
    fallbackBoundMs: options.fallbackBoundMs ?? FALLBACK_BOUND_MS,
    exitGraceMs: options.exitGraceMs ?? EXIT_GRACE_MS,
    checkMs: TICK_MS,
    exitCode: WATCHDOG_EXIT_CODE,
  };
  // The thread writes its lines to the file descriptor itself: its `console` goes through the main thread,
  // which is the one blocked.
  const thread = new Worker(new URL('./event-loop-watchdog-thread.ts', import.meta.url), { workerData });
  // The watch never keeps a process alive that has finished.
  thread.unref();
  thread.on('error', (err) =>
    writeLogLine(fd, { level: 'ERROR', msg: 'event loop watchdog failed', error: err.message }),
  );

  let nextKey = 0;
  const post = (message: WatchdogMessage) => thread.postMessage(message);
  const interceptor: ActivityInterceptorsFactory = (ctx) => ({
    inbound: {
      async execute(input, next) {
        const key = ++nextKey;
        post({ type: 'start', key, activity: activityReport(ctx.info, new Date()) });
        try {
          return await next(input);
        } finally {
          post({ type: 'end', key });
        }
      },
    },
  });

  return {
    interceptor,
    async stop() {
      clearInterval(ticker);
      delete (globalThis as Record<symbol, unknown>)[EXIT_HOOK];
      await thread.terminate();
    },
  };
}
