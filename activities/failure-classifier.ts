/**
 * The one classifier of errors into the retry table's failure types (schemas/retry-table.ts), and the
 * only code that builds an `ApplicationFailure`: whatever an activity reports to Temporal is typed here,
 * retryable exactly as its row says. Activities call {@link failureOf} where they know the type and the
 * reason a user can act on; the activity boundary (failure-boundary.ts) calls {@link classifyFailure}
 * for everything else.
 */
import { ApplicationFailure, type Duration } from '@temporalio/common';
import { isServiceError, type ServiceErrorKind } from '../service/index.ts';
import { FAILURE, isFailureType, RETRY_TABLE, type FailureType } from '../schemas/retry-table.ts';
import { isPermanentS3Error } from './storage/object-store.ts';

/** The failure type of each class of service error (service/errors.ts says what raises each). */
export const SERVICE_FAILURES: Readonly<Record<ServiceErrorKind, FailureType>> = {
  rateLimited: FAILURE.ServiceRateLimited,
  quota: FAILURE.ServiceQuotaExhausted,
  auth: FAILURE.ServiceAuthFailed,
  invalid: FAILURE.ServiceInvalidRequest,
  session: FAILURE.ServiceUnavailable,
  noResource: FAILURE.ServiceNoResource,
  transient: FAILURE.ServiceUnavailable,
};

/** Object storage errors carry `$metadata` (the AWS SDK's response facts). */
function isStorageError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && '$metadata' in err;
}

/**
 * The table's type of `err`, or undefined when it is not one we know (Temporal retries those under the
 * activity's policy). A failure already typed keeps its type.
 */
export function classifyFailure(err: unknown): FailureType | undefined {
  if (err instanceof ApplicationFailure) return isFailureType(err.type) ? err.type : undefined;
  if (isServiceError(err)) return SERVICE_FAILURES[err.kind];
  if (isStorageError(err))
    return isPermanentS3Error(err) ? FAILURE.StorageRefused : FAILURE.StorageUnavailable;
  if (err instanceof Error) {
    if (err.name === 'ZodError') return FAILURE.InvalidStepInput;
    if (isFailureType(err.name)) return err.name;
  }
  return undefined;
}

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
