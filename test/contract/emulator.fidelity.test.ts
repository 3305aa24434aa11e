/**
 * Where the emulator must answer as the service does for the service's own clients to read it, over real
 * HTTP: the user dictionary's multipart answers (a part is its Content-Disposition line and its text,
 * spec 02), `isset` before any upload, readings in full-width katakana, dictionary surfaces kept whole
 * (spec 02), and sentiment over the past and polite forms of its lexicon with the whole emotional phrase
 * (spec 01).
 */
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator } from '../../emulator/server.ts';
import { createServiceClient } from '../../service/client.ts';
import { parseStatusPart } from '../../service/user-dictionary.ts';
import { parseMultipart } from '../../schemas/multipart.ts';
import type { TemporaryWord } from '../../schemas/service-asr.ts';
import type { ServiceConfig } from '../../schemas/config.ts';
import { synthesize, toMulaw } from '../helpers/dtmf-audio.ts';
import { nlp, post, token } from './emulator.client.ts';

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emulator: Emulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

async function start(): Promise<ServiceConfig> {
  emulator = await startEmulator({ port: 0, speed: 100 });
  return {
    baseUrl: emulator.baseUrl,
    authUrl: emulator.authUrl,
    clientId: emulator.clientId,
    clientSecret: emulator.clientSecret,
    model: 'ja-gen_tf-08',
    domainId: emulator.domainId,
    speed: 100,
  };
}

async function get(url: string, accessToken: string) {
  const res = await fetch(url, { headers: { Authorization: `Bearer ${accessToken}` }, keepalive: false });
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
}

/**
 * The parts of a multipart answer as a browser sample reads them: after each boundary line, the
 * Content-Disposition line, one empty line, then the text up to the next boundary. Whatever else a part
 * carries ends up in the text.
 */
function naiveParts(contentType: string, text: string): Record<string, string> {
  const boundary = /boundary=([^;]+)/.exec(contentType)![1]!;
  const out: Record<string, string> = {};
  for (const chunk of text.split(`--${boundary}`).slice(1, -1)) {
    const lines = chunk.replace(/^\r\n/, '').split('\r\n');
    const name = /name="([^"]+)"/.exec(lines[0]!)![1]!;
    out[name] = lines.slice(2).join('\r\n').replace(/\r\n$/, '');
  }
  return out;
}

function uploadBody(lines: string) {
  const boundary = 'sampleboundary';
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    body:
      `--${boundary}\r\nContent-Disposition: form-data; name="cascadeword"\r\n` +
      `Content-Type: text/plain; charset=UTF-8\r\n\r\n${lines}\r\n--${boundary}--\r\n`,
  };
}

describe('user dictionary answers as the service’s clients read them', () => {
  it('each part is its Content-Disposition and its text, no part headers (upload, download, clear, errors)', async () => {
    const config = await start();
    const access = await token(emulator!);
    const base = `${config.baseUrl}/asr/v1/speech_words/ja-gen_tf-08`;
    const q = `?domainid=${config.domainId}`;
    const { body, contentType } = uploadBody('ギガ光プラス\tギガヒカリプラス\t70\n');
    const up = await post(`${base}/upload${q}`, body, {
      'Content-Type': contentType,
      Authorization: `Bearer ${access}`,
    });
    expect(up.status).toBe(200);
    expect(up.text).not.toMatch(/Content-Type/i);
    expect(naiveParts(String(up.headers['content-type']), up.text)).toEqual({
      status: '200\nOK\nsuccess\n',
      cascadeword: 'ギガ光プラス\tギガヒカリプラス\tM\t70\n',
    });
    const down = await get(`${base}/download${q}`, access);
    expect(naiveParts(down.contentType, down.text)).toEqual({
      status: '200\nOK\nsuccess\n',
      cascadeword: 'ギガ光プラス\tギガヒカリプラス\t70\n',
    });
    const clear = await get(`${base}/clear${q}`, access);
    expect(naiveParts(clear.contentType, clear.text)).toEqual({ status: '200\nOK\nsuccess\n' });
    const refused = await get(`${config.baseUrl}/asr/v1/speech_words/ja-gen_tf-08/isset?domainid=zz`, access);
    expect(refused.contentType).toMatch(/^multipart\/form-data/);
    expect(naiveParts(refused.contentType, refused.text)).toEqual({
      status: '410\nInvalid Parameter\nInvalid domainid\n',
    });
    // Our own client reads the same answers.
    const dict = createServiceClient(config).userDictionary;
    expect((await dict.upload([{ surface: 'ギガ光プラス', reading: 'ギガヒカリプラス' }])).result).toEqual([
      { surface: 'ギガ光プラス', reading: 'ギガヒカリプラス', prob: 30 },
    ]);
    expect((await dict.download()).result).toEqual([
      { surface: 'ギガ光プラス', reading: 'ギガヒカリプラス', prob: 30 },
    ]);
  });

  it('isset before any upload: true (no change is waiting to be reflected)', async () => {
    const config = await start();
    const dict = createServiceClient(config).userDictionary;
    expect((await dict.isSet()).result).toBe(true);
    await dict.upload([{ surface: 'ギガ光プラス', reading: 'ギガヒカリプラス' }]);
    expect((await dict.isSet()).result).toBe(false);
  });
});

describe('dictionary readings and surfaces in recognition', () => {
  /** Phrases 301 (ギガ光プラス) and 305 (ホームWi-Fi), as one stream, with readings. */
  async function recognize(config: ServiceConfig, words: TemporaryWord[]) {
    const audio = toMulaw(
      synthesize({
        rate: 8000,
        phrases: [
          { id: 301, start: 0.5 },
          { id: 305, start: 3 },
        ],
        duration: 5.5,
      }),
    );
    const session = createServiceClient(config).recognizeStream({
      audio: Readable.from([audio]),
      options: { delimiter: true, punctuation: false, reading: true },
      words,
    });
    return (await session.done).results.map((r) => ({ text: r.text, reading: r.reading }));
  }

  it('a dictionary word reads as its katakana reading, and its surface stays one word', async () => {
    const config = await start();
    const [giga, wifi] = await recognize(config, [
      { surface: 'ギガ光プラス', reading: 'ギガヒカリプラス' },
      { surface: 'ホームWi-Fi', reading: 'ホームワイファイ' },
    ]);
    expect(giga!.text.split(' ')).toContain('ギガ光プラス');
    expect(giga!.reading).toMatch(/^ギガヒカリプラスヘノ/);
    expect(wifi!.text.split(' ')).toContain('ホームWi-Fi');
    expect(wifi!.reading).toMatch(/^ホームワイファイノ/);
    expect(wifi!.reading).not.toMatch(/[A-Za-z-]/);
  });

  it('a reading is full-width katakana: hiragana and half-width katakana are converted', async () => {
    emulator = await startEmulator({
      port: 0,
      speed: 100,
      phrasebook: { '1': 'ｶﾞｽのりょうきんは、ｸﾚｼﾞｯﾄｶｰﾄﾞでおしはらいです。' },
    });
    const audio = toMulaw(synthesize({ rate: 8000, phrases: [{ id: 1, start: 0.5 }], duration: 3 }));
    const session = createServiceClient({
      baseUrl: emulator.baseUrl,
      authUrl: emulator.authUrl,
      clientId: emulator.clientId,
      clientSecret: emulator.clientSecret,
      model: 'ja-gen_tf-08',
      domainId: emulator.domainId,
      speed: 100,
    }).recognizeStream({ audio: Readable.from([audio]), options: { reading: true } });
    const [result] = (await session.done).results;
    expect(result!.reading).toBe('ガスノリョウキンハクレジットカードデオシハライデス');
  });

  it('the service refuses a reading that is not full-width katakana (Reading illegal)', async () => {
    const config = await start();
    const dict = createServiceClient(config).userDictionary;
    for (const reading of ['ぎがひかり', 'ｷﾞｶﾞ', 'ギガ光']) {
      const err = (await dict.upload([{ surface: 'ギガ光', reading }]).catch((e: unknown) => e)) as {
        detail?: string;
      };
      expect(err.detail).toBe('Reading illegal');
    }
  });
});

describe('sentiment over past and polite forms (spec 01)', () => {
  async function sentiment(sentence: string) {
    const res = await nlp(emulator!, '/nlp/v1/sentiment', { sentence }, await token(emulator!));
    return (
      res.json as {
        result: { sentiment: string; emotional_phrase: { form: string; emotion: string }[] };
      }
    ).result;
  }

  it('past, polite and negated forms of the lexicon’s words', async () => {
    await start();
    const cases: [string, string][] = [
      ['旅行は楽しかった。', 'Positive'],
      ['連絡をもらえて嬉しかったです。', 'Positive'],
      ['とても楽しいです。', 'Positive'],
      ['説明はわかりやすかったです。', 'Positive'],
      ['説明はわかりやすくなかった。', 'Negative'],
      ['全然楽しくないです。', 'Negative'],
      ['すぐに直りました。', 'Positive'],
      ['おかげで助かりました。', 'Positive'],
      ['本当に困りました。', 'Negative'],
      ['電話がつながらなくて困っています。', 'Negative'],
      ['ルーターが壊れました。', 'Negative'],
      ['対応には満足していません。', 'Negative'],
      ['料金に不満はありません。', 'Neutral'],
      ['特に不便ではありません。', 'Neutral'],
      ['それで安心しました。', 'Positive'],
      // 大変 before an adjective is "very", not hardship; お困り in a question is no complaint.
      ['そう言っていただけると、大変うれしいです。', 'Positive'],
      ['ほかに何かお困りのことはございませんか。', 'Neutral'],
    ];
    const got = await Promise.all(cases.map(async ([s]) => [s, (await sentiment(s)).sentiment]));
    expect(got).toEqual(cases);
  });

  it('plainly negative sentences are negative, with anger or disgust where the words carry it', async () => {
    await start();
    const cases: [string, string][] = [
      ['何度も電話しているのに解決しません。', 'Negative'],
      ['こんな対応ひどすぎます。', 'Negative'],
      ['最悪です。', 'Negative'],
      ['納得がいかないです。', 'Negative'],
      ['もう我慢できません。', 'Negative'],
      // Asked back, a negation keeps the word's polarity; a noun in a compound is not an emotion.
      ['おかしくないですか。', 'Negative'],
      ['迷惑メールの設定をしたいです。', 'Neutral'],
      ['この前の件、解決しました。', 'Positive'],
    ];
    const got = await Promise.all(cases.map(async ([s]) => [s, (await sentiment(s)).sentiment]));
    expect(got).toEqual(cases);
    expect((await sentiment('許せないです。')).emotional_phrase).toEqual([
      { form: '許せないです', emotion: '怒る' },
    ]);
    expect((await sentiment('話になりません。')).emotional_phrase).toEqual([
      { form: '話になりません', emotion: '怒る' },
    ]);
  });

  it('an emotional phrase is the word with its whole inflection, not cut after six kana', async () => {
    await start();
    expect((await sentiment('ゲームをするのが好きです。')).emotional_phrase).toEqual([
      { form: '好きです', emotion: 'P' },
    ]);
    expect((await sentiment('説明がとてもわかりやすかったです。')).emotional_phrase).toEqual([
      { form: 'わかりやすかったです', emotion: '好ましい' },
    ]);
    expect((await sentiment('丁寧にご対応いただきありがとうございました。')).emotional_phrase).toEqual([
      { form: '丁寧に', emotion: '好ましい' },
      { form: 'ありがとうございました', emotion: '喜ぶ' },
    ]);
    expect((await sentiment('全然楽しくなかったです。')).emotional_phrase).toEqual([
      { form: '楽しくなかったです', emotion: 'N' },
    ]);
    expect((await sentiment('本当にがっかりしてしまいました。')).emotional_phrase).toEqual([
      { form: 'がっかりしてしまいました', emotion: '悲しい' },
    ]);
    // The phrase ends where the clause goes on (a particle), not at the next kanji.
    expect((await sentiment('嬉しかったのでまた電話します。')).emotional_phrase).toEqual([
      { form: '嬉しかった', emotion: '喜ぶ' },
    ]);
  });
});

describe('our client reads the service’s multipart shapes', () => {
  it('parts with only a Content-Disposition, with no header at all, or with a part Content-Type', () => {
    const body = Buffer.from(
      '--b\r\nContent-Disposition: form-data; name="status"\r\n\r\n200\nOK\nsuccess\n\r\n' +
        '--b\r\n\r\nheaderless\r\n' +
        '--b\r\nContent-Disposition: form-data; name="cascadeword"\r\nContent-Type: text/plain\r\n\r\n' +
        'ギガ光プラス\tギガヒカリプラス\t30\r\n--b--\r\n',
    );
    const parts = parseMultipart(body, 'b')!;
    expect(parts.map((p) => [p.name, p.contentType, p.data.toString('utf8')])).toEqual([
      ['status', undefined, '200\nOK\nsuccess\n'],
      [undefined, undefined, 'headerless'],
      ['cascadeword', 'text/plain', 'ギガ光プラス\tギガヒカリプラス\t30'],
    ]);
    expect(parseStatusPart(parts[0]!.data.toString('utf8'))).toEqual({
      code: 200,
      message: 'OK',
      detail: 'success',
    });
  });
});
