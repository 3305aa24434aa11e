/**
 * What the error of a text step becomes: the step's own failure, or a failure for Temporal typed by the
 * classifier (../failure-classifier.ts) and waiting as the retry table says (docs/design.md, Task queues and
 * limits; STYLE.md: "a retry decision is made in one place, from that class"):
 *
 * | error                         | outcome                                                               |
 * |-------------------------------|-----------------------------------------------------------------------|
 * | `rateLimited` (99997, 429)    | ridden out in the step (step.ts); if one escapes: retryable `ServiceRateLimited`, `nextRetryDelay` = the table's backoff with jitter, at least the Retry-After |
 * | `quota` (99995, 99996)        | retryable `ServiceQuotaExhausted`, long `nextRetryDelay` (default 15 min), says why |
 * | `auth` (99998, 401)           | non-retryable `ServiceAuthFailed` (the client already refreshed the token once) |
 * | `invalid`                     | not thrown: the step returns `{ status: 'failed', reason }`            |
 * | `transient`, `session`        | retryable `ServiceUnavailable`, Temporal's backoff                     |
 * | bad staging input (zod)       | non-retryable `InvalidStepInput`                                       |
 * | anything else                 | rethrown as is (Temporal retries plain errors)                         |
 *
 * Messages carry the service's words and code, never a token, a secret or a request body.
 */
import { ZodError } from 'zod';
import { isServiceError, type ServiceError } from '../../service/index.ts';
import { FAILURE, RETRY_TABLE, retryDelayMs, type FailureType } from '../../schemas/retry-table.ts';
import { classifyFailure, SERVICE_FAILURES } from '../failure-classifier.ts';
import { failureOf, isActivityFailure } from '../failure.ts';

/** The failure types of text steps: names and retry rules from the one retry table. */
export const NLP_FAILURE_TYPES = {
  rateLimited: SERVICE_FAILURES.rateLimited,
  quota: SERVICE_FAILURES.quota,
  auth: SERVICE_FAILURES.auth,
  unavailable: SERVICE_FAILURES.transient,
  invalidInput: FAILURE.InvalidStepInput,
} as const;

/** Long pause when the account's usage limit is used up (spec 01, Limits): the limit resets in hours. */
const DEFAULT_QUOTA_DELAY_MS = RETRY_TABLE.ServiceQuotaExhausted.delay.fixedMs;
/** Backoff of Temporal attempts after a 99997 that reached Temporal, before jitter. */
const DEFAULT_RATE_LIMIT_BASE_MS = RETRY_TABLE.ServiceRateLimited.delay.baseMs;
const DEFAULT_RATE_LIMIT_MAX_MS = RETRY_TABLE.ServiceRateLimited.delay.maxMs;

export interface FailurePolicy {
  /** Delay before the next attempt after a quota error; default {@link DEFAULT_QUOTA_DELAY_MS}. */
  quotaDelayMs?: number;
  /** Backoff of attempts after a 99997; default the retry table's ({@link DEFAULT_RATE_LIMIT_BASE_MS}). */
  rateLimitBaseMs?: number;
  rateLimitMaxMs?: number;
  /** Random source in [0, 1) for the jitter; for tests. */
  random?: () => number;
}

/** A step that cannot succeed with this input: recorded in the result, the call goes on. */
export class StepInputError extends Error {
  override name = 'StepInputError';
}

export type StepErrorOutcome = { kind: 'stepFailed'; reason: string } | { kind: 'throw'; error: unknown };

function describe(err: ServiceError): string {
  return err.message;
}

function minutes(ms: number): string {
  return ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

function failure(type: FailureType, message: string, err: ServiceError | undefined, nextRetryDelay?: number) {
  // Plain data only (ServiceError.toJSON has no request, headers or cause chain).
  return failureOf(type, message, { details: err ? [err.toJSON()] : [], nextRetryDelay });
}

/**
 * What the error of one step attempt becomes. `attempt` is the activity's attempt number (1-based), for
 * the backoff when the service gave no delay.
 */
export function stepErrorOutcome(
  step: string,
  err: unknown,
  attempt: number,
  policy: FailurePolicy = {},
): StepErrorOutcome {
  if (isActivityFailure(err)) return { kind: 'throw', error: err };
  if (err instanceof StepInputError) return { kind: 'stepFailed', reason: err.message };
  if (err instanceof ZodError) {
    const issue = err.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : '(document)';
    return {
      kind: 'throw',
      error: failure(
        NLP_FAILURE_TYPES.invalidInput,
        `${step}: staging document is not what the step expects: ${where}: ${issue?.message ?? 'invalid'}`,
        undefined,
      ),
    };
  }
  if (!isServiceError(err)) return { kind: 'throw', error: err };

  switch (err.kind) {
    case 'invalid':
      return { kind: 'stepFailed', reason: `${step}: ${describe(err)}` };
    case 'rateLimited': {
      const nextRetryDelay =
        retryDelayMs(NLP_FAILURE_TYPES.rateLimited, attempt, policy.random ?? Math.random, err.retryAfterMs, {
          baseMs: policy.rateLimitBaseMs ?? DEFAULT_RATE_LIMIT_BASE_MS,
          maxMs: policy.rateLimitMaxMs ?? DEFAULT_RATE_LIMIT_MAX_MS,
        }) ?? 0;
      return {
        kind: 'throw',
        error: failure(
          NLP_FAILURE_TYPES.rateLimited,
          `${step}: the service blocked a burst of requests (rate limited); retrying in ${nextRetryDelay} ms: ${describe(err)}`,
          err,
          nextRetryDelay,
        ),
      };
    }
    case 'quota': {
      const delay =
        retryDelayMs(NLP_FAILURE_TYPES.quota, attempt, Math.random, err.retryAfterMs, {
          fixedMs: policy.quotaDelayMs ?? DEFAULT_QUOTA_DELAY_MS,
        }) ?? 0;
      const which =
        String(err.code) === '99995'
          ? "the account's preset usage limit is reached: raise it on the account page"
          : 'the 24-hour usage limit of the account is used up: it resets within a day';
      return {
        kind: 'throw',
        error: failure(
          NLP_FAILURE_TYPES.quota,
          `${step}: usage quota exhausted (${which}); waiting ${minutes(delay)} before retrying: ${describe(err)}`,
          err,
          delay,
        ),
      };
    }
    case 'auth':
      return {
        kind: 'throw',
        error: failure(
          NLP_FAILURE_TYPES.auth,
          `${step}: authentication failed even after a fresh access token: check the client id and secret ` +
            `(CALLPIPE_CLIENT_ID, CALLPIPE_CLIENT_SECRET) and the token address: ${describe(err)}`,
          err,
        ),
      };
    case 'transient':
    case 'session':
    case 'noResource': {
      // Text calls meet no 550 (a recognition code); were one to come, the classifier types it.
      const type = classifyFailure(err) ?? NLP_FAILURE_TYPES.unavailable;
      const delay = retryDelayMs(type, attempt, policy.random ?? Math.random, err.retryAfterMs);
      return { kind: 'throw', error: failure(type, `${step}: ${describe(err)}`, err, delay) };
    }
  }
}
