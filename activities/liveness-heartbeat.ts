/**
 * Liveness heartbeats (the production topology's drill): an activity scheduled with a heartbeat
 * timeout heartbeats while it runs, every third of that timeout, whether or not it reports progress. A
 * worker process that dies mid-activity (SIGKILL, a lost node) then has its activity retried elsewhere
 * after the heartbeat timeout (30 s) instead of after its start-to-close timeout (bench/README.md,
 * "Figures behind the code"). For the short, non-resuming activities of the media and
 * text queues only: their heartbeats carry no details anyone reads, so these empty ones overwrite nothing.
 * Recognition sessions and the batch's activities heartbeat on their own, with their resume points.
 */
import { activityContext } from './activity-context.ts';

type AnyActivity = (...args: never[]) => Promise<unknown>;

/** Never more often than this, whatever the timeout (the SDK throttles what reaches the server anyway). */
const MIN_INTERVAL_MS = 1000;

/** The same activities, each heartbeating while it runs when its schedule set a heartbeat timeout. */
export function withLivenessHeartbeat<T extends Record<string, AnyActivity>>(activities: T): T {
  const wrapped: Record<string, AnyActivity> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      const ctx = activityContext();
      const timeoutMs = ctx?.info.heartbeatTimeoutMs;
      if (!ctx || !timeoutMs) return fn(...args);
      const timer = setInterval(() => ctx.heartbeat(), Math.max(MIN_INTERVAL_MS, timeoutMs / 3));
      timer.unref();
      try {
        return await fn(...args);
      } finally {
        clearInterval(timer);
      }
    };
  }
  return wrapped as T;
}
