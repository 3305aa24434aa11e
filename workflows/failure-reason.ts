/**
 * The reason a user can act on, from a failure as a workflow sees it: the message at the bottom of an
 * ActivityFailure or ChildWorkflowFailure → ApplicationFailure chain (the wrappers' own messages say
 * only "Activity task failed").
 */
import { ApplicationFailure } from '@temporalio/workflow';

export function reasonOf(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause && !(e instanceof ApplicationFailure)) e = e.cause;
  return e instanceof Error ? e.message : String(err);
}
