/**
 * The activity boundary: whatever an activity throws leaves it as a failure of a type from the retry
 * table (schemas/retry-table.ts), retryable exactly as the table says. Workers wrap every activity
 * with {@link withFailureBoundary}, so no error reaches Temporal with a retry decision of its own
 * making: a failure an activity already typed is checked against the table, an untyped one is
 * classified here from its class, and anything unknown stays a plain error (Temporal retries those
 * under the activity's policy).
 */
import { ApplicationFailure } from '@temporalio/common';
import { isServiceError, type ServiceErrorKind } from '../service/index.ts';
import {
  FAILURE,
  isFailureType,
  RETRY_TABLE,
  retryDelayMs,
  type FailureType,
} from '../schemas/retry-table.ts';
import { isPermanentS3Error } from './storage/object-store.ts';
import { maskPersonalData } from './nlp/redaction/free-text.ts';

const SERVICE_FAILURES: Record<ServiceErrorKind, FailureType> = {
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

/** The table's type for an untyped error, or undefined when it is not one we know. */
export function failureTypeOf(err: unknown): FailureType | undefined {
  if (isServiceError(err)) return SERVICE_FAILURES[err.kind];
  if (isStorageError(err))
    return isPermanentS3Error(err) ? FAILURE.StorageRefused : FAILURE.StorageUnavailable;
  if (err instanceof Error) {
    if (err.name === 'ZodError') return FAILURE.InvalidStepInput;
    if (isFailureType(err.name)) return err.name;
  }
  return undefined;
}

/**
 * Plain data for the failure's details: a ServiceError's JSON (no request, headers or token), or the
 * `kind` of a classified error (a MediaError's `zero-duration`, `no-audio`…), which the Web UI shows.
 */
function detailsOf(err: unknown): unknown[] {
  if (isServiceError(err)) return [err.toJSON()];
  if (err instanceof Error && 'kind' in err && typeof err.kind === 'string') return [{ kind: err.kind }];
  return [];
}

/**
 * What `err` becomes when it leaves an activity in attempt `attempt` (1-based). Its message goes into
 * the workflow's history: personal data a message may carry (a service echoing its input) is masked,
 * and the cause that held it left out.
 */
export function toActivityFailure(err: unknown, attempt = 1, random: () => number = Math.random): unknown {
  const message = err instanceof Error ? err.message : String(err);
  const masked = maskPersonalData(message);
  if (err instanceof ApplicationFailure) {
    if (!isFailureType(err.type) && masked === message) return err;
    const retryable = isFailureType(err.type) ? RETRY_TABLE[err.type].retryable : !err.nonRetryable;
    if (!!err.nonRetryable === !retryable && masked === message) return err;
    // An activity typed its failure but decided its retry itself: the table decides.
    return ApplicationFailure.create({
      type: err.type ?? undefined,
      message: masked,
      nonRetryable: !retryable,
      details: err.details as unknown[] | undefined,
      ...(retryable && err.nextRetryDelay !== undefined ? { nextRetryDelay: err.nextRetryDelay } : {}),
      ...(masked === message ? { cause: err } : {}),
    });
  }
  const type = failureTypeOf(err);
  if (!type && masked === message) return err;
  if (!type)
    return ApplicationFailure.create({ message: masked, type: err instanceof Error ? err.name : 'Error' });
  const hint = isServiceError(err) ? err.retryAfterMs : undefined;
  const delay = retryDelayMs(type, attempt, random, hint);
  return ApplicationFailure.create({
    type,
    message: masked,
    nonRetryable: !RETRY_TABLE[type].retryable,
    details: detailsOf(err),
    ...(delay !== undefined ? { nextRetryDelay: delay } : {}),
    cause: err instanceof Error && masked === message ? err : undefined,
  });
}

type AnyActivity = (...args: never[]) => Promise<unknown>;

/** The same activities, each passing what it throws through {@link toActivityFailure}. */
export function withFailureBoundary<T extends Record<string, AnyActivity>>(
  activities: T,
  attempt: () => number,
): T {
  const wrapped: Record<string, AnyActivity> = {};
  for (const [name, fn] of Object.entries(activities)) {
    // A named function: Temporal registers activities by their property name, logs show this one.
    wrapped[name] = async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        throw toActivityFailure(err, attempt());
      }
    };
  }
  return wrapped as T;
}
