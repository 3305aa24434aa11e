/**
 * What the text activities use of the Temporal activity context, each a no-op (or its neutral value)
 * outside an activity: the text activities also run in unit and contract tests and one-off scripts.
 */
import { activityContext } from '../activity-context.ts';

/**
 * Reports progress (and lets cancellation reach the activity); a no-op outside an activity, and in the
 * first third of the heartbeat timeout: the SDK sends the first heartbeat to the server at once, a billed
 * action, and a step that ends sooner needs none. From that third on, the liveness heartbeat
 * (activities/liveness-heartbeat.ts) beats anyway while the step runs.
 */
export function heartbeat(details?: unknown): void {
  const ctx = activityContext();
  if (!ctx) return;
  const { heartbeatTimeoutMs, currentAttemptScheduledTimestampMs: scheduledMs } = ctx.info;
  if (heartbeatTimeoutMs && Date.now() - scheduledMs < heartbeatTimeoutMs / 3) return;
  ctx.heartbeat(details);
}

/** The activity's cancellation signal, if it runs in one. */
export function cancellationSignal(): AbortSignal | undefined {
  return activityContext()?.cancellationSignal;
}

/** Attempt number of the running activity (1 for the first), 1 outside Temporal. */
export function attemptNumber(): number {
  return activityContext()?.info.attempt ?? 1;
}
