import { describe, expect, it } from 'vitest';
import { createNlpActivities } from '../../activities/nlp/nlp-activities.ts';
import {
  aggregateSentiment,
  quarterOf,
  sentimentValue,
  summarizeSentiment,
  toUtteranceSentiment,
} from '../../activities/nlp/sentiment.ts';
import { sentimentOutputSchema, type UtteranceSentiment } from '../../schemas/result.ts';
import { FakeService, MemoryStore, SAMPLE_UTTERANCES, timeline, utterance, asRetry } from './nlp.helpers.ts';

const input = { callId: 'call-1', timelineKey: 't/timeline.json', outputKey: 't/sentiment.json' };

function s(label: UtteranceSentiment['label'], score: number): UtteranceSentiment {
  return { label, score, value: sentimentValue(label, score), emotions: [] };
}

describe('sentiment scale and aggregates', () => {
  it('signs the score by label and clamps it', () => {
    expect(sentimentValue('Positive', 0.47)).toBe(0.47);
    expect(sentimentValue('Negative', 0.8)).toBe(-0.8);
    expect(sentimentValue('Neutral', 0.9)).toBe(0);
    expect(sentimentValue('Positive', 3)).toBe(1);
  });

  it('splits comma-joined emotion labels (安心,喜ぶ)', () => {
    const u = toUtteranceSentiment({
      sentiment: 'Positive',
      score: 0.5,
      emotional_phrase: [{ form: '好きです', emotion: '安心,喜ぶ' }],
    });
    expect(u.emotions).toEqual([{ form: '好きです', labels: ['安心', '喜ぶ'] }]);
  });

  it('aggregates counts, the mean and its label; empty gives nulls', () => {
    expect(aggregateSentiment([s('Positive', 0.6), s('Negative', 0.2), s('Neutral', 0.3)])).toEqual({
      utterances: 3,
      positive: 1,
      negative: 1,
      neutral: 1,
      meanValue: 0.133333,
      label: 'Positive',
    });
    expect(aggregateSentiment([s('Positive', 0.1), s('Negative', 0.1)]).label).toBe('Neutral');
    expect(aggregateSentiment([])).toMatchObject({ utterances: 0, meanValue: null, label: null });
  });

  it('puts an utterance in the quarter of its midpoint', () => {
    expect(quarterOf({ start: 0, end: 10 }, 100)).toBe(0);
    expect(quarterOf({ start: 20, end: 40 }, 100)).toBe(1);
    expect(quarterOf({ start: 99, end: 120 }, 100)).toBe(3);
    expect(quarterOf({ start: 5, end: 6 }, 0)).toBe(0);
  });

  it('summarizes per speaker and per quarter, each quarter per speaker too', () => {
    const utterances = [
      utterance(0, 'agent', 1, 2, 'a'),
      utterance(1, 'customer', 30, 32, 'b'),
      utterance(2, 'customer', 90, 95, 'c'),
    ];
    const per = new Map([
      [0, s('Positive', 0.5)],
      [1, s('Negative', 0.9)],
      [2, s('Positive', 0.3)],
    ]);
    const summary = summarizeSentiment(utterances, per, 100, ['agent', 'customer']);
    expect(summary.overall.utterances).toBe(3);
    expect(summary.bySpeaker.customer).toMatchObject({
      utterances: 2,
      positive: 1,
      negative: 1,
      meanValue: -0.3,
    });
    expect(summary.byQuarter.map((q) => q.overall.utterances)).toEqual([1, 1, 0, 1]);
    expect(summary.byQuarter[1]).toMatchObject({ start: 25, end: 50 });
    expect(summary.byQuarter[1]!.bySpeaker.customer!.label).toBe('Negative');
    expect(summary.byQuarter[1]!.bySpeaker.agent!.utterances).toBe(0);
  });
});

describe('analyzeSentiment activity', () => {
  function setup(fillers?: Record<number, string>) {
    const store = new MemoryStore();
    store.objects.set(input.timelineKey, JSON.stringify(timeline(SAMPLE_UTTERANCES)));
    if (fillers) {
      store.objects.set(
        't/fillers.json',
        JSON.stringify({
          step: 'fillers',
          callId: 'call-1',
          batches: 1,
          fallbacks: 0,
          cost: { requests: 1, retries: 0, bytesSent: 1, bytesReceived: 1 },
          utterances: SAMPLE_UTTERANCES.map((u) => ({
            index: u.index,
            normalizedText: u.text,
            cleanedText: fillers[u.index] ?? u.text,
            fillers: [],
          })),
        }),
      );
    }
    const service = new FakeService();
    const activities = createNlpActivities({
      service: service.client,
      store,
      options: { requestBaseDelayMs: 1, requestMaxDelayMs: 2 },
    });
    return { store, service, activities };
  }

  it('one request per utterance with text, on the cleaned text, and the aggregates in the output', async () => {
    const { store, service, activities } = setup({ 1: '請求書の件で電話しました', 3: '' });
    const out = await activities.analyzeSentiment({ ...input, fillersKey: 't/fillers.json' });
    expect(out.status).toBe('ok');
    expect(service.count('sentiment')).toBe(5); // utterance 3 has no text left
    expect(service.calls.map((c) => c.input)).toContain('請求書の件で電話しました');
    const doc = sentimentOutputSchema.parse(store.json(input.outputKey));
    expect(doc.utterances.find((u) => u.index === 3)!.sentiment).toBeNull();
    expect(doc.utterances.find((u) => u.index === 4)!.sentiment).toMatchObject({
      label: 'Negative',
      value: -0.8,
    });
    expect(doc.bySpeaker.customer).toMatchObject({ utterances: 2, negative: 1 });
    expect(doc.byQuarter.map((q) => q.overall.utterances)).toEqual([3, 1, 0, 1]);
    expect(doc.cost.requests).toBe(5);
  });

  it('retries a blocked request inside the attempt and counts the retry', async () => {
    const { service, activities } = setup();
    service.failNext({ kind: 'rateLimited', code: 99997 }, 2);
    const out = await activities.analyzeSentiment(input);
    expect(out.status).toBe('ok');
    expect(out.cost.retries).toBe(2);
    expect(out.cost.requests).toBe(SAMPLE_UTTERANCES.length + 2);
  });

  it('keeps its progress across attempts: the retried attempt asks only for what is missing', async () => {
    const { service, activities } = setup();
    // A 5xx leaves the attempt to Temporal (schemas/retry-table.ts); the checkpoint keeps the progress.
    service.failCalls([3], { kind: 'transient' });
    await expect(activities.analyzeSentiment({ ...input, concurrency: 1 })).rejects.toMatchObject({
      type: 'ServiceUnavailable',
    });
    expect(service.count('sentiment')).toBe(3);
    // Only a retried attempt (Temporal's attempt 2) looks for the checkpoint.
    const out = await asRetry(() => activities.analyzeSentiment({ ...input, concurrency: 1 }));
    expect(out.status).toBe('ok');
    expect(service.count('sentiment')).toBe(3 + SAMPLE_UTTERANCES.length - 2);
    expect(out.cost).toMatchObject({ requests: service.count('sentiment'), retries: 1 });
  });

  it('a first attempt looks for no checkpoint: a reset workflow starts the step over', async () => {
    const { service, activities } = setup();
    service.failCalls([3], { kind: 'transient' });
    await expect(activities.analyzeSentiment({ ...input, concurrency: 1 })).rejects.toMatchObject({
      type: 'ServiceUnavailable',
    });
    const out = await activities.analyzeSentiment({ ...input, concurrency: 1 });
    expect(out.status).toBe('ok');
    expect(service.count('sentiment')).toBe(3 + SAMPLE_UTTERANCES.length);
  });

  it('a quota error leaves as a retryable failure with a long delay; auth as non-retryable', async () => {
    const { service, activities } = setup();
    service.failNext({ kind: 'quota', code: 99996 });
    await expect(activities.analyzeSentiment(input)).rejects.toMatchObject({
      type: 'ServiceQuotaExhausted',
      nonRetryable: false,
      nextRetryDelay: 900_000,
    });
    service.failNext({ kind: 'auth', code: 99998 });
    await expect(activities.analyzeSentiment({ ...input, outputKey: 't/other.json' })).rejects.toMatchObject({
      type: 'ServiceAuthFailed',
      nonRetryable: true,
    });
  });
});
