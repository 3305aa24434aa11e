/**
 * Tokens and text analysis over real HTTP (issue 3, items 2 and 7; spec 01 and 03): the golden
 * interactions of the token, remove_filler, summary, sentiment and keyword endpoints, and every common
 * rule of the envelope.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../emulator/clock.ts';
import { startEmulator, type RunningEmulator } from '../../emulator/server.ts';
import { nlp, post, TEXT_TEST_ACCOUNTS, token } from './emulator.client.ts';

interface Golden {
  name: string;
  path: string;
  requestBody: unknown;
  status: number;
  responseContentType: string;
  responseBody: Record<string, unknown>;
}
const golden = (
  JSON.parse(readFileSync(new URL('../fixtures/service-responses.json', import.meta.url), 'utf8')) as {
    interactions: Golden[];
  }
).interactions;
const find = (part: string) => golden.find((g) => g.name.includes(part))!;

let emu: RunningEmulator;
let access: string;

beforeAll(async () => {
  emu = await startEmulator({
    port: 0,
    accounts: TEXT_TEST_ACCOUNTS,
  });
  access = await token(emu);
});
afterAll(async () => {
  await emu.close();
});

/** Same shape and types: every key present with the same JSON type, recursively (arrays by first item). */
function expectSameShape(actual: unknown, expected: unknown, path = '$'): void {
  const type = (v: unknown) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);
  expect(type(actual), path).toBe(type(expected));
  if (Array.isArray(expected) && expected.length > 0) {
    expect((actual as unknown[]).length, `${path} is empty`).toBeGreaterThan(0);
    for (const item of actual as unknown[]) expectSameShape(item, expected[0], `${path}[]`);
  } else if (expected && typeof expected === 'object' && !Array.isArray(expected)) {
    expect(Object.keys(actual as object).sort(), path).toEqual(Object.keys(expected).sort());
    for (const [k, v] of Object.entries(expected))
      expectSameShape((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
  }
}

describe('tokens (spec 01 Authentication; golden)', () => {
  it('success: 201 with string expires_in and issued_at, as recorded', async () => {
    const g = find('create_access_token__success');
    const before = Date.now();
    const res = await post(
      emu.authUrl,
      JSON.stringify({
        ...(g.requestBody as object),
        clientId: emu.clientId,
        clientSecret: emu.clientSecret,
      }),
      {
        'Content-Type': 'application/json',
      },
    );
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toBe(g.responseContentType);
    expectSameShape(res.json, g.responseBody);
    const body = res.json as Record<string, string>;
    expect(body.token_type).toBe('bearer');
    expect(body.expires_in).toBe('86399');
    expect(body.scope).toBe('');
    expect(Number(body.issued_at)).toBeGreaterThanOrEqual(before);
  });

  it('bad credentials: 401 with the recorded body', async () => {
    const g = find('incorrect_credentials');
    const res = await post(emu.authUrl, JSON.stringify(g.requestBody), {
      'Content-Type': 'application/json',
    });
    expect(res.status).toBe(g.status);
    expect(res.json).toEqual(g.responseBody);
  });

  it('an invalid token: nlp answers 99998 (HTTP 401), speech answers HTTP 401', async () => {
    const res = await nlp(emu, '/nlp/v1/sentiment', { sentence: 'テスト' }, 'not-a-token');
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ result: {}, status: 99998, message: 'Authentication Error' });
    const asr = await post(`${emu.baseUrl}/asr/v1/speech_recognition/ja-gen_tf-08`, '{}', {
      Authorization: 'Bearer nope',
      'Content-Type': 'application/json',
    });
    expect(asr.status).toBe(401);
    expect(asr.json).toEqual({ result: {}, message: 'An error has occurred.', status: 401 });
  });

  it('an expired token (configurable lifetime) is refused', async () => {
    // On a manual clock: the token lives exactly its second, however long the requests take.
    const clock = new ManualClock();
    const short = await startEmulator({ port: 0, tokenLifetimeSeconds: 1, clock: clock.now });
    try {
      const t = await token(short);
      expect((await nlp(short, '/nlp/v1/sentiment', { sentence: 'テスト' }, t)).status).toBe(200);
      clock.advance(999);
      expect((await nlp(short, '/nlp/v1/sentiment', { sentence: 'テスト' }, t)).status).toBe(200);
      clock.advance(1);
      expect((await nlp(short, '/nlp/v1/sentiment', { sentence: 'テスト' }, t)).json).toMatchObject({
        status: 99998,
      });
    } finally {
      await short.close();
    }
  });
});

describe('golden text-analysis interactions', () => {
  for (const part of ['RemoveFiller', 'Summary', 'Sentiment', 'Keyword', 'NamedEntity', 'SentenceType']) {
    it(`${part}: same status, content type, shape and types as recorded`, async () => {
      const g = find(`Cotoha_Endpoint_${part}`);
      const res = await nlp(emu, g.path.replace('/api/dev', ''), g.requestBody, access);
      expect(res.status).toBe(g.status);
      expect(res.headers['content-type']).toBe(g.responseContentType);
      expectSameShape(res.json, g.responseBody);
      expect((res.json as { message?: string }).message).toBe(g.responseBody.message);
    });
  }

  it('remove_filler comes out exactly as recorded', async () => {
    const g = find('RemoveFiller');
    const res = await nlp(emu, '/nlp/beta/remove_filler', g.requestBody, access);
    expect(res.json).toEqual(g.responseBody);
  });

  it('summary of the recorded weather text picks the recorded sentence', async () => {
    const g = find('Summary');
    const res = await nlp(emu, '/nlp/beta/summary', g.requestBody, access);
    expect(res.json).toEqual(g.responseBody);
  });

  it('sentiment of the recorded sentence: Positive with the recorded phrase', async () => {
    const res = await nlp(emu, '/nlp/v1/sentiment', { sentence: 'ゲームをするのが好きです。' }, access);
    expect(res.json).toMatchObject({
      result: { sentiment: 'Positive', emotional_phrase: [{ form: '好きです', emotion: 'P' }] },
      status: 0,
    });
  });
});

describe('sentence_type (dialog acts)', () => {
  it('the recorded question comes out exactly as recorded', async () => {
    const g = find('SentenceType');
    const res = await nlp(emu, '/nlp/v1/sentence_type', g.requestBody, access);
    expect(res.json).toEqual(g.responseBody);
  });

  it('gives the speech acts of call-center lines, all of a turn of several sentences', async () => {
    const acts = async (sentence: string) =>
      (
        (await nlp(emu, '/nlp/v1/sentence_type', { sentence }, access)).json as {
          result: { dialog_act: string[] };
        }
      ).result.dialog_act;
    expect(await acts('お電話ありがとうございます。カスタマーセンターの佐藤でございます。')).toContain(
      'greeting',
    );
    expect(await acts('ご迷惑をおかけして大変申し訳ございません。')).toEqual(['apology']);
    expect(await acts('お電話ありがとうございました。失礼いたします。')).toEqual(['thanking', 'goodbye']);
    expect(await acts('本日はどのようなご用件でしょうか。')).toEqual(['information-seeking']);
    expect(await acts('交換用の機器を本日発送いたします。')).toEqual(['commissive']);
    expect(await acts('山田太郎です。')).toEqual(['information-providing']);
    expect(await acts('はい、承知いたしました。ご住所をお願いいたします。')).toEqual([
      'agreement',
      'directive',
    ]);
  });

  it('refuses a missing sentence and a bad type like the other endpoints', async () => {
    const missing = await nlp(emu, '/nlp/v1/sentence_type', { type: null }, access);
    expect(missing.status).toBe(400);
    expect(missing.json).toMatchObject({ status: 400, message: 'sentence : must not be null' });
    const badType = await nlp(emu, '/nlp/v1/sentence_type', { sentence: 'はい', type: 'x' }, access);
    expect(badType.json).toMatchObject({ status: 400, message: 'type : x is invalid' });
  });
});

describe('common rules', () => {
  it('served under /api/nlp as well as /api/dev/nlp', async () => {
    const res = await nlp(emu, '/nlp/v1/sentiment', { sentence: '助かりました' }, access, `${emu.url}/api`);
    expect(res.status).toBe(200);
  });

  it('wrong version → 99993', async () => {
    for (const path of ['/nlp/v2/sentiment', '/nlp/beta/keyword', '/nlp/v1/remove_filler']) {
      const res = await nlp(emu, path, { sentence: 'x', text: 'x', document: 'x' }, access);
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ result: {}, status: 99993, message: 'Invalid version' });
    }
  });

  it('malformed JSON → 6103 (summary: 17001)', async () => {
    const res = await nlp(emu, '/nlp/v1/sentiment', '{"sentence": ', access);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ result: {}, status: 6103, message: 'Invalid JSON format' });
    const s = await nlp(emu, '/nlp/v1/summary', 'not json', access);
    expect(s.status).toBe(400);
    expect(s.json).toEqual({ result: '', status: 17001, message: 'request data is not JSON' });
  });

  it('JSON null accepted for optional fields', async () => {
    const res = await nlp(
      emu,
      '/nlp/v1/keyword',
      {
        document: '回線の故障で回線が切れた',
        type: null,
        do_segment: null,
        max_keyword_num: null,
        dic_type: null,
      },
      access,
    );
    expect(res.status).toBe(200);
    expect((res.json as { status: number }).status).toBe(0);
  });

  const invalid: [string, string, unknown, string][] = [
    ['remove_filler without text', '/nlp/beta/remove_filler', {}, 'text : must not be null'],
    ['remove_filler with a number', '/nlp/beta/remove_filler', { text: 3 }, 'text : invalid type(number)'],
    [
      'remove_filler do_segment string',
      '/nlp/beta/remove_filler',
      { text: 'あの', do_segment: 'yes' },
      'do_segment : invalid type(string)',
    ],
    ['sentiment empty', '/nlp/v1/sentiment', { sentence: '' }, 'sentence : must not be empty'],
    ['keyword without document', '/nlp/v1/keyword', {}, 'document : must not be null'],
    ['keyword empty list', '/nlp/v1/keyword', { document: [] }, 'document : empty list is not acceptable'],
    [
      'keyword max 0',
      '/nlp/v1/keyword',
      { document: 'テスト', max_keyword_num: 0 },
      'max_keyword_num : must be between 1 and 1000',
    ],
    ['keyword bad type', '/nlp/v1/keyword', { document: 'テスト', type: 'slang' }, 'type : slang is invalid'],
    [
      'keyword bad dic_type',
      '/nlp/v1/keyword',
      { document: 'テスト', dic_type: ['cooking'] },
      'dic_type : cooking is invalid',
    ],
  ];
  for (const [name, path, body, message] of invalid) {
    it(`${name} → HTTP 400, status 400, "${message}"`, async () => {
      const res = await nlp(emu, path, body, access);
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ result: {}, status: 400, message });
    });
  }

  it('dic_type is refused for Developers accounts, accepted for Enterprise', async () => {
    const dev = await token(emu, 'dev', 'dev-secret');
    const refused = await nlp(emu, '/nlp/v1/keyword', { document: 'テスト', dic_type: ['IT'] }, dev);
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({
      result: {},
      status: 400,
      message: 'dic_type : is available to Enterprise accounts only',
    });
    expect((await nlp(emu, '/nlp/v1/keyword', { document: 'テスト', dic_type: ['IT'] }, access)).status).toBe(
      200,
    );
  });

  it('endpoints of the spec that are not emulated answer 501', async () => {
    const res = await nlp(emu, '/nlp/v1/parse', { sentence: '私は犬が好きだ。' }, access);
    expect(res.status).toBe(501);
    expect(res.json).toMatchObject({ status: 501 });
  });
});

describe('remove_filler, sentiment, keyword', () => {
  it('do_segment splits into one result per sentence, positions within normalized_sentence', async () => {
    const res = await nlp(
      emu,
      '/nlp/beta/remove_filler',
      { text: 'えーー、料金のことです。あのー、まあ、解約したいんです。', do_segment: true },
      access,
    );
    const result = (
      res.json as {
        result: {
          fillers: { begin_pos: number; end_pos: number; form: string }[];
          normalized_sentence: string;
          fixed_sentence: string;
        }[];
      }
    ).result;
    expect(result).toHaveLength(2);
    expect(result[0]).toEqual({
      fillers: [{ begin_pos: 0, end_pos: 2, form: 'えー' }],
      normalized_sentence: 'えー、料金のことです。',
      fixed_sentence: '、料金のことです。',
    });
    expect(result[1]!.fillers.map((f) => f.form)).toEqual(['あのー、', 'まあ']);
    for (const r of result)
      for (const f of r.fillers) expect(r.normalized_sentence.slice(f.begin_pos, f.end_pos)).toBe(f.form);
    expect(result[1]!.fixed_sentence).toBe('、解約したいんです。');
  });

  it('あの before a noun is not a filler', async () => {
    const res = await nlp(emu, '/nlp/beta/remove_filler', { text: 'あの件はどうなりましたか。' }, access);
    expect((res.json as { result: { fillers: unknown[] }[] }).result[0]!.fillers).toEqual([]);
  });

  it('sentiment: negative with comma-joined emotions; neutral without polar words', async () => {
    const neg = await nlp(
      emu,
      '/nlp/v1/sentiment',
      { sentence: '正直、すごく困ってるんです。本当に腹が立ちます。' },
      access,
    );
    const r = (
      neg.json as {
        result: { sentiment: string; score: number; emotional_phrase: { form: string; emotion: string }[] };
      }
    ).result;
    expect(r.sentiment).toBe('Negative');
    expect(r.emotional_phrase.map((p) => p.emotion)).toEqual(['不安', '怒る']);
    const joined = await nlp(emu, '/nlp/v1/sentiment', { sentence: 'すごく助かりました。' }, access);
    expect(
      (joined.json as { result: { emotional_phrase: { emotion: string }[] } }).result.emotional_phrase[0]!
        .emotion,
    ).toBe('安心,喜ぶ');
    const neutral = await nlp(emu, '/nlp/v1/sentiment', { sentence: '住所は東京都です。' }, access);
    expect((neutral.json as { result: unknown }).result).toEqual({
      sentiment: 'Neutral',
      score: 0,
      emotional_phrase: [],
    });
  });

  it('keyword: max_keyword_num, document as an array, scores descending', async () => {
    const doc = [
      '回線が切れました。',
      '回線の故障で、ルーターを交換します。',
      'ルーターの電源を入れ直しました。',
    ];
    const res = await nlp(emu, '/nlp/v1/keyword', { document: doc, max_keyword_num: 3 }, access);
    const result = (res.json as { result: { form: string; score: number }[]; message: string }).result;
    expect(result).toHaveLength(3);
    // The two words said twice come first.
    expect(
      result
        .slice(0, 2)
        .map((k) => k.form)
        .sort(),
    ).toEqual(['ルーター', '回線']);
    for (let i = 1; i < result.length; i++)
      expect(result[i]!.score).toBeLessThanOrEqual(result[i - 1]!.score);
  });
});

describe('summary (spec 03)', () => {
  const doc =
    'お電話ありがとうございます。先月の請求が二回引き落とされています。確認いたします。請求の二重引き落としを返金いたします。ありがとうございました。';
  const cases: [string, Record<string, unknown>, string][] = [
    [
      'document of 9 characters',
      { document: '一二三四五六七八九', mode: 'extract', sent_len: 1, lang: 'ja' },
      'document : size must be between 10 and 5000',
    ],
    [
      'document of 5001 characters',
      { document: 'あ'.repeat(5001), mode: 'extract', sent_len: 1, lang: 'ja' },
      'document : size must be between 10 and 5000',
    ],
    ['missing mode on v1', { document: doc, sent_len: 1, lang: 'ja' }, 'mode : must not be null'],
    [
      'unknown mode',
      { document: doc, mode: 'abstract', sent_len: 1, lang: 'ja' },
      'mode : abstract is invalid',
    ],
    [
      'sent_len 0',
      { document: doc, mode: 'extract', sent_len: 0, lang: 'ja' },
      'sent_len : must be between 1 and 100',
    ],
    [
      'sent_len 101',
      { document: doc, mode: 'extract', sent_len: 101, lang: 'ja' },
      'sent_len : must be between 1 and 100',
    ],
    [
      'char_len 9',
      { document: doc, mode: 'extract', char_len: 9, lang: 'ja' },
      'char_len : must be between 10 and 2500',
    ],
    [
      'char_len 2501',
      { document: doc, mode: 'extract', char_len: 2501, lang: 'ja' },
      'char_len : must be between 10 and 2500',
    ],
    [
      'neither length',
      { document: doc, mode: 'extract', lang: 'ja' },
      'sent_len : exactly one of sent_len and char_len is required',
    ],
    [
      'both lengths',
      { document: doc, mode: 'extract', sent_len: 1, char_len: 20, lang: 'ja' },
      'sent_len : exactly one of sent_len and char_len is required',
    ],
    ['extract without lang', { document: doc, mode: 'extract', sent_len: 1 }, 'lang : must not be null'],
    [
      'lang of 3 letters',
      { document: doc, mode: 'extract', sent_len: 1, lang: 'jpn' },
      'lang : jpn is invalid',
    ],
  ];
  for (const [name, body, message] of cases) {
    it(`${name} → 17001`, async () => {
      const res = await nlp(emu, '/nlp/v1/summary', body, access);
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ result: '', status: 17001, message });
    });
  }

  it('extract honours sent_len; extract-cc answers message "ok" without lang and skips greetings', async () => {
    const two = await nlp(
      emu,
      '/nlp/v1/summary',
      { document: doc, mode: 'extract', sent_len: 2, lang: 'ja' },
      access,
    );
    expect(two.json).not.toHaveProperty('message');
    const text = (two.json as { result: string }).result;
    expect(text.match(/。/g)).toHaveLength(2);
    const cc = await nlp(emu, '/nlp/v1/summary', { document: doc, mode: 'extract-cc', sent_len: 1 }, access);
    expect(cc.json).toEqual({ result: expect.stringContaining('請求'), status: 0, message: 'ok' });
    expect((cc.json as { result: string }).result).not.toContain('ありがとう');
  });

  it('char_len bounds the summary length', async () => {
    for (const charLen of [10, 20, 40]) {
      const res = await nlp(
        emu,
        '/nlp/v1/summary',
        { document: doc, mode: 'extract-cc', char_len: charLen },
        access,
      );
      const text = (res.json as { result: string }).result;
      expect([...text].length).toBeLessThanOrEqual(charLen);
      expect(text.length).toBeGreaterThan(0);
    }
  });
});

describe('ne (named entities, emulated from a gazetteer and number patterns)', () => {
  const ne = async (sentence: string) =>
    ((await nlp(emu, '/nlp/v1/ne', { sentence }, access)).json as { result: Record<string, unknown>[] })
      .result;

  it('persons, places with their block numbers as one address, phone numbers, dates; positions one past the end', async () => {
    const sentence =
      '鈴木花子です。住所は東京都渋谷区神南一丁目二番三号、携帯は090-1234-5678、誕生日は千九百八十五年四月十日です。';
    const result = await ne(sentence);
    const byForm = Object.fromEntries(result.map((e) => [e.form, e]));
    expect(byForm['鈴木花子']).toMatchObject({ class: 'PSN', extended_class: 'Person', source: 'basic' });
    expect(byForm['東京都渋谷区神南一丁目二番三号']).toMatchObject({
      class: 'LOC',
      extended_class: 'Address',
    });
    expect(byForm['090-1234-5678']).toMatchObject({ class: 'NUM', extended_class: 'Phone_Number' });
    expect(byForm['千九百八十五年四月十日']).toMatchObject({ class: 'DAT', extended_class: 'Date' });
    for (const e of result) {
      expect(sentence.slice(e.begin_pos as number, e.end_pos as number)).toBe(e.form);
      expect(e.std_form).toBe(e.form);
    }
  });

  it('things that are not personal have classes of their own; kana digits are not entities here', async () => {
    const result = await ne('カスタマーセンターの料金は三千円、午後三時まで。日本全国。ゼロキューゼロ');
    expect(result.map((e) => [e.form, e.class, e.extended_class])).toEqual([
      ['カスタマーセンター', 'ORG', 'Organization'],
      ['三千円', 'MNY', 'Money'],
      ['午後三時', 'TIM', 'Time'],
      ['日本', 'LOC', 'Country'],
    ]);
  });

  it('sentence is required; type and dic_type follow the shared rules', async () => {
    const missing = await nlp(emu, '/nlp/v1/ne', {}, access);
    expect(missing.status).toBe(400);
    expect(missing.json).toMatchObject({ status: 400, message: 'sentence : must not be null' });
    const badType = await nlp(emu, '/nlp/v1/ne', { sentence: '山田です', type: 'x' }, access);
    expect(badType.status).toBe(400);
  });
});
