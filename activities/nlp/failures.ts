/**
 * The one place where an error of a text step becomes what Temporal sees (DESIGN.md, Task queues and
 * limits; STYLE.md: "a retry decision is made in one place, from that class"):
 *
 * | error                         | outcome                                                               |
 * |-------------------------------|-----------------------------------------------------------------------|
 * | `rateLimited` (99997, 429)    | ridden out in the step (step.ts); if one escapes: retryable `ServiceRateLimited`, `nextRetryDelay` = Retry-After or backoff with jitter |
 * | `quota` (99995, 99996)        | retryable `ServiceQuotaExhausted`, long `nextRetryDelay` (default 15 min), says why |
 * | `auth` (99998, 401)           | non-retryable `ServiceAuthFailed` (the client already refreshed the token once) |
 * | `invalid`                     | not thrown: the step returns `{ status: 'failed', reason }`            |
 * | `transient`, `session`        | retryable `ServiceUnavailable`, Temporal's backoff                     |
 * | bad staging input (zod)       | non-retryable `InvalidStepInput`                                       |
 * | anything else                 | rethrown as is (Temporal retries plain errors)                         |
 *
 * Messages carry the service's words and code, never a token, a secret or a request body.
 */
import { ApplicationFailure } from '@temporalio/common';
import { ZodError } from 'zod';
import { backoffDelay, isServiceError, type ServiceError } from '../../service/index.ts';
import { FAILURE, RETRY_TABLE } from '../../schemas/retry-table.ts';

/** The failure types of text steps: names and retry rules from the one retry table. */
export const NLP_FAILURE_TYPES = {
  rateLimited: FAILURE.ServiceRateLimited,
  quota: FAILURE.ServiceQuotaExhausted,
  auth: FAILURE.ServiceAuthFailed,
  unavailable: FAILURE.ServiceUnavailable,
  invalidInput: FAILURE.InvalidStepInput,
} as const;

/** Long pause when the account's usage limit is used up (spec 01, Limits): the limit resets in hours. */
export const DEFAULT_QUOTA_DELAY_MS = RETRY_TABLE.ServiceQuotaExhausted.delay.fixedMs;
/** Backoff of Temporal attempts after a 99997 that reached Temporal, before jitter. */
export const DEFAULT_RATE_LIMIT_BASE_MS = RETRY_TABLE.ServiceRateLimited.delay.baseMs;
export const DEFAULT_RATE_LIMIT_MAX_MS = RETRY_TABLE.ServiceRateLimited.delay.maxMs;
/** A `nextRetryDelay` of 0 would retry at once; full jitter can draw 0. */
const MIN_RETRY_DELAY_MS = 200;

export interface FailurePolicy {
  /** Delay before the next attempt after a quota error; default {@link DEFAULT_QUOTA_DELAY_MS}. */
  quotaDelayMs?: number;
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

function failure(
  type: string,
  message: string,
  err: ServiceError | undefined,
  options: { nonRetryable?: boolean; nextRetryDelay?: number },
): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: options.nonRetryable ?? false,
    ...(options.nextRetryDelay !== undefined ? { nextRetryDelay: options.nextRetryDelay } : {}),
    // Plain data only (ServiceError.toJSON has no request, headers or cause chain).
    details: err ? [err.toJSON()] : [],
  });
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
  if (err instanceof ApplicationFailure) return { kind: 'throw', error: err };
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
        { nonRetryable: true },
      ),
    };
  }
  if (!isServiceError(err)) return { kind: 'throw', error: err };

  switch (err.kind) {
    case 'invalid':
      return { kind: 'stepFailed', reason: `${step}: ${describe(err)}` };
    case 'rateLimited': {
      const hinted = err.retryAfterMs;
      const delay =
        hinted ??
        backoffDelay(attempt - 1, {
          baseDelayMs: policy.rateLimitBaseMs ?? DEFAULT_RATE_LIMIT_BASE_MS,
          maxDelayMs: policy.rateLimitMaxMs ?? DEFAULT_RATE_LIMIT_MAX_MS,
          random: policy.random,
        });
      const nextRetryDelay = Math.max(MIN_RETRY_DELAY_MS, delay);
      return {
        kind: 'throw',
        error: failure(
          NLP_FAILURE_TYPES.rateLimited,
          `${step}: the service blocked a burst of requests (rate limited); retrying in ${nextRetryDelay} ms: ${describe(err)}`,
          err,
          { nextRetryDelay },
        ),
      };
    }
    case 'quota': {
      const delay = policy.quotaDelayMs ?? DEFAULT_QUOTA_DELAY_MS;
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
          { nextRetryDelay: delay },
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
          { nonRetryable: true },
        ),
      };
    case 'transient':
    case 'session':
    case 'noResource':
      return {
        kind: 'throw',
        error: failure(NLP_FAILURE_TYPES.unavailable, `${step}: ${describe(err)}`, err, {}),
      };
  }
}
