/**
 * The activity boundary: whatever an activity throws leaves it as a failure of a type from the retry
 * table (schemas/retry-table.ts), retryable exactly as the table says. Workers wrap every activity
 * with {@link withFailureBoundary}, so no error reaches Temporal with a retry decision of its own
 * making: a failure an activity already typed is checked against the table, an untyped one is
 * classified from its class (failure-classifier.ts), and anything unknown stays a plain error (Temporal retries those
 * under the activity's policy).
 */
import { isServiceError } from '../service/index.ts';
import { isFailureType, RETRY_TABLE, retryDelayMs } from '../schemas/retry-table.ts';
import { actionableReason, classifyFailure } from './failure-classifier.ts';
import { failureOf, isActivityFailure, untypedFailure } from './failure.ts';
import { maskPersonalData } from './nlp/redaction/free-text.ts';

/** The table's type for an untyped error, or undefined when it is not one we know. */
export const failureTypeOf = (err: unknown) => (isActivityFailure(err) ? undefined : classifyFailure(err));

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
  // A reason a user can act on replaces a message that gives none (S3's `UnknownError`, a bare ENOSPC).
  const masked = maskPersonalData(actionableReason(err) ?? message);
  if (isActivityFailure(err)) {
    if (!isFailureType(err.type) && masked === message) return err;
    const retryable = isFailureType(err.type) ? RETRY_TABLE[err.type].retryable : !err.nonRetryable;
    if (!!err.nonRetryable === !retryable && masked === message) return err;
    // An activity typed its failure but decided its retry itself: the table decides.
    const options = {
      details: err.details as unknown[] | undefined,
      nextRetryDelay: err.nextRetryDelay,
      cause: masked === message ? err : undefined,
    };
    return isFailureType(err.type)
      ? failureOf(err.type, masked, options)
      : untypedFailure(err.type ?? undefined, masked, { ...options, nonRetryable: !retryable });
  }
  const type = classifyFailure(err);
  if (!type && masked === message) return err;
  if (!type) return untypedFailure(err instanceof Error ? err.name : 'Error', masked);
  const hint = isServiceError(err) ? err.retryAfterMs : undefined;
  return failureOf(type, masked, {
    details: detailsOf(err),
    nextRetryDelay: retryDelayMs(type, attempt, random, hint),
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
