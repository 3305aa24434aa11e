/**
 * Recognition dictionaries against the emulator over real HTTP (spec 02): temporary words with a start
 * request and the user dictionary (upload, state, download, clear; reflected on the hour on the
 * emulator's clock), what they change in recognition (a word known only from a dictionary is printed
 * with its surface), and the spec's refusals.
 */
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../emulator/clock.ts';
import { startEmulator } from '../../emulator/server.ts';
import { createServiceClient } from '../../service/client.ts';
import { isServiceError, type ServiceError } from '../../service/errors.ts';
import type { TemporaryWord } from '../../schemas/service-asr.ts';
import type { ServiceConfig } from '../../schemas/config.ts';
import { synthesize, toMulaw } from '../helpers/dtmf-audio.ts';

type Emulator = Awaited<ReturnType<typeof startEmulator>>;
let emulator: Emulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

const HOUR = 3_600_000;

async function start(clock?: ManualClock, speed = 100): Promise<ServiceConfig> {
  emulator = await startEmulator({ port: 0, speed, ...(clock ? { clock: clock.now } : {}) });
  return {
    baseUrl: emulator.baseUrl,
    authUrl: emulator.authUrl,
    clientId: emulator.clientId,
    clientSecret: emulator.clientSecret,
    model: 'ja-gen_tf-08',
    domainId: emulator.domainId,
    speed,
  };
}

/** Phrases 301 (ギガ光プラス) and 303 (スマホ安心パック), as one stream. */
async function recognize(config: ServiceConfig, words?: TemporaryWord[]): Promise<string[]> {
  const audio = toMulaw(
    synthesize({
      rate: 8000,
      phrases: [
        { id: 301, start: 0.5 },
        { id: 303, start: 3 },
      ],
      duration: 5,
    }),
  );
  const session = createServiceClient(config).recognizeStream({
    audio: Readable.from([audio]),
    options: { delimiter: false, punctuation: true },
    ...(words ? { words } : {}),
  });
  return (await session.done).results.map((r) => r.text);
}

const GIGA: TemporaryWord = { surface: 'ギガ光プラス', reading: 'ギガヒカリプラス' };

describe('temporary words (start request)', () => {
  it('a word known only from a dictionary is printed as heard without it, with its surface with it', async () => {
    const config = await start();
    expect(await recognize(config)).toEqual([
      'ギガヒカリプラスへのお切り替えでよろしいでしょうか。',
      'スマホアンシンパックにはご加入いただいております。',
    ]);
    expect(
      await recognize(config, [
        GIGA,
        { surface: 'スマホ安心パック', reading: 'スマホアンシンパック', prob: 60 },
      ]),
    ).toEqual([
      'ギガ光プラスへのお切り替えでよろしいでしょうか。',
      'スマホ安心パックにはご加入いただいております。',
    ]);
  });

  it('refuses a bad entry at the start request with the spec’s detail (the client checks it first)', async () => {
    const config = await start();
    const bad = await fetch(`${config.baseUrl}/asr/v1/speech_recognition/ja-gen_tf-08`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json; charset=UTF-8',
        Authorization: `Bearer ${(await createServiceClient(config).tokens.get()).value.reveal()}`,
      },
      body: JSON.stringify({
        msg: { msgname: 'start' },
        param: {
          'baseParam.samplingRate': 8000,
          'recognizeParameter.domainId': config.domainId,
          'baseParam.audioCodec': 'mulaw',
        },
        words: [{ surface: 'a/b', reading: 'エービー' }],
      }),
    });
    expect(bad.status).toBe(410);
    expect(JSON.stringify(await bad.json())).toContain('Surface illegal');
    const err = (await recognize(config, [{ surface: 'ok', reading: 'ひらがな' }]).catch(
      (e: unknown) => e,
    )) as ServiceError;
    expect(isServiceError(err) && err.kind).toBe('invalid');
    expect(err.message).toContain('words[0].reading: must be full-width katakana');
  });
});

describe('user dictionary (upload, isset, download, clear)', () => {
  it('is reflected on the hour of the emulator’s clock: isset false until then, download the last upload', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 23, 9, 20));
    const config = await start(clock);
    const dict = createServiceClient(config).userDictionary;
    // Nothing uploaded yet: nothing is waiting to be reflected.
    expect((await dict.isSet()).result).toBe(true);
    const uploaded = await dict.upload([
      { ...GIGA, prob: 70 },
      { surface: 'スマホ安心パック', reading: 'スマホアンシンパック' },
    ]);
    expect(uploaded.status).toEqual({ code: 200, message: 'OK', detail: 'success' });
    expect(uploaded.result).toEqual([
      { surface: 'ギガ光プラス', reading: 'ギガヒカリプラス', prob: 70 },
      { surface: 'スマホ安心パック', reading: 'スマホアンシンパック', prob: 30 },
    ]);
    expect((await dict.isSet()).result).toBe(false);
    // The dictionary clock runs at the emulator's speed (100): the top of the hour is 40 min ÷ 100 away.
    clock.advance((40 * 60_000) / 100 - 1000);
    expect((await dict.isSet()).result).toBe(false);
    clock.advance(2000);
    expect((await dict.isSet()).result).toBe(true);
    expect((await dict.download()).result).toEqual(uploaded.result);
    await dict.clear();
    expect((await dict.isSet()).result).toBe(false);
    clock.advance(HOUR / 100);
    expect((await dict.isSet()).result).toBe(true);
    expect((await dict.download()).result).toEqual([]);
  });

  it('once reflected, changes what recognition prints', async () => {
    // At speed 3,600 the emulator's hour is a second of real time.
    const config = await start(undefined, 3600);
    const dict = createServiceClient(config).userDictionary;
    await dict.upload([GIGA]);
    // Reflected after an emulated hour: polled for as long as the test may run, however busy the machine.
    await vi.waitFor(async () => expect((await dict.isSet()).result).toBe(true), {
      timeout: 100_000,
      interval: 100,
    });
    const [first, second] = await recognize(config);
    expect(first).toBe('ギガ光プラスへのお切り替えでよろしいでしょうか。');
    // Not in the user dictionary: as heard.
    expect(second).toContain('スマホアンシンパック');
  });

  it('refuses bad lines, an unknown or English model and another domain with 410 Invalid Parameter', async () => {
    const config = await start();
    const dict = createServiceClient(config).userDictionary;
    const refused = async (p: Promise<unknown>) => (await p.catch((e: unknown) => e)) as ServiceError;
    const prob = await refused(dict.upload([{ surface: 'x', reading: 'エックス', prob: 101 }]));
    expect(prob).toMatchObject({ kind: 'invalid', code: 410, detail: 'Prob illegal' });
    const long = await refused(dict.upload([{ surface: 'あ'.repeat(80), reading: 'ア'.repeat(10) }]));
    expect(long.detail).toBe('Surface too long');
    expect((await refused(dict.isSet({ model: 'en_en-gen_sf-16' }))).detail).toBe('Invalid Model Name');
    expect((await refused(dict.clear({ domainId: 'zzzzzzzz' }))).detail).toBe('Invalid domainid');
    const many = Array.from({ length: 5001 }, (_, i) => ({ surface: `w${i}`, reading: 'ダブリュー' }));
    expect((await refused(dict.upload(many))).detail).toBe('Invalid Parameter -> List Exceed 5000 lines');
  });
});
