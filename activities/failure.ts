/**
 * The only code that builds an `ApplicationFailure`: whatever an activity reports to Temporal is typed by
 * the retry table (schemas/retry-table.ts), retryable exactly as its row says. Activities call
 * {@link failureOf} where they know the type and the reason a user can act on; the classifier
 * (failure-classifier.ts) types everything else at the activity boundary. Apart from the classifier so
 * that storage and media, which only report, do not reach the service client through it.
 */
import { ApplicationFailure, type Duration } from '@temporalio/common';
import { RETRY_TABLE, type FailureType } from '../schemas/retry-table.ts';

export interface FailureOptions {
  /** Wait before the next attempt; kept only when the type is retryable. */
  nextRetryDelay?: Duration | undefined;
  /** Plain data for the Web UI (no request, headers or secrets). */
  details?: unknown[] | undefined;
  cause?: Error | undefined;
}

/** A failure of `type`, retryable as the retry table says, with a message a user can act on. */
export function failureOf(
  type: FailureType,
  message: string,
  options: FailureOptions = {},
): ApplicationFailure {
  const retryable = RETRY_TABLE[type].retryable;
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: !retryable,
    ...(options.details ? { details: options.details } : {}),
    ...(retryable && options.nextRetryDelay !== undefined ? { nextRetryDelay: options.nextRetryDelay } : {}),
    ...(options.cause ? { cause: options.cause } : {}),
  });
}

/**
 * A failure the table does not type (a foreign `ApplicationFailure`, a plain error), rebuilt only to
 * change its message (masking personal data): its type and retry decision stay as they were.
 */
export function untypedFailure(
  type: string | undefined,
  message: string,
  options: FailureOptions & { nonRetryable?: boolean } = {},
): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: options.nonRetryable ?? false,
    ...(options.details ? { details: options.details } : {}),
    ...(!options.nonRetryable && options.nextRetryDelay !== undefined
      ? { nextRetryDelay: options.nextRetryDelay }
      : {}),
    ...(options.cause ? { cause: options.cause } : {}),
  });
}

/** Whether `err` is already a failure for Temporal (typed here or by the SDK's callers). */
export function isActivityFailure(err: unknown): err is ApplicationFailure {
  return err instanceof ApplicationFailure;
}
