/**
 * Request pacing of one worker process. Temporal's task-queue rate limit spaces activity *starts*; one
 * sentiment activity then sends a request per utterance, as fast as the client's concurrency allows,
 * and a burst of them is what the service answers with 99997 (spec 01, Limits). Spacing the requests of
 * every step of this process evenly keeps them under the account's rate. Off unless configured.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface RequestPacer {
  /** Resolves when the next request may be sent. */
  acquire(signal?: AbortSignal): Promise<void>;
}

export const unpaced: RequestPacer = { acquire: async () => undefined };

/** Waits `ms` milliseconds unless `signal` aborts first. */
export type Wait = (ms: number, signal?: AbortSignal) => Promise<void>;

const realWait: Wait = async (ms, signal) => {
  await sleep(ms, undefined, { signal });
};

/**
 * Evenly spaced slots, `1000 / requestsPerSecond` ms apart, handed out in call order. `now` and `wait`
 * are the clock (tests give a fake one).
 */
export function createPacer(
  requestsPerSecond: number | undefined,
  now = () => performance.now(),
  wait: Wait = realWait,
): RequestPacer {
  if (!requestsPerSecond || !(requestsPerSecond > 0)) return unpaced;
  const interval = 1000 / requestsPerSecond;
  let next = 0;
  return {
    async acquire(signal) {
      const t = now();
      const slot = Math.max(t, next);
      next = slot + interval;
      if (slot > t) await wait(slot - t, signal);
    },
  };
}
