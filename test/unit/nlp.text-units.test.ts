import { describe, expect, it } from 'vitest';
import { createNlpActivities } from '../../activities/nlp/nlp-activities.ts';
import { textUnits } from '../../schemas/text-units.ts';
import type { CallUtterance } from '../../activities/nlp/call-text.ts';
import { dialogActsOutputSchema, sentimentOutputSchema } from '../../schemas/result.ts';
import { FakeService, MemoryStore, SAMPLE_UTTERANCES, asRetry, timeline, utterance } from './nlp.helpers.ts';

const said = (index: number, speaker: string, start: number, end: number, text: string): CallUtterance => ({
  utterance: utterance(index, speaker, start, end, text),
  text,
});

const call = [
  said(0, 'agent', 0, 2, 'お電話ありがとうございます'),
  said(1, 'agent', 3, 5, 'ご用件をどうぞ。'),
  said(2, 'customer', 6, 8, '請求書の件です'),
  said(3, 'customer', 9, 9.5, ''),
  said(4, 'agent', 10, 12, 'かしこまりました'),
  said(5, 'agent', 30, 41, '確認いたします'),
];

describe('textUnits', () => {
  it('utterance: one unit per utterance with text, as it is', () => {
    const units = textUnits(call, 'utterance', 30);
    expect(units.map((u) => u.text)).toEqual([
      'お電話ありがとうございます',
      'ご用件をどうぞ。',
      '請求書の件です',
      'かしこまりました',
      '確認いたします',
    ]);
  });

  it('turn: one speaker’s consecutive utterances as sentences, at most windowSeconds long', () => {
    const units = textUnits(call, 'turn', 30);
    expect(units.map((u) => u.utterances.map((x) => x.utterance.index))).toEqual([[0, 1], [2], [4], [5]]);
    expect(units[0]!.text).toBe('お電話ありがとうございます。ご用件をどうぞ。');
    // 10–41 s is longer than 30 s: the turn is cut.
    expect(textUnits(call, 'turn', 60).map((u) => u.utterances.length)).toEqual([2, 1, 2]);
  });

  it('window: a speaker’s utterances in fixed windows of its start time', () => {
    const units = textUnits(call, 'window', 10);
    expect(units.map((u) => u.utterances.map((x) => x.utterance.index))).toEqual([[0, 1], [2], [4], [5]]);
    expect(textUnits(call, 'window', 60).map((u) => u.utterances.length)).toEqual([4, 1]);
  });
});

describe('sentiment and dialog acts per turn', () => {
  function setup() {
    const store = new MemoryStore();
    void store.put('t/timeline.json', JSON.stringify(timeline(SAMPLE_UTTERANCES)));
    const service = new FakeService();
    const activities = createNlpActivities({ service: service.client, store });
    return { store, service, activities };
  }
  const base = { callId: 'call-1', timelineKey: 't/timeline.json' };

  it('one request per turn; every utterance of the turn carries its sentiment', async () => {
    const { store, service, activities } = setup();
    const out = await activities.analyzeSentiment({ ...base, outputKey: 't/s.json', grain: 'turn' });
    expect(out.status).toBe('ok');
    // agent 0 | customer 1 | agent 2 | customer 3, 4 (9.4–45 s is longer than 30 s: two turns) | agent 5
    expect(service.count('sentiment')).toBe(6);
    const doc = sentimentOutputSchema.parse(store.json('t/s.json'));
    expect(doc.grain).toBe('turn');
    expect(doc.cost.requests).toBe(6);
    const long = await activities.analyzeSentiment({
      ...base,
      outputKey: 't/s2.json',
      grain: 'turn',
      windowSeconds: 60,
    });
    expect(long.cost.requests).toBe(5);
    const joined = sentimentOutputSchema.parse(store.json('t/s2.json'));
    const of = (i: number) => joined.utterances.find((u) => u.index === i)!.sentiment;
    expect(of(3)).toEqual(of(4)); // one turn: one answer, the negative one of 困っている
    expect(of(4)).toMatchObject({ label: 'Negative' });
  });

  it('dialog acts: the speech acts of each unit on its utterances, the requests in the cost', async () => {
    const { store, service, activities } = setup();
    const out = await activities.classifyDialogActs({ ...base, outputKey: 't/d.json', grain: 'utterance' });
    expect(out).toMatchObject({ status: 'ok', outputKey: 't/d.json' });
    expect(service.count('sentenceType')).toBe(SAMPLE_UTTERANCES.length);
    const doc = dialogActsOutputSchema.parse(store.json('t/d.json'));
    expect(doc).toMatchObject({ step: 'dialogActs', grain: 'utterance', units: SAMPLE_UTTERANCES.length });
    const of = (i: number) => doc.utterances.find((u) => u.index === i)!.dialogActs;
    expect(of(0)).toContain('greeting');
    expect(of(2)).toContain('information-seeking');
    expect(of(5)).toEqual(['thanking', 'goodbye']);
    expect(doc.cost.requests).toBe(SAMPLE_UTTERANCES.length);
  });
});

describe('one request per distinct text (unit-requests.ts)', () => {
  // はい and そうですね said again and again, by both speakers: as a call's backchannels are.
  const lines: [string, number, string][] = [
    ['agent', 0, 'お電話ありがとうございます。'],
    ['customer', 3, 'はい'],
    ['agent', 6, '請求書の件ですね。'],
    ['customer', 9, 'はい'],
    ['agent', 12, 'そうですね'],
    ['customer', 15, 'はい'],
    ['agent', 18, 'そうですね'],
    ['customer', 21, 'ちょっと困っているんです'],
    ['agent', 24, 'そうですね'],
    ['customer', 27, 'はい'],
  ];
  const repeated = lines.map(([speaker, start, text], i) => utterance(i, speaker, start, start + 2, text));
  const distinct = new Set(lines.map(([, , text]) => text)).size;
  function setup() {
    const store = new MemoryStore();
    void store.put('t/timeline.json', JSON.stringify(timeline(repeated)));
    const service = new FakeService();
    const activities = createNlpActivities({ service: service.client, store });
    return { store, service, activities };
  }
  const base = { callId: 'call-1', timelineKey: 't/timeline.json' };

  it('sends a text said many times once, and gives every unit the answer a request of its own would get', async () => {
    const { store, service, activities } = setup();
    const acts = await activities.classifyDialogActs({ ...base, outputKey: 't/d.json', grain: 'utterance' });
    const sentiment = await activities.analyzeSentiment({
      ...base,
      outputKey: 't/s.json',
      grain: 'utterance',
    });
    expect(service.count('sentenceType')).toBe(distinct);
    expect(service.count('sentiment')).toBe(distinct);
    expect(distinct).toBeLessThan(repeated.length);
    expect(acts.cost.requests).toBe(distinct);
    expect(sentiment.cost.requests).toBe(distinct);
    // The answers, against one request per utterance to the same service.
    const perUnit = new FakeService();
    const doc = dialogActsOutputSchema.parse(store.json('t/d.json'));
    const felt = sentimentOutputSchema.parse(store.json('t/s.json'));
    expect(doc.units).toBe(repeated.length);
    for (const u of repeated) {
      const own = await perUnit.client.nlp.sentenceType(u.text);
      expect(doc.utterances.find((x) => x.index === u.index)!.dialogActs).toEqual(own.result.dialog_act);
      const mine = await perUnit.client.nlp.sentiment(u.text);
      expect(felt.utterances.find((x) => x.index === u.index)!.sentiment).toMatchObject({
        label: mine.result.sentiment,
        score: mine.result.score,
      });
    }
    expect(perUnit.count('sentenceType')).toBe(repeated.length);
    expect(felt.overall).toMatchObject({ utterances: repeated.length, negative: 1 });
  });

  it('a retried attempt answers the repeats of a text its checkpoint has, and asks only for the rest', async () => {
    const { store, service, activities } = setup();
    // The third distinct text (請求書の件ですね。) fails the first attempt: お電話… and はい are kept.
    service.failCalls([3], { kind: 'transient' });
    const input = { ...base, outputKey: 't/d.json', grain: 'utterance' as const, concurrency: 1 };
    await expect(activities.classifyDialogActs(input)).rejects.toMatchObject({ type: 'ServiceUnavailable' });
    const out = await asRetry(() => activities.classifyDialogActs(input));
    expect(out.status).toBe('ok');
    // 2 answered + 1 failed, then the failed one and the last distinct text again.
    expect(service.count('sentenceType')).toBe(3 + distinct - 2);
    const doc = dialogActsOutputSchema.parse(store.json('t/d.json'));
    const actsOf = (text: string) =>
      doc.utterances.filter((u) => repeated[u.index]!.text === text).map((u) => u.dialogActs);
    expect(new Set(actsOf('はい').map((a) => JSON.stringify(a))).size).toBe(1);
    expect(actsOf('はい')).toHaveLength(4);
    expect(doc.utterances.every((u) => u.dialogActs !== null)).toBe(true);
  });

  it('misrecognition checks: a doubtful line said twice is checked once, both keep the answer', async () => {
    const doubtful = [
      { ...utterance(0, 'customer', 0, 2, 'せいきゅうしょのけん'), confidence: 0.3 },
      { ...utterance(1, 'agent', 3, 5, 'はい'), confidence: 0.95 },
      { ...utterance(2, 'customer', 6, 8, 'せいきゅうしょのけん'), confidence: 0.4 },
    ];
    const store = new MemoryStore();
    void store.put('t/timeline.json', JSON.stringify(timeline(doubtful)));
    const service = new FakeService();
    const activities = createNlpActivities({ service: service.client, store });
    const out = await activities.checkQuality({
      ...base,
      outputKey: 't/q.json',
      checkBelow: 0.6,
      reviewBelow: 0.5,
    });
    expect(out.status).toBe('ok');
    expect(service.count('detectMisrecognition')).toBe(1);
    const doc = store.json('t/q.json') as { utterances: { index: number; misrecognition: unknown }[] };
    expect(doc.utterances.map((u) => u.index)).toEqual([0, 2]);
    expect(doc.utterances[0]!.misrecognition).toEqual(doc.utterances[1]!.misrecognition);
  });
});
