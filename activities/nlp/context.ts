/**
 * What the text activities use of the Temporal activity context, each a no-op (or its neutral value)
 * outside an activity: the text activities also run in unit and contract tests and one-off scripts.
 */
import { activityContext } from '../activity-context.ts';

/** Reports progress (and lets cancellation reach the activity); a no-op outside an activity. */
export function heartbeat(details?: unknown): void {
  activityContext()?.heartbeat(details);
}

/** The activity's cancellation signal, if it runs in one. */
export function cancellationSignal(): AbortSignal | undefined {
  return activityContext()?.cancellationSignal;
}

/** Attempt number of the running activity (1 for the first), 1 outside Temporal. */
export function attemptNumber(): number {
  return activityContext()?.info.attempt ?? 1;
}
