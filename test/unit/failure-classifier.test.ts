/**
 * The one classifier: every error it knows becomes a type of the retry table, every failure it builds
 * is retryable exactly as that type's row says, and the in-activity loops wait as their rows say.
 */
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { classifyFailure, SERVICE_FAILURES } from '../../activities/failure-classifier.ts';
import { failureOf, isActivityFailure, untypedFailure } from '../../activities/failure.ts';
import {
  backoffMs,
  FAILURE,
  loopDelayMs,
  loopRetries,
  RETRY_LOOPS,
  RETRY_TABLE,
  type FailureType,
} from '../../schemas/retry-table.ts';
import { SERVICE_ERROR_KINDS, ServiceError } from '../../service/index.ts';

describe('classifyFailure', () => {
  it('types every service error kind', () => {
    for (const kind of SERVICE_ERROR_KINDS) {
      const type = classifyFailure(new ServiceError({ kind, message: kind }));
      expect(type, kind).toBe(SERVICE_FAILURES[kind]);
      expect(Object.hasOwn(RETRY_TABLE, type!)).toBe(true);
    }
  });

  it('types object storage errors by status, a staged document of the wrong shape, and named errors', () => {
    const s3 = (status: number) => Object.assign(new Error('s3'), { $metadata: { httpStatusCode: status } });
    expect(classifyFailure(s3(500))).toBe(FAILURE.StorageUnavailable);
    expect(classifyFailure(s3(404))).toBe(FAILURE.StorageRefused);
    expect(classifyFailure(z.string().safeParse(1).error)).toBe(FAILURE.InvalidStepInput);
    expect(classifyFailure(Object.assign(new Error('x'), { name: 'MediaError' }))).toBe(FAILURE.MediaError);
  });

  it('keeps the type of a typed failure and knows nothing of foreign ones or plain errors', () => {
    expect(classifyFailure(failureOf(FAILURE.TablesBusy, 'busy'))).toBe(FAILURE.TablesBusy);
    expect(classifyFailure(ApplicationFailure.create({ type: 'Foreign', message: 'x' }))).toBeUndefined();
    expect(classifyFailure(new TypeError('bug'))).toBeUndefined();
    expect(classifyFailure('a string')).toBeUndefined();
  });
});

describe('failureOf', () => {
  it.each(Object.keys(RETRY_TABLE) as FailureType[])('%s is retryable as its row says', (type) => {
    const f = failureOf(type, 'why', { nextRetryDelay: 1234, details: [{ kind: 'k' }] });
    expect(isActivityFailure(f)).toBe(true);
    expect(f).toMatchObject({ type, message: 'why', nonRetryable: !RETRY_TABLE[type].retryable });
    // A wait only means something for a failure that is retried.
    expect(f.nextRetryDelay).toBe(RETRY_TABLE[type].retryable ? 1234 : undefined);
    expect(f.details).toEqual([{ kind: 'k' }]);
  });

  it('an untyped failure keeps the retry decision it was given', () => {
    expect(untypedFailure('Foreign', 'x', { nonRetryable: true })).toMatchObject({
      type: 'Foreign',
      nonRetryable: true,
    });
    expect(untypedFailure('TypeError', 'x').nonRetryable).toBe(false);
  });
});

describe('the retry loops', () => {
  it('text requests are sent again after a 99997 only, within 32 retries beyond those answered', () => {
    expect(loopRetries('TextRequestBlocked', FAILURE.ServiceRateLimited)).toBe(true);
    expect(loopRetries('TextRequestBlocked', FAILURE.ServiceUnavailable)).toBe(false);
    expect(loopRetries('TextRequestBlocked', undefined)).toBe(false);
    expect(RETRY_LOOPS.TextRequestBlocked.budget.retriesBeyondAnswered).toBe(32);
    expect(loopDelayMs('TextRequestBlocked', 1, () => 0.5)).toBe(125);
    expect(loopDelayMs('TextRequestBlocked', 10, () => 0.999)).toBe(3996);
    expect(loopDelayMs('TextRequestBlocked', 1, () => 0, 7000)).toBe(7000); // Retry-After: a lower bound
  });

  it('a recognition session restarts after anything but a refusal, 200 ms × restarts or the Retry-After', () => {
    for (const type of [FAILURE.ServiceUnavailable, FAILURE.ServiceRateLimited, FAILURE.StorageUnavailable])
      expect(loopRetries('RecognitionRestart', type), type).toBe(true);
    expect(loopRetries('RecognitionRestart', undefined)).toBe(true);
    for (const type of [
      FAILURE.ServiceAuthFailed,
      FAILURE.ServiceInvalidRequest,
      FAILURE.ServiceQuotaExhausted,
    ])
      expect(loopRetries('RecognitionRestart', type), type).toBe(false);
    expect(loopDelayMs('RecognitionRestart', 3)).toBe(600);
    expect(loopDelayMs('RecognitionRestart', 3, Math.random, 5000)).toBe(5000);
    expect(loopDelayMs('RecognitionRestart', 3, Math.random, 0)).toBe(600);
    expect(loopDelayMs('RecognitionRestart', 3, Math.random, undefined, { kind: 'linear', stepMs: 0 })).toBe(
      0,
    );
  });

  it("a session's result write doubles from 250 ms to 2 s for 5 min", () => {
    expect([1, 2, 3, 4, 5, 9].map((n) => loopDelayMs('SessionResultWrite', n))).toEqual([
      250, 500, 1000, 2000, 2000, 2000,
    ]);
    expect(RETRY_LOOPS.SessionResultWrite.budget.ms).toBe(5 * 60_000);
  });

  it('the tables lease wait doubles from 50 ms five times, spread by half either way', () => {
    expect(loopDelayMs('TablesLeaseWait', 1, () => 0.5)).toBe(50);
    expect(loopDelayMs('TablesLeaseWait', 6, () => 0)).toBe(800);
    expect(loopDelayMs('TablesLeaseWait', 20, () => 0.5)).toBe(1600);
  });

  it('withRetry outside Temporal: 5 tries, full jitter from 500 ms to 30 s', () => {
    expect(RETRY_LOOPS.OutsideTemporal.budget.tries).toBe(5);
    expect(backoffMs(RETRY_LOOPS.OutsideTemporal.backoff, 1, () => 0.999)).toBe(499);
    expect(backoffMs(RETRY_LOOPS.OutsideTemporal.backoff, 30, () => 0.5)).toBe(15_000);
  });
});
