/**
 * The workflow of `stuck-worker.ts` (test only): an ordinary activity and one that blocks the worker's
 * event loop, side by side in one worker process.
 */
import { proxyActivities } from '@temporalio/workflow';

interface StuckWorkerActivities {
  ordinaryWork(): Promise<{ attempt: number; pid: number }>;
  blockEventLoop(): Promise<void>;
}

/** Retried as the pipeline's activities are: the attempt lost with a dead process runs again elsewhere. */
const { ordinaryWork } = proxyActivities<StuckWorkerActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 5 },
});

/** Its heartbeat timeout is the watchdog's bound while it runs (the shortest of the running ones). */
const { blockEventLoop } = proxyActivities<StuckWorkerActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '3 seconds',
  retry: { maximumAttempts: 1 },
});

export async function blockedBesideOrdinary(): Promise<{
  ordinary: { attempt: number; pid: number };
  blocked: string;
}> {
  const ordinary = ordinaryWork();
  const blocked = blockEventLoop().then(
    () => 'finished',
    (err: Error) => `failed: ${err.cause instanceof Error ? err.cause.message : err.message}`,
  );
  return { ordinary: await ordinary, blocked: await blocked };
}
