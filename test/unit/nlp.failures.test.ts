import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { NLP_FAILURE_TYPES, stepErrorOutcome, StepInputError } from '../../activities/nlp/failures.ts';
import { ServiceError, type ServiceErrorKind } from '../../service/index.ts';

function serviceError(
  kind: ServiceErrorKind,
  extra: Partial<ConstructorParameters<typeof ServiceError>[0]> = {},
) {
  return new ServiceError({
    kind,
    message: `/nlp/v1/sentiment failed (${kind})`,
    endpoint: '/nlp/v1/sentiment',
    ...extra,
  });
}

function thrown(outcome: ReturnType<typeof stepErrorOutcome>): ApplicationFailure {
  expect(outcome.kind).toBe('throw');
  const error = (outcome as { error: unknown }).error;
  expect(error).toBeInstanceOf(ApplicationFailure);
  return error as ApplicationFailure;
}

describe('stepErrorOutcome', () => {
  it('rateLimited: retryable, with the service delay when it gave one', () => {
    const f = thrown(
      stepErrorOutcome('sentiment', serviceError('rateLimited', { code: 99997, retryAfterMs: 7000 }), 1),
    );
    expect(f.type).toBe(NLP_FAILURE_TYPES.rateLimited);
    expect(f.nonRetryable).toBe(false);
    expect(f.nextRetryDelay).toBe(7000);
  });

  it('rateLimited without a hint: jittered exponential backoff growing with the attempt', () => {
    const delay = (attempt: number, r: number) =>
      Number(
        thrown(stepErrorOutcome('s', serviceError('rateLimited'), attempt, { random: () => r }))
          .nextRetryDelay,
      );
    expect(delay(1, 0.5)).toBe(500);
    expect(delay(3, 0.5)).toBe(2000);
    expect(delay(20, 0.999)).toBeLessThanOrEqual(60_000);
    expect(delay(1, 0)).toBeGreaterThan(0);
    const draws = new Set([0.1, 0.4, 0.9].map((r) => delay(4, r)));
    expect(draws.size).toBe(3);
  });

  it('quota: retryable after a long, configurable delay, saying the quota is exhausted', () => {
    const daily = thrown(stepErrorOutcome('summary', serviceError('quota', { code: 99996 }), 1));
    expect(daily.type).toBe(NLP_FAILURE_TYPES.quota);
    expect(daily.nonRetryable).toBe(false);
    expect(daily.nextRetryDelay).toBe(15 * 60_000);
    expect(daily.message).toMatch(/quota exhausted.*24-hour/);
    const preset = thrown(
      stepErrorOutcome('summary', serviceError('quota', { code: 99995 }), 1, { quotaDelayMs: 120_000 }),
    );
    expect(preset.nextRetryDelay).toBe(120_000);
    expect(preset.message).toMatch(/preset usage limit/);
    expect(preset.message).toMatch(/waiting 2 min/);
  });

  it('auth: non-retryable, says what to check, carries no secret', () => {
    const f = thrown(stepErrorOutcome('keywords', serviceError('auth', { code: 99998 }), 1));
    expect(f.type).toBe(NLP_FAILURE_TYPES.auth);
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toMatch(/client id and secret/);
    expect(JSON.stringify(f.details)).not.toMatch(/Bearer|secret-value/);
  });

  it('invalid: the step fails with its reason instead of throwing', () => {
    const outcome = stepErrorOutcome('summary', serviceError('invalid', { code: 17001 }), 1);
    expect(outcome).toEqual({ kind: 'stepFailed', reason: 'summary: /nlp/v1/sentiment failed (invalid)' });
    expect(stepErrorOutcome('x', new StepInputError('no text'), 1)).toEqual({
      kind: 'stepFailed',
      reason: 'no text',
    });
  });

  it('transient and session: retryable with Temporal’s own backoff', () => {
    for (const kind of ['transient', 'session'] as const) {
      const f = thrown(stepErrorOutcome('fillers', serviceError(kind), 2));
      expect(f.type).toBe(NLP_FAILURE_TYPES.unavailable);
      expect(f.nonRetryable).toBe(false);
      expect(f.nextRetryDelay).toBeUndefined();
    }
  });

  it('a staging document of the wrong shape is non-retryable; other errors pass through', () => {
    const zodError = z.object({ a: z.string() }).safeParse({}).error!;
    const f = thrown(stepErrorOutcome('fillers', zodError, 1));
    expect(f.type).toBe(NLP_FAILURE_TYPES.invalidInput);
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toMatch(/\ba\b/);
    const plain = new Error('socket hang up');
    expect(stepErrorOutcome('fillers', plain, 1)).toEqual({ kind: 'throw', error: plain });
  });
});
