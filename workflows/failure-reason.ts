/**
 * The reason a user can act on, from a failure as a workflow sees it: the message at the bottom of an
 * ActivityFailure or ChildWorkflowFailure → ApplicationFailure chain (the wrappers' own messages say
 * only "Activity task failed").
 */
import { ApplicationFailure } from '@temporalio/workflow';
import { RETRY_TABLE, type FailureType } from '../schemas/retry-table.ts';

export function reasonOf(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause && !(e instanceof ApplicationFailure)) e = e.cause;
  return e instanceof Error ? e.message : String(err);
}

/**
 * A workflow's own failure of `type`, retryable as the retry table says: what activities/failure.ts's
 * `failureOf` is to activities, for workflow code (which may not import activities).
 */
export function workflowFailureOf(type: FailureType, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: !RETRY_TABLE[type].retryable });
}
