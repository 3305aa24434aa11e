/**
 * Opt-in retries, for use outside Temporal activities only (scripts, the CLI's one-off calls, tests).
 * Inside an activity, retries are decided by the retry table (schemas/retry-table.ts) at the activity
 * boundary and Temporal's attempts; wrapping an activity's calls in `withRetry` would add a loop that
 * multiplies with them.
 *
 * Backoff is exponential with full jitter (each delay uniform in [0, min(max, base × 2^n)]), so a burst
 * of 99997s from many callers spreads out instead of coming back in step; a `retryAfterMs` hint from the
 * service is a lower bound.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { CostMeter } from './cost.ts';
import { isServiceError, type ServiceErrorKind } from './errors.ts';

export const DEFAULT_RETRY_ATTEMPTS = 5;
export const DEFAULT_RETRY_BASE_MS = 500;
export const DEFAULT_RETRY_MAX_MS = 30_000;
/** Kinds retried by default: the request may succeed as sent. Quota needs hours, auth needs people. */
export const DEFAULT_RETRY_KINDS: readonly ServiceErrorKind[] = ['rateLimited', 'transient'];

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
  const base = options.baseDelayMs ?? DEFAULT_RETRY_BASE_MS;
  const max = options.maxDelayMs ?? DEFAULT_RETRY_MAX_MS;
  const ceiling = Math.min(max, base * 2 ** retry);
  const jittered = Math.floor((options.random ?? Math.random)() * ceiling);
  return Math.max(jittered, hintMs ?? 0);
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
