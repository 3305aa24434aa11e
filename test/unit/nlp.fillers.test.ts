import { describe, expect, it } from 'vitest';
import { alignResults, batchItems, combineSentences, fillerItemOf } from '../../activities/nlp/fillers.ts';
import { looseText } from '../../schemas/text-units.ts';
import { removeFiller } from '../../emulator/nlp/remove-filler.ts';
import { fillersOutputSchema } from '../../schemas/result.ts';
import { SAMPLE_UTTERANCES, nlpSetup, utterance, asRetry } from './nlp.helpers.ts';

const input = { callId: 'call-1', timelineKey: 'calls/c1/timeline.json', outputKey: 'calls/c1/fillers.json' };

function setup(utterances = SAMPLE_UTTERANCES) {
  return nlpSetup(input.timelineKey, utterances);
}

describe('fillers: pure parts', () => {
  it('adds a terminator only where the utterance has none, and skips utterances without words', () => {
    expect(fillerItemOf({ index: 0, text: ' はい ' })).toEqual({
      index: 0,
      text: 'はい。',
      terminated: true,
    });
    expect(fillerItemOf({ index: 1, text: '本当？' })).toEqual({
      index: 1,
      text: '本当？',
      terminated: false,
    });
    expect(fillerItemOf({ index: 2, text: '。' })).toBeUndefined();
    expect(fillerItemOf({ index: 3, text: '  ' })).toBeUndefined();
  });

  it('batches by characters and by count, never splitting an utterance', () => {
    const items = [10, 10, 10, 25].map((n, index) => ({ index, text: 'あ'.repeat(n), terminated: false }));
    expect(batchItems(items, 20, 10).map((b) => b.map((i) => i.index))).toEqual([[0, 1], [2], [3]]);
    expect(batchItems(items, 1000, 3).map((b) => b.length)).toEqual([3, 1]);
  });

  it('keeps the recorded sample: fillers and offsets into the normalized text, leading comma trimmed', () => {
    const parts = removeFiller('えーーっと、あの、何時に待ち合わせですっけ。', true);
    const u = combineSentences(7, parts, false);
    expect(u.normalizedText).toBe('えーっと、あの、何時に待ち合わせですっけ。');
    expect(u.fillers).toEqual([
      { text: 'えーっと、', begin: 0, end: 5 },
      { text: 'あの', begin: 5, end: 7 },
    ]);
    expect(u.cleanedText).toBe('何時に待ち合わせですっけ。');
    for (const f of u.fillers) expect(u.normalizedText.slice(f.begin, f.end)).toBe(f.text);
  });

  it('maps the sentences of a batch back to their utterances, several sentences per utterance included', () => {
    const items = [
      fillerItemOf({ index: 0, text: 'お電話ありがとうございます。佐藤です。' })!,
      fillerItemOf({ index: 1, text: 'えーっと、あの、請求書の件です' })!,
    ];
    const results = removeFiller(items.map((i) => i.text).join(''), true);
    expect(results).toHaveLength(3);
    const aligned = alignResults(items, results)!;
    expect(aligned.map((a) => a.length)).toEqual([2, 1]);
    const second = combineSentences(1, aligned[1]!, items[1]!.terminated);
    expect(second.cleanedText).toBe('請求書の件です');
    expect(second.normalizedText).toBe('えーっと、あの、請求書の件です');
  });

  it('refuses an alignment where a sentence spans two utterances', () => {
    const items = [
      fillerItemOf({ index: 0, text: 'はい。' })!,
      fillerItemOf({ index: 1, text: 'そうです。' })!,
    ];
    const joined = [
      { fillers: [], normalized_sentence: 'はい。そうです。', fixed_sentence: 'はい。そうです。' },
    ];
    expect(alignResults(items, joined)).toBeUndefined();
    expect(looseText('えーーっと、あの。')).toBe(looseText('えーっと あの'));
  });
});

describe('removeFillers activity', () => {
  it('cleans every utterance with one request for the whole short call', async () => {
    const { store, service, activities } = setup();
    const out = await activities.removeFillers(input);
    expect(out).toMatchObject({ status: 'ok', outputKey: input.outputKey });
    expect(service.count('removeFiller')).toBe(1);
    expect(out.cost.requests).toBe(1);
    const doc = fillersOutputSchema.parse(store.json(input.outputKey));
    expect(doc.utterances.map((u) => u.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(doc.utterances.map((u) => u.cleanedText)).toEqual([
      'お電話ありがとうございます。カスタマーセンターの佐藤でございます。',
      '請求書の件で電話しました',
      'ご契約者様ご本人でいらっしゃいますか。',
      'はい',
      'ちょっと困っているんです！',
      'ありがとうございました。',
    ]);
    expect(doc.utterances[1]!.fillers.map((f) => f.text)).toEqual(['えーっと、', 'あの']);
    expect(doc).toMatchObject({ batches: 1, fallbacks: 0 });
  });

  it('sends several batches when the call is long, and every request holds whole utterances', async () => {
    const many = Array.from({ length: 50 }, (_, i) =>
      utterance(i, i % 2 ? 'customer' : 'agent', i * 2, i * 2 + 1.5, `えー、${i}番目の発言です`),
    );
    const { store, service, activities } = setup(many);
    const out = await activities.removeFillers({ ...input, maxBatchChars: 200 });
    expect(out.status).toBe('ok');
    const requests = service.count('removeFiller');
    expect(requests).toBeGreaterThan(1);
    expect(requests).toBeLessThan(10);
    for (const call of service.calls) expect(String(call.input).length).toBeLessThanOrEqual(200);
    const doc = fillersOutputSchema.parse(store.json(input.outputKey));
    expect(doc.utterances.every((u, i) => u.cleanedText === `${i}番目の発言です`)).toBe(true);
  });

  it('falls back to one request per utterance when the service joins sentences across utterances', async () => {
    const { store, service, activities } = setup();
    service.removeFillerOverride = (text) => {
      // Answers the whole batch as one sentence: positions can no longer be mapped back.
      if (text.length < 40) return undefined;
      const [one] = removeFiller(text, false);
      return [one!];
    };
    const out = await activities.removeFillers(input);
    expect(out.status).toBe('ok');
    expect(service.count('removeFiller')).toBe(1 + SAMPLE_UTTERANCES.length);
    const doc = fillersOutputSchema.parse(store.json(input.outputKey));
    expect(doc.fallbacks).toBe(1);
    expect(doc.utterances[1]!.cleanedText).toBe('請求書の件で電話しました');
  });

  it('resumes from its checkpoint after a failed attempt and counts both attempts', async () => {
    const many = Array.from({ length: 30 }, (_, i) =>
      utterance(i, 'agent', i, i + 0.5, `あの、項目${i}です。`),
    );
    const { store, service, activities } = setup(many);
    // Batches 1 and 2 succeed, the third meets a 5xx: Temporal's to retry, with the progress kept.
    service.failCalls([3], { kind: 'transient' });
    const first = activities.removeFillers({ ...input, maxBatchChars: 100 });
    await expect(first).rejects.toMatchObject({ type: 'ServiceUnavailable', nonRetryable: false });
    expect(store.objects.has(`${input.outputKey}.checkpoint.json`)).toBe(true);
    const before = service.count('removeFiller');
    // Only a retried attempt (Temporal's attempt 2) looks for the checkpoint.
    const second = await asRetry(() => activities.removeFillers({ ...input, maxBatchChars: 100 }));
    expect(second.status).toBe('ok');
    const batches = fillersOutputSchema.parse(store.json(input.outputKey)).batches;
    // The second attempt only sends what the first did not finish.
    expect(service.count('removeFiller') - before).toBeLessThan(batches);
    expect(second.cost.requests).toBe(service.count('removeFiller'));
    expect(second.cost.retries).toBe(1); // the batch the first attempt lost, sent again
    expect(store.objects.has(`${input.outputKey}.checkpoint.json`)).toBe(false);
  });
});
