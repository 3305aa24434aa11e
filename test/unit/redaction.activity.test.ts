/**
 * The redaction step and what follows it, on the phrasebook's personal-data exchanges: the text activity
 * (named entities from the emulator's extraction, in windows, with its checkpoint), every later text
 * step reading the redacted timeline, and the writer: a result.json and transcript.vtt holding none of
 * the values, records of kind and position, and the unredacted copy under its own prefix.
 */
import { describe, expect, it } from 'vitest';
import { createNlpActivities } from '../../activities/nlp/nlp-activities.ts';
import { insightsThenPublish, stereoCallFacts } from './result.helpers.ts';
import type { ResultFacts } from '../../activities/storage/result-document.ts';
import { unmask } from '../../activities/storage/unredacted-copy.ts';
import { loadPhrasebook } from '../../emulator/phrasebook.ts';
import { callOutputKeys } from '../../schemas/call-keys.ts';
import { redactionOutputSchema, resultDocumentSchema, type ResultDocument } from '../../schemas/result.ts';
import { PERSONAL_DATA_EXCHANGES } from '../../schemas/synthetic-recording.ts';
import { timelineSchema, type Utterance } from '../../schemas/transcript.ts';
import { FakeService, MemoryStore, timeline, utterance, asRetry } from './nlp.helpers.ts';

const book = loadPhrasebook();

/** The exchanges as a stereo call: questions on the agent, answers on the customer, 3 s apart. */
function exchangeCall(): Utterance[] {
  const out: Utterance[] = [];
  let t = 0;
  const say = (speaker: string, id: number) => {
    out.push(utterance(out.length, speaker, t, t + 2.5, book.get(id)!));
    t += 3;
  };
  say('agent', 4);
  for (const e of PERSONAL_DATA_EXCHANGES) {
    say('agent', e.ask);
    for (const id of e.answer) say('customer', id);
    if (e.reply) say('agent', e.reply);
  }
  say('customer', 112);
  say('agent', 13);
  return out;
}

/** Every value the exchanges give, as said, and as digits where it is a number. */
const VALUES = [
  '鈴木花子',
  '千九百八十五年四月十日',
  '090-1234-5678',
  '09012345678',
  '〇九〇',
  '八七六五の四三二一',
  'ゼロサン、イチニーサンヨン、ゴーロクナナハチ',
  '4111 1111 1111 1111',
  '4111111111111111',
  '1234 5678 9018',
  '一五〇の〇〇四一',
  '東京都渋谷区',
  '神南一丁目二番三号',
  'hanako.suzuki@example.co.jp',
  '七六五四三二一',
];

const KEYS = {
  timeline: 's/timeline.json',
  redacted: 's/timeline.redacted.json',
  redaction: 's/redaction.json',
};

function setup(utterances = exchangeCall(), maxWindowChars?: number) {
  const store = new MemoryStore();
  store.objects.set(KEYS.timeline, JSON.stringify(timeline(utterances, 120)));
  const service = new FakeService();
  const activities = createNlpActivities({
    service: service.client,
    store,
    options: { requestBaseDelayMs: 1 },
  });
  const redact = () =>
    activities.redactText({
      callId: 'call-1',
      timelineKey: KEYS.timeline,
      outputKey: KEYS.redaction,
      redactedTimelineKey: KEYS.redacted,
      ...(maxWindowChars ? { maxWindowChars } : {}),
    });
  return { store, service, activities, redact, utterances };
}

describe('redactText', () => {
  it('finds every kind the exchanges give, masks each in the redacted timeline, and stages no value', async () => {
    const { store, service, redact, utterances } = setup();
    const out = await redact();
    expect(out.status).toBe('ok');
    const masked = timelineSchema.parse(store.json(KEYS.redacted));
    const staged = redactionOutputSchema.parse(store.json(KEYS.redaction));
    expect(masked.utterances).toHaveLength(utterances.length);
    for (const value of VALUES) {
      expect(store.objects.get(KEYS.redacted), value).not.toContain(value);
      expect(store.objects.get(KEYS.redaction), value).not.toContain(value);
    }
    expect(staged.counts).toMatchObject({
      name: 2,
      birthDate: 1,
      phone: 4, // 090-…, 〇九〇 + its second half, the katakana landline
      cardNumber: 1,
      myNumber: 1,
      postalCode: 1,
      email: 1,
      bankAccount: 1,
    });
    expect(staged.counts.address).toBeGreaterThanOrEqual(1);
    // Ordinary lines stay word for word; one request for this short call.
    expect(masked.utterances[0]!.text).toBe(book.get(4));
    expect(masked.utterances.at(-1)!.text).toBe(book.get(13));
    expect(masked.utterances.at(-2)!.text).toBe(book.get(112));
    expect(staged.windows).toBe(1);
    expect(service.count('namedEntities')).toBe(1);
    expect(out.cost.requests).toBe(1);
    // Each record's mask is where it says, in the redacted text.
    for (const u of staged.utterances) {
      const text = masked.utterances.find((m) => m.index === u.index)!.text;
      for (const r of u.redactions) expect(text.slice(r.begin, r.end)).toMatch(/^\[.+\]$/);
    }
  });

  it('sends whole turns in windows, and a retried attempt asks only for the windows it lacks', async () => {
    const { service, redact } = setup(exchangeCall(), 80);
    service.failCalls([3], { kind: 'transient' });
    await expect(redact()).rejects.toMatchObject({ type: 'ServiceUnavailable' });
    expect(service.count('namedEntities')).toBe(3);
    // Only a retried attempt (Temporal's attempt 2) looks for the checkpoint.
    const out = await asRetry(redact);
    expect(out.status).toBe('ok');
    const windows = service.calls.filter((c) => c.endpoint === 'namedEntities').map((c) => String(c.input));
    for (const w of windows) expect(w.length).toBeLessThanOrEqual(80);
    // Windows 1 and 2 were kept: the second attempt started again at the failed one.
    expect(windows[3]).toBe(windows[2]);
    expect(new Set(windows.slice(3)).size).toBe(windows.length - 3);
  });

  it('a window the service refuses fails the step (fail-closed): nothing redacted is staged', async () => {
    const { store, service, redact } = setup();
    service.failNext({ kind: 'invalid', code: 400 }, 1, 'namedEntities');
    const out = await redact();
    expect(out).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^redaction: /) });
    expect(store.objects.has(KEYS.redacted)).toBe(false);
    expect(store.objects.has(KEYS.redaction)).toBe(false);
  });
});

/** The facts of a 120-s stereo call, as the workflow sends them. */
const facts: ResultFacts = stereoCallFacts({
  source: { bucket: 'in', key: 'calls/pii.wav' },
  durationSeconds: 120,
  sizeBytes: 3_840_044,
  fingerprint: 'sha256:ab',
  workflowId: 'w',
  startedAt: '2026-11-23T00:00:00.000Z',
  recognitionRequests: 10,
});

describe('after redaction: the text steps, result.json, transcript.vtt and the unredacted copy', () => {
  async function processed() {
    const env = setup();
    expect((await env.redact()).status).toBe('ok');
    const base = { callId: 'call-1', timelineKey: KEYS.redacted };
    const fillers = await env.activities.removeFillers({ ...base, outputKey: 's/fillers.json' });
    const step = { ...base, fillersKey: fillers.outputKey };
    await env.activities.summarizeCall({ ...step, outputKey: 's/summary.json' });
    await env.activities.analyzeSentiment({ ...step, outputKey: 's/sentiment.json' });
    await env.activities.extractKeywords({ ...step, outputKey: 's/keywords.json' });
    const output = callOutputKeys({ bucket: 'results', prefix: 'results/' }, 'call-1', {
      bucket: 'restricted',
      prefix: 'unredacted/',
    });
    await insightsThenPublish(
      { store: env.store },
      {
        callId: 'call-1',
        output,
        timelineKey: KEYS.redacted,
        recognizedTimelineKey: KEYS.timeline,
        redactionKey: KEYS.redaction,
        fillersKey: 's/fillers.json',
        summaryKey: 's/summary.json',
        sentimentKey: 's/sentiment.json',
        keywordsKey: 's/keywords.json',
        stepFailures: [],
        facts,
      },
    );
    const results = env.store.withBucket('results');
    const restricted = env.store.withBucket('restricted');
    return {
      ...env,
      results,
      restricted,
      doc: resultDocumentSchema.parse(results.json('results/call-1/result.json')),
      copy: resultDocumentSchema.parse(restricted.json('unredacted/call-1/result.json')),
    };
  }

  it('every step read redacted text: no value anywhere in the results bucket, every utterance there', async () => {
    const { service, results, doc, utterances } = await processed();
    for (const call of service.calls.filter((c) => c.endpoint !== 'namedEntities')) {
      for (const value of VALUES)
        expect(JSON.stringify(call.input), `${call.endpoint}: ${value}`).not.toContain(value);
    }
    for (const [key, body] of results.objects) {
      for (const value of VALUES) expect(body, `${key}: ${value}`).not.toContain(value);
    }
    expect(doc.utterances).toHaveLength(utterances.length);
    expect(doc.redaction).toMatchObject({ applied: true, unredactedCopy: true, audio: { status: 'off' } });
    expect(doc.redaction!.total).toBe(doc.utterances.reduce((n, u) => n + (u.redactions?.length ?? 0), 0));
    expect(doc.redaction!.detectors).toEqual(['ne', 'pattern']);
    // No keyword came from a mask.
    for (const k of doc.keywords ?? []) expect(k.text).not.toMatch(/氏名|電話番号|住所|[[\]]/);
    expect(doc.processing.requests.redaction).toMatchObject({ requests: 1 });
    const vtt = results.objects.get('results/call-1/transcript.vtt')!;
    expect(vtt).toContain('[電話番号]');
  });

  it('the unredacted copy has the recognized words back, in every text, with records where the values are', async () => {
    const { copy, doc, restricted, utterances } = await processed();
    expect(copy.redaction).toMatchObject({ applied: false });
    const byIndex = (d: ResultDocument, i: number) => d.utterances.find((u) => u.index === i)!;
    for (const u of utterances) {
      const plain = byIndex(copy, u.index);
      expect(plain.text).toBe(u.text);
      for (const r of plain.redactions ?? [])
        expect(plain.text.slice(r.begin, r.end).length).toBeGreaterThan(0);
      // Cleaned text is the redacted one's with the values put back: no mask left, fillers positions valid.
      expect(plain.cleanedText).not.toMatch(/\[[^\]]+\]/);
      for (const f of plain.fillers) expect(plain.normalizedText!.slice(f.begin, f.end)).toBe(f.text);
    }
    const card = utterances.find((u) => u.text.includes('4111'))!;
    expect(byIndex(copy, card.index).cleanedText).toContain('4111 1111 1111 1111');
    expect(byIndex(doc, card.index).cleanedText).toContain('[カード番号]');
    expect(restricted.objects.get('unredacted/call-1/transcript.vtt')).toContain(
      'hanako.suzuki@example.co.jp',
    );
    // What was computed from text is the same in both copies.
    expect(copy.summary).toEqual(doc.summary);
    expect(copy.keywords).toEqual(doc.keywords);
  });

  it('unmask replaces masks in order and moves the positions after them', () => {
    const out = unmask('はい[氏名]です。[電話番号]まで', [
      { mask: '[氏名]', value: '山田' },
      { mask: '[電話番号]', value: '090-1234-5678' },
    ]);
    expect(out.text).toBe('はい山田です。090-1234-5678まで');
    expect(out.moved(0)).toBe(0);
    expect(out.moved(6)).toBe(4); // after [氏名] (4 characters) came 山田 (2)
    expect(out.text.slice(out.moved(15), out.moved(15) + 2)).toBe('まで');
  });
});
