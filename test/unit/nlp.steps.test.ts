import { describe, expect, it } from 'vitest';
import { callSentences } from '../../activities/nlp/keywords.ts';
import { dialogDocument } from '../../activities/nlp/summary.ts';
import { keywordsOutputSchema, summaryOutputSchema } from '../../schemas/result.ts';
import { SAMPLE_UTTERANCES, nlpSetup, utterance } from './nlp.helpers.ts';

const base = { callId: 'call-1', timelineKey: 't/timeline.json' };

function setup(utterances = SAMPLE_UTTERANCES) {
  return nlpSetup(base.timelineKey, utterances);
}

describe('summarizeCall', () => {
  it('sends the dialog in time order, without speaker labels, with extract-cc', async () => {
    const shuffled = [SAMPLE_UTTERANCES[2]!, SAMPLE_UTTERANCES[0]!, SAMPLE_UTTERANCES[1]!];
    const { store, service, activities } = setup(shuffled);
    const out = await activities.summarizeCall({ ...base, outputKey: 't/summary.json', sentLen: 2 });
    expect(out.status).toBe('ok');
    const call = service.calls.find((c) => c.endpoint === 'summarize')!;
    expect(String(call.input).split('\n')).toEqual([0, 1, 2].map((i) => SAMPLE_UTTERANCES[i]!.text));
    expect(String(call.input)).not.toMatch(/agent|customer/);
    expect(call.options).toMatchObject({ mode: 'extract-cc', sentLen: 2 });
    const doc = summaryOutputSchema.parse(store.json('t/summary.json'));
    expect(doc).toMatchObject({
      text: SAMPLE_UTTERANCES[0]!.text,
      mode: 'extract-cc',
      levels: 1,
      windows: 1,
    });
    expect(doc.documentChars).toBe(String(call.input).length);
  });

  it('a call without words has an empty summary and costs no request', async () => {
    const { store, service, activities } = setup([utterance(0, 'agent', 0, 1, '  ')]);
    const out = await activities.summarizeCall({ ...base, outputKey: 't/summary.json' });
    expect(out).toMatchObject({ status: 'ok', cost: { requests: 0 } });
    expect(service.calls).toHaveLength(0);
    expect(summaryOutputSchema.parse(store.json('t/summary.json')).text).toBe('');
  });

  it('invalid input fails the step with its reason, without throwing', async () => {
    const { store, service, activities } = setup();
    service.failNext({ kind: 'invalid', code: 17001 });
    const out = await activities.summarizeCall({ ...base, outputKey: 't/summary.json' });
    expect(out.status).toBe('failed');
    expect(out.reason).toMatch(/^summary: .*invalid/);
    expect(out.cost.requests).toBe(1);
    expect(store.objects.has('t/summary.json')).toBe(false);
  });

  it('dialogDocument drops empty utterances and word-for-word repeats', () => {
    const doc = dialogDocument([
      { utterance: SAMPLE_UTTERANCES[0]!, text: 'a。' },
      { utterance: SAMPLE_UTTERANCES[1]!, text: '' },
      { utterance: SAMPLE_UTTERANCES[2]!, text: 'b。' },
      { utterance: SAMPLE_UTTERANCES[0]!, text: 'a。' },
    ]);
    expect(doc).toBe('a。\nb。');
  });
});

describe('extractKeywords', () => {
  it('sends the call as an array of sentences with max_keyword_num', async () => {
    const { store, service, activities } = setup();
    const out = await activities.extractKeywords({ ...base, outputKey: 't/keywords.json', maxKeywords: 1 });
    expect(out.status).toBe('ok');
    const call = service.calls.find((c) => c.endpoint === 'keyword')!;
    expect(call.input).toEqual(callSentences(SAMPLE_UTTERANCES.map((u) => ({ utterance: u, text: u.text }))));
    expect((call.input as string[])[0]).toBe('お電話ありがとうございます。');
    expect((call.input as string[])[1]).toBe('カスタマーセンターの佐藤でございます。');
    expect(call.options).toMatchObject({ maxKeywords: 1 });
    const doc = keywordsOutputSchema.parse(store.json('t/keywords.json'));
    expect(doc).toMatchObject({ maxKeywords: 1, keywords: [{ text: '請求書', score: 10 }] });
  });

  it('defaults to 10 keywords, and a silent call has none without a request', async () => {
    const { service, activities } = setup();
    await activities.extractKeywords({ ...base, outputKey: 't/keywords.json' });
    expect(service.calls[0]!.options).toMatchObject({ maxKeywords: 10 });
    const silent = setup([]);
    const out = await silent.activities.extractKeywords({ ...base, outputKey: 't/k.json' });
    expect(out.status).toBe('ok');
    expect(silent.service.calls).toHaveLength(0);
  });

  it('a timeline that is not a Timeline is a non-retryable failure naming the field', async () => {
    const { store, activities } = setup();
    store.objects.set(base.timelineKey, JSON.stringify({ callId: 'c', utterances: 'nope' }));
    await expect(activities.extractKeywords({ ...base, outputKey: 't/k.json' })).rejects.toMatchObject({
      type: 'InvalidStepInput',
      nonRetryable: true,
    });
  });
});

describe('request pacing', () => {
  it('spaces requests evenly at the configured rate, and is off by default', async () => {
    const { createPacer, unpaced } = await import('../../activities/nlp/pacing.ts');
    expect(createPacer(undefined)).toBe(unpaced);
    // A fake clock: a wait moves it by exactly what was asked, so the schedule is checked exactly.
    let now = 1000;
    const waits: number[] = [];
    const pacer = createPacer(
      50, // 20 ms apart
      () => now,
      async (ms) => {
        waits.push(ms);
        now += ms;
      },
    );
    const sentAt: number[] = [];
    for (let i = 0; i < 6; i++) {
      await pacer.acquire();
      sentAt.push(now);
    }
    expect(sentAt).toEqual([1000, 1020, 1040, 1060, 1080, 1100]);
    // A caller that comes after its slot has passed does not wait, and the next slot is 20 ms after it.
    now = 1500;
    await pacer.acquire();
    await pacer.acquire();
    expect(waits).toEqual([20, 20, 20, 20, 20, 20]);
    expect(now).toBe(1520);
  });

  it('waits on the real clock by default: six slots take at least five intervals', async () => {
    const { createPacer } = await import('../../activities/nlp/pacing.ts');
    const pacer = createPacer(50);
    const started = performance.now();
    for (let i = 0; i < 6; i++) await pacer.acquire();
    // A lower bound only: how much longer a loaded machine takes is not the pacer's rule.
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
  });
});
