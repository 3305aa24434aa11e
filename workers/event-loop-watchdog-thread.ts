/**
 * The watch thread of `event-loop-watchdog.ts` (read that first). It keeps running while the main thread
 * is blocked: it reads the main thread's time stamp from shared memory and the running activities from
 * the messages the main thread sent when they started.
 */
import { Session } from 'node:inspector';
import { parentPort, workerData } from 'node:worker_threads';
import {
  blockedBoundMs,
  EXIT_HOOK,
  writeLogLine,
  type ActivityReport,
  type WatchdogMessage,
  type WatchdogThreadData,
} from './event-loop-watchdog.ts';

const data = workerData as WatchdogThreadData;
const stamp = new BigInt64Array(data.stamp);
const running = new Map<number, ActivityReport>();

parentPort!.on('message', (message: WatchdogMessage) => {
  if (message.type === 'start') running.set(message.key, message.activity);
  else running.delete(message.key);
});

/** Asks the main thread, through the inspector's interrupt, to report where it is and exit. */
function askMainThreadToExit(): void {
  const session = new Session();
  session.connectToMainThread();
  session.post('Runtime.evaluate', {
    expression: `globalThis[Symbol.for(${JSON.stringify(EXIT_HOOK.description)})]()`,
  });
}

const watch = setInterval(() => {
  const lastStamp = Number(Atomics.load(stamp, 0));
  const blockedMs = Date.now() - lastStamp;
  const boundMs = blockedBoundMs(running.values(), data.fallbackBoundMs);
  if (blockedMs <= boundMs) return;
  clearInterval(watch);
  writeLogLine(data.fd, {
    level: 'ERROR',
    msg: 'event loop watchdog: the event loop is blocked; stopping the worker process for a restart',
    blockedSince: new Date(lastStamp).toISOString(),
    blockedMs,
    boundMs,
    running: [...running.values()],
    exitCode: data.exitCode,
  });
  try {
    askMainThreadToExit();
  } catch (err) {
    writeLogLine(data.fd, {
      level: 'ERROR',
      msg: 'event loop watchdog: cannot reach the main thread',
      error: (err as Error).message,
    });
  }
  // Blocked outside JavaScript (a native call), the main thread never serves the interrupt.
  setTimeout(() => {
    writeLogLine(data.fd, {
      level: 'ERROR',
      msg: 'event loop watchdog: the main thread did not exit; killing the worker process',
      exitGraceMs: data.exitGraceMs,
    });
    process.kill(process.pid, 'SIGKILL');
  }, data.exitGraceMs);
}, data.checkMs);
