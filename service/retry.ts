/**
 * Opt-in retries, for use outside Temporal activities only (scripts, the CLI's one-off calls, tests).
 * Inside an activity, retries are decided by the retry table (schemas/retry-table.ts) at the activity
 * boundary and Temporal's attempts; wrapping an activity's calls in `withRetry` would add a loop that
 * multiplies with them.
 *
 * Its attempts and backoff are the retry table's `OutsideTemporal` row. Backoff is exponential with
 * full jitter (each delay uniform in [0, min(max, base × 2^n)]), so a burst
 * of 99997s from many callers spreads out instead of coming back in step; a `retryAfterMs` hint from the
 * service is a lower bound.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { CostMeter } from './cost.ts';
import { loopDelayMs, RETRY_LOOPS } from '../schemas/retry-table.ts';
import { isServiceError, RETRYABLE_KINDS, type ServiceErrorKind } from './errors.ts';

/** The retry table's row of this loop: its budget and backoff. */
const LOOP = RETRY_LOOPS.OutsideTemporal;
const DEFAULT_RETRY_ATTEMPTS = LOOP.budget.tries;
const DEFAULT_RETRY_BASE_MS = LOOP.backoff.baseMs;
const DEFAULT_RETRY_MAX_MS = LOOP.backoff.maxMs;
/** Kinds retried by default: the request may succeed as sent. Quota needs hours, auth needs people. */
const DEFAULT_RETRY_KINDS: readonly ServiceErrorKind[] = RETRYABLE_KINDS;

export interface RetryOptions {
  /** Attempts in all, the first included; default {@link DEFAULT_RETRY_ATTEMPTS}. */
  attempts?: number;
  /** First backoff ceiling; default {@link DEFAULT_RETRY_BASE_MS}. */
  baseDelayMs?: number;
  /** Largest backoff ceiling; default {@link DEFAULT_RETRY_MAX_MS}. */
  maxDelayMs?: number;
  /** Which errors to retry; default: ServiceErrors of the kinds in {@link DEFAULT_RETRY_KINDS}. */
  shouldRetry?: (err: unknown, attempt: number) => boolean;
  /** Counts retries into the caller's cost. */
  meter?: CostMeter;
  signal?: AbortSignal;
  /** Called before each wait, e.g. for logging. */
  onRetry?: (info: { attempt: number; delayMs: number; error: unknown }) => void;
  /** Random source in [0, 1), for tests. */
  random?: () => number;
}

/** The delay before retry number `retry` (0-based): full jitter, at least the service's hint. */
export function backoffDelay(
  retry: number,
  options: Pick<RetryOptions, 'baseDelayMs' | 'maxDelayMs' | 'random'> = {},
  hintMs?: number,
): number {
  return loopDelayMs('OutsideTemporal', retry + 1, options.random, hintMs, {
    kind: 'fullJitter',
    baseMs: options.baseDelayMs ?? DEFAULT_RETRY_BASE_MS,
    maxMs: options.maxDelayMs ?? DEFAULT_RETRY_MAX_MS,
  });
}

function defaultShouldRetry(err: unknown): boolean {
  return isServiceError(err) && DEFAULT_RETRY_KINDS.includes(err.kind);
}

/** Runs `fn` until it succeeds, the error is not retryable, or the attempts are used up. */
export async function withRetry<T>(
  fn: (attempt: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const attempts = options.attempts ?? DEFAULT_RETRY_ATTEMPTS;
  const shouldRetry = options.shouldRetry ?? defaultShouldRetry;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt >= attempts || !shouldRetry(err, attempt)) throw err;
      const hint = isServiceError(err) ? err.retryAfterMs : undefined;
      const delayMs = backoffDelay(attempt - 1, options, hint);
      options.onRetry?.({ attempt, delayMs, error: err });
      options.meter?.addRetry();
      await sleep(delayMs, undefined, { signal: options.signal });
    }
  }
}
