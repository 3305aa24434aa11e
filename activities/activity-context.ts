/**
 * The Temporal activity context when there is one. Activities also run outside Temporal (unit and
 * contract tests, the CLI, one-off scripts), where `Context.current()` throws: callers get `undefined`
 * there and fall back to doing without (no heartbeat, no cancellation, attempt 1).
 */
import { Context } from '@temporalio/activity';

export function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}
