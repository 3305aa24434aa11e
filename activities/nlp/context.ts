/**
 * The Temporal activity context when there is one: the text activities also run outside Temporal (unit
 * and contract tests, one-off scripts), where `Context.current()` throws.
 */
import { Context } from '@temporalio/activity';

function current(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/** Reports progress (and lets cancellation reach the activity); a no-op outside an activity. */
export function heartbeat(details?: unknown): void {
  current()?.heartbeat(details);
}

/** The activity's cancellation signal, if it runs in one. */
export function cancellationSignal(): AbortSignal | undefined {
  return current()?.cancellationSignal;
}

/** Attempt number of the running activity (1 for the first), 1 outside Temporal. */
export function attemptNumber(): number {
  return current()?.info.attempt ?? 1;
}
