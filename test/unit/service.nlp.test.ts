import { afterEach, describe, expect, it } from 'vitest';
import { createServiceClient } from '../../service/client.ts';
import { CostMeter } from '../../service/cost.ts';
import { ServiceError } from '../../service/errors.ts';
import { splitSentences, windowsOf, cutLongSentence } from '../../service/nlp/sentences.ts';
import {
  fakeConfig,
  startFakeServer,
  TEST_TOKEN,
  tokenAnswer,
  type FakeServer,
  type RecordedRequest,
} from './service.fake-server.ts';

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function bodyOf(req: RecordedRequest): Record<string, unknown> {
  return JSON.parse(req.body.toString()) as Record<string, unknown>;
}

describe('sentence windows', () => {
  it('splits at Japanese and ASCII sentence ends and line breaks, losing nothing', () => {
    const text =
      '前線が停滞しています。一方、高気圧が…覆っています！\n東京は「雨」でしょう？It is 3.5 degrees. Fine';
    const parts = splitSentences(text);
    expect(parts).toEqual([
      '前線が停滞しています。',
      '一方、高気圧が…覆っています！',
      '\n',
      '東京は「雨」でしょう？',
      'It is 3.5 degrees.',
      ' Fine',
    ]);
    expect(parts.join('')).toBe(text);
  });
  it('packs whole sentences into windows of at most the limit', () => {
    const sentence = 'あ'.repeat(29) + '。';
    const text = sentence.repeat(10);
    const windows = windowsOf(text, 100);
    expect(windows.map((w) => w.length)).toEqual([90, 90, 90, 30]);
    expect(windows.every((w) => w.endsWith('。'))).toBe(true);
    expect(windows.join('')).toBe(text);
  });
  it('cuts a sentence longer than a window at a comma, else hard, never in a surrogate pair', () => {
    expect(cutLongSentence('ああああ、いいいいいい', 8)).toEqual(['ああああ、', 'いいいいいい']);
    const emoji = 'a'.repeat(7) + '😀' + 'b';
    expect(cutLongSentence(emoji, 8)).toEqual(['a'.repeat(7), '😀b']);
  });
});

describe('nlp calls against a fake service: requests and results', () => {
  it('sentiment, keyword and removeFiller send the spec bodies and return typed results with cost', async () => {
    server = await startFakeServer((req) => {
      if (req.path.includes('oauth')) return tokenAnswer();
      if (req.path.endsWith('/sentiment'))
        return {
          status: 200,
          body: {
            result: {
              sentiment: 'Negative',
              score: 0.3,
              emotional_phrase: [{ form: '困る', emotion: '不安,嫌' }],
            },
            status: 0,
            message: 'OK',
          },
        };
      if (req.path.endsWith('/keyword'))
        return { status: 200, body: { result: [{ form: '請求', score: 3.2 }], status: 0, message: '' } };
      return {
        status: 200,
        body: {
          result: [
            {
              fillers: [{ begin_pos: 0, end_pos: 2, form: 'あの' }],
              normalized_sentence: 'あの、はい。',
              fixed_sentence: '、はい。',
            },
          ],
          status: 0,
          message: 'OK',
        },
      };
    });
    const client = createServiceClient(fakeConfig(server.url));
    const meter = new CostMeter();
    const s = await client.nlp.sentiment('困ります。', { meter });
    expect(s.result.sentiment).toBe('Negative');
    expect(s.cost).toMatchObject({ requests: 2, retries: 0 }); // token + call
    const k = await client.nlp.keyword(['請求について。', '', '確認します。'], { maxKeywords: 3, meter });
    expect(k.result[0]!.form).toBe('請求');
    const f = await client.nlp.removeFiller('あの、はい。', { meter });
    expect(f.result[0]!.fixed_sentence).toBe('、はい。');
    expect(meter.requests).toBe(4);
    const calls = server.requests.filter((r) => !r.path.includes('oauth'));
    expect(calls.map((r) => r.path)).toEqual([
      '/api/dev/nlp/v1/sentiment',
      '/api/dev/nlp/v1/keyword',
      '/api/dev/nlp/beta/remove_filler',
    ]);
    expect(calls[0]!.headers.authorization).toBe(`Bearer ${TEST_TOKEN}`);
    expect(calls[0]!.headers['content-type']).toBe('application/json;charset=UTF-8');
    expect(bodyOf(calls[1]!)).toEqual({ document: ['請求について。', '確認します。'], max_keyword_num: 3 });
    expect(bodyOf(calls[2]!)).toEqual({ text: 'あの、はい。', do_segment: false });
  });
});

describe('nlp calls against a fake service: failures and limits', () => {
  it('invalid input fails before any request', async () => {
    server = await startFakeServer(() => tokenAnswer());
    const client = createServiceClient(fakeConfig(server.url));
    await expect(client.nlp.sentiment('')).rejects.toMatchObject({
      kind: 'invalid',
      detail: 'sentence: sentence must not be empty',
    });
    await expect(client.nlp.keyword([])).rejects.toMatchObject({ kind: 'invalid' });
    await expect(client.nlp.keyword(['a'], { maxKeywords: 0 })).rejects.toMatchObject({ kind: 'invalid' });
    await expect(client.nlp.summarize('十分な長さの文書です。', { sentLen: 101 })).rejects.toMatchObject({
      kind: 'invalid',
    });
    await expect(client.nlp.summarize('十分な長さの文書です。', { charLen: 9 })).rejects.toMatchObject({
      kind: 'invalid',
    });
    await expect(
      client.nlp.summarize('十分な長さの文書です。', { sentLen: 1, charLen: 100 }),
    ).rejects.toMatchObject({ kind: 'invalid' });
    await expect(
      client.nlp.summarize('十分な長さの文書です。', { mode: 'extract', sentLen: 1 }),
    ).rejects.toMatchObject({ kind: 'invalid', detail: expect.stringContaining('lang') });
    await expect(client.nlp.summarize('   ')).rejects.toMatchObject({ kind: 'invalid' });
    expect(server.requests).toHaveLength(0);
  });

  it('an envelope error at HTTP 200 is classified from its code, with the cost so far', async () => {
    server = await startFakeServer((req) =>
      req.path.includes('oauth')
        ? tokenAnswer()
        : { status: 200, body: { result: null, status: 99997, message: 'Too many requests' } },
    );
    const client = createServiceClient(fakeConfig(server.url));
    const err = (await client.nlp.sentiment('はい。').catch((e: unknown) => e)) as ServiceError;
    expect(err).toMatchObject({
      kind: 'rateLimited',
      code: 99997,
      httpStatus: 200,
      endpoint: '/nlp/v1/sentiment',
    });
    expect(err.cost).toMatchObject({ requests: 2 });
  });

  it('the per-process limit bounds text requests in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    // The first requests are held until three are in flight, however slowly they arrive, so the peak
    // reaches the limit on any machine (a limit below three never opens the gate); every request is then
    // held a little longer, so that a fourth one sent too early would overlap and raise the peak.
    let openGate = () => {};
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    server = await startFakeServer(async (req) => {
      if (req.path.includes('oauth')) return tokenAnswer();
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      if (inFlight === 3) openGate();
      await gate;
      await new Promise((r) => setTimeout(r, 20));
      inFlight -= 1;
      return {
        status: 200,
        body: { result: { sentiment: 'Neutral', score: 0, emotional_phrase: [] }, status: 0, message: 'OK' },
      };
    });
    const client = createServiceClient(fakeConfig(server.url), { concurrency: { nlp: 3 } });
    await Promise.all(Array.from({ length: 12 }, () => client.nlp.sentiment('はい。')));
    expect(peak).toBe(3);
  });
});

describe('summarize', () => {
  function summaryServer() {
    return startFakeServer((req) => {
      if (req.path.includes('oauth')) return tokenAnswer();
      const body = bodyOf(req);
      const doc = body.document as string;
      if (doc.length > 5000 || doc.length < 10)
        return { status: 400, body: { status: 17001, message: 'validation' } };
      // "Summary": the first sentence of the document.
      return { status: 200, body: { result: doc.split('。')[0] + '。', status: 0 } };
    });
  }

  it('one request for a document within the limit, sent to /nlp/v1/summary with extract-cc', async () => {
    server = await summaryServer();
    const client = createServiceClient(fakeConfig(server.url));
    const res = await client.nlp.summarize('お電話ありがとうございます。請求の件ですね。', { sentLen: 1 });
    expect(res.result).toEqual({ summary: 'お電話ありがとうございます。', levels: 1, windows: 1 });
    const call = server.requests.find((r) => !r.path.includes('oauth'))!;
    expect(call.path).toBe('/api/dev/nlp/v1/summary');
    expect(bodyOf(call)).toEqual({
      document: 'お電話ありがとうございます。請求の件ですね。',
      mode: 'extract-cc',
      sent_len: 1,
    });
  });

  it('a document beyond 5,000 characters is summarized in sentence windows, then the summaries summarized', async () => {
    server = await summaryServer();
    const client = createServiceClient(fakeConfig(server.url));
    const sentences = Array.from(
      { length: 400 },
      (_, i) => `これは${String(i).padStart(3, '0')}番目の文でありまして内容は特にありません。`,
    );
    const doc = sentences.join('');
    expect(doc.length).toBeGreaterThan(10_000);
    const res = await client.nlp.summarize(doc, { charLen: 200, mode: 'extract', lang: 'ja' });
    const docs = server.requests.filter((r) => !r.path.includes('oauth')).map((r) => bodyOf(r));
    const windows = docs.slice(0, -1).map((d) => d.document as string);
    expect(windows.length).toBe(Math.ceil(doc.length / 5000) + (doc.length % 5000 === 0 ? 0 : 0));
    for (const w of windows) {
      expect(w.length).toBeLessThanOrEqual(5000);
      expect(w.endsWith('。')).toBe(true);
    }
    expect(windows.join('')).toBe(doc);
    expect(docs.every((d) => d.char_len === 200 && d.mode === 'extract' && d.lang === 'ja')).toBe(true);
    const final = docs.at(-1)!.document as string;
    expect(final.split('\n')).toHaveLength(windows.length);
    expect(res.result).toMatchObject({
      summary: 'これは000番目の文でありまして内容は特にありません。',
      levels: 2,
      windows: windows.length + 1,
    });
    expect(res.cost.requests).toBe(windows.length + 2);
  });

  it('a document under the 10-character minimum is its own summary, with no request', async () => {
    server = await summaryServer();
    const client = createServiceClient(fakeConfig(server.url));
    const res = await client.nlp.summarize('はい。');
    expect(res.result).toEqual({ summary: 'はい。', levels: 0, windows: 0 });
    expect(server.requests).toHaveLength(0);
  });
});
