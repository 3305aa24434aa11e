/**
 * The one place the command turns an error into the line a user reads: a workflow's failure by its
 * cause (not the client's `Workflow execution failed`), a refusal by S3 by what was refused (not the
 * SDK's `UnknownError` of a HEAD request), anything else by its message. Every command's errors pass here
 * (cli/main.ts).
 */
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure, TerminatedFailure, TimeoutFailure } from '@temporalio/common';
import { describeS3Refusal, s3CodeOf, s3StatusOf } from '../activities/storage/s3-errors.ts';

export interface ErrorContext {
  /** S3 as a message names it: the configured endpoint, or AWS's for the region. */
  s3Endpoint(): string;
  /**
   * A small request to S3 with the same credentials (a listing), for a refusal that came without a
   * reason: its own refusal says whether the credentials are wrong; its success, that they may not do
   * what was asked.
   */
  probeS3?(): Promise<unknown>;
}

/** The reason at the bottom of a workflow's failure (its wrappers say only that it failed). */
export function workflowFailureReason(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  if (e instanceof CancelledFailure) return 'cancelled';
  if (e instanceof TerminatedFailure) return `terminated${e.message ? ` (${e.message})` : ''}`;
  if (e instanceof TimeoutFailure) return 'timed out';
  return e instanceof Error ? e.message : String(e);
}

const isS3Error = (err: unknown) => typeof err === 'object' && err !== null && '$metadata' in err;

async function s3Message(err: unknown, context: ErrorContext): Promise<string | undefined> {
  const endpoint = context.s3Endpoint();
  if (s3StatusOf(err) === 403 && !s3CodeOf(err) && context.probeS3) {
    const probe = await context.probeS3().then(
      () => 'allowed' as const,
      (e: unknown) => e,
    );
    if (probe === 'allowed')
      return `S3 at ${endpoint} denied access (HTTP 403): the credentials work, but may not do this`;
    if (s3CodeOf(probe)) return describeS3Refusal(probe, endpoint);
  }
  return describeS3Refusal(err, endpoint);
}

/** The line a user reads for `err`. */
export async function userMessage(err: unknown, context: ErrorContext): Promise<string> {
  if (err instanceof WorkflowFailedError) {
    const reason = workflowFailureReason(err);
    return reason === 'cancelled' || reason.startsWith('terminated') || reason === 'timed out'
      ? `workflow ${reason}`
      : `workflow failed: ${reason}`;
  }
  if (isS3Error(err)) {
    const described = await s3Message(err, context).catch(() => undefined);
    if (described) return described;
  }
  return err instanceof Error ? err.message : String(err);
}
