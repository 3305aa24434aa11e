/**
 * The retry table and the activity boundary: every error leaves an activity typed and retryable exactly
 * as schemas/retry-table.ts says, with `nextRetryDelay` where the table gives one.
 */
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { failureTypeOf, toActivityFailure, withFailureBoundary } from '../../activities/failure-boundary.ts';
import { NON_RETRYABLE_TYPES, RETRY_TABLE, retryDelayMs } from '../../schemas/retry-table.ts';
import { ServiceError, type ServiceErrorKind } from '../../service/index.ts';

const serviceError = (kind: ServiceErrorKind, retryAfterMs?: number) =>
  new ServiceError({ kind, message: `${kind} failure`, retryAfterMs });

describe('toActivityFailure', () => {
  it.each([
    ['rateLimited', 'ServiceRateLimited', false],
    ['transient', 'ServiceUnavailable', false],
    ['session', 'ServiceUnavailable', false],
    ['noResource', 'ServiceNoResource', false],
    ['quota', 'ServiceQuotaExhausted', false],
    ['auth', 'ServiceAuthFailed', true],
    ['invalid', 'ServiceInvalidRequest', true],
  ] as const)('a %s service error becomes %s (non-retryable: %s)', (kind, type, nonRetryable) => {
    const f = toActivityFailure(serviceError(kind), 1, () => 0.5) as ApplicationFailure;
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f).toMatchObject({ type, nonRetryable, message: `${kind} failure` });
  });

  it('sets the delays of the table: quota waits 15 min; 99997 backs off with jitter, at least the Retry-After', () => {
    const quota = toActivityFailure(serviceError('quota'), 3) as ApplicationFailure;
    expect(quota.nextRetryDelay).toBe(15 * 60_000);
    const first = toActivityFailure(serviceError('rateLimited'), 1, () => 0.999) as ApplicationFailure;
    expect(Number(first.nextRetryDelay)).toBeLessThanOrEqual(1000);
    const later = toActivityFailure(serviceError('rateLimited'), 4, () => 0.999) as ApplicationFailure;
    expect(Number(later.nextRetryDelay)).toBeGreaterThan(4000);
    const hinted = toActivityFailure(serviceError('rateLimited', 7000), 1, () => 0) as ApplicationFailure;
    expect(hinted.nextRetryDelay).toBe(7000);
    // Temporal's backoff decides for a 5xx: no delay of the activity's own.
    expect(
      (toActivityFailure(serviceError('transient')) as ApplicationFailure).nextRetryDelay,
    ).toBeUndefined();
  });

  it('object storage errors: 5xx and network are retryable, a refusal (4xx) is not', () => {
    const s3 = (status: number) => Object.assign(new Error('s3'), { $metadata: { httpStatusCode: status } });
    expect(failureTypeOf(s3(503))).toBe('StorageUnavailable');
    expect(failureTypeOf(s3(429))).toBe('StorageUnavailable');
    expect(failureTypeOf(s3(403))).toBe('StorageRefused');
    expect(toActivityFailure(s3(403))).toMatchObject({ type: 'StorageRefused', nonRetryable: true });
  });

  it('a typed failure that decided its own retry is corrected to the table; unknown errors pass through', () => {
    const wrong = ApplicationFailure.create({ type: 'ServiceAuthFailed', message: 'x', nonRetryable: false });
    expect(toActivityFailure(wrong)).toMatchObject({ type: 'ServiceAuthFailed', nonRetryable: true });
    const right = ApplicationFailure.create({ type: 'MediaError', message: 'x', nonRetryable: true });
    expect(toActivityFailure(right)).toBe(right);
    const foreign = ApplicationFailure.create({ type: 'SomethingElse', message: 'x' });
    expect(toActivityFailure(foreign)).toBe(foreign);
    const plain = new TypeError('bug');
    expect(toActivityFailure(plain)).toBe(plain);
  });

  it('masks personal data a message carries into history, and leaves out the cause that held it', () => {
    const echoed = new ServiceError({
      kind: 'invalid',
      message: 'sentence too long: 電話は090-1234-5678です…',
    });
    const f = toActivityFailure(echoed) as ApplicationFailure;
    expect(f).toMatchObject({ type: 'ServiceInvalidRequest', nonRetryable: true });
    expect(f.message).toBe('sentence too long: 電話は[電話番号]です…');
    expect(f.cause).toBeUndefined();
    const plain = toActivityFailure(new TypeError('no user a.b@example.jp')) as ApplicationFailure;
    expect(plain).toBeInstanceOf(ApplicationFailure);
    expect(plain).toMatchObject({
      type: 'TypeError',
      nonRetryable: false,
      message: 'no user [メールアドレス]',
    });
    const typed = ApplicationFailure.create({
      type: 'MediaError',
      message: 'card 4111 1111 1111 1111',
      nonRetryable: true,
    });
    expect(toActivityFailure(typed)).toMatchObject({
      type: 'MediaError',
      nonRetryable: true,
      message: 'card [カード番号]',
    });
  });

  it('withFailureBoundary wraps every activity and keeps what succeeds', async () => {
    const activities = withFailureBoundary(
      {
        ok: async (n: number) => n * 2,
        bad: async () => {
          throw serviceError('auth');
        },
      },
      () => 2,
    );
    await expect(activities.ok(21)).resolves.toBe(42);
    await expect(activities.bad()).rejects.toMatchObject({ type: 'ServiceAuthFailed', nonRetryable: true });
  });
});

describe('the retry table', () => {
  it('lists every non-retryable type for the workflow policies, and only those', () => {
    for (const [type, rule] of Object.entries(RETRY_TABLE)) {
      expect(NON_RETRYABLE_TYPES.includes(type as never), type).toBe(!rule.retryable);
    }
  });

  it('never asks for a zero delay, and none for a non-retryable type', () => {
    for (let attempt = 1; attempt <= 10; attempt++) {
      expect(retryDelayMs('ServiceRateLimited', attempt, () => 0)).toBeGreaterThan(0);
      expect(retryDelayMs('ServiceRateLimited', attempt, () => 0.999)).toBeLessThanOrEqual(60_000);
    }
    expect(retryDelayMs('ServiceAuthFailed', 1, () => 0.5)).toBeUndefined();
  });
});
