/**
 * Which activity heartbeats reach the Temporal server. The SDK's core throttles them: the first one
 * goes at once and opens a window of the throttle interval; the heartbeats given within the window
 * wait, and only the last of them goes when the window closes, opening the next one; a window that
 * closes with nothing waiting sends nothing. The interval is 80 % of the activity's heartbeat timeout,
 * capped by the worker's `maxHeartbeatThrottleInterval` (60 s), or the worker's
 * `defaultHeartbeatThrottleInterval` (30 s) when the activity has no heartbeat timeout.
 */

/** The SDK's defaults (WorkerOptions); callpipe's workers keep them. */
const MAX_HEARTBEAT_THROTTLE_MS = 60_000;
const DEFAULT_HEARTBEAT_THROTTLE_MS = 30_000;

export function heartbeatThrottleMs(heartbeatTimeoutMs: number | undefined): number {
  return heartbeatTimeoutMs
    ? Math.min(heartbeatTimeoutMs * 0.8, MAX_HEARTBEAT_THROTTLE_MS)
    : DEFAULT_HEARTBEAT_THROTTLE_MS;
}

/** One activity attempt's heartbeats: `beat(now)` per heartbeat given, `sent` those that went out. */
export class HeartbeatThrottle {
  sent = 0;
  private windowEnd: number | undefined;
  private waiting = false;

  private readonly intervalMs: number;

  constructor(intervalMs: number) {
    this.intervalMs = intervalMs;
  }

  beat(now: number): void {
    this.settle(now);
    if (this.windowEnd === undefined) {
      this.sent++;
      this.windowEnd = now + this.intervalMs;
    } else this.waiting = true;
  }

  /** Closes the windows that ended by `now`; a heartbeat still waiting when the attempt ends is not sent. */
  settle(now: number): void {
    while (this.windowEnd !== undefined && now >= this.windowEnd) {
      if (this.waiting) {
        this.sent++;
        this.waiting = false;
        this.windowEnd += this.intervalMs;
      } else this.windowEnd = undefined;
    }
  }
}

/**
 * Heartbeats sent by an attempt that ran `runMs`. Liveness heartbeats (activities/liveness-heartbeat.ts)
 * go every third of the heartbeat timeout, the first a third in; recognition sessions heartbeat every
 * `recognitionEveryMs` (activities/asr/session-run.ts: the timeout less a margin), the first that long
 * in. Either way the SDK sends at most one per throttle interval. The workers' own count (heartbeat
 * meter) is the measure, this the estimate a batch report makes from histories alone.
 */
export function estimatedHeartbeats(
  runMs: number,
  heartbeatTimeoutMs: number | undefined,
  recognitionEveryMs?: number,
): number {
  if (!heartbeatTimeoutMs) return 0;
  const every = recognitionEveryMs ?? heartbeatTimeoutMs / 3;
  if (runMs < every) return 0;
  return 1 + Math.floor((runMs - every) / Math.max(every, heartbeatThrottleMs(heartbeatTimeoutMs)));
}
