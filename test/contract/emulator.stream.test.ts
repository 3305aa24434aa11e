/**
 * Stream recognition over real HTTP (issue 3, items 3 and 5; spec 02): start validation with the exact
 * 410 details, the started answer and its cookies, the session's rules and their codes, messages and
 * options. Each test opens its own sessions, at speed 100, against one of two emulators:
 * - `emu` runs on a manual clock without wall-clock slack: time passes only when a test moves the clock,
 *   so every time rule (the 2-s buffer, the 1-s deadlines, the idle timeout) is checked exactly, through
 *   the emulator's own accounting, however fast or loaded the machine is;
 * - `live` runs on the real clock, for the tests that stream audio on schedule and read what the
 *   recognizer says.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../emulator/clock.ts';
import { startEmulator, type RunningEmulator } from '../../emulator/server.ts';
import { synthesize, toMulaw, toPcm16 } from '../helpers/dtmf-audio.ts';
import { finals, MULAW_8K, post, streamAudio, StreamClient, token, type Msg } from './emulator.client.ts';

const SPEED = 100;
const CHUNK = 1920; // 240 ms of 8 kHz mu-law (spec 02, Limits)
const BUFFER_SECONDS = 2; // spec 02: the recognizer buffers 2 s of audio ahead of real time
const clock = new ManualClock(0); // from 0: every step of 2.4 ms is exact enough to compare audio seconds
/** Lets `seconds` of real time ÷ speed pass on the manual clock (the recognizer's `seconds` of audio). */
const elapse = (seconds: number) => clock.advance((seconds * 1000) / SPEED);
let emu: RunningEmulator;
let access: string;
let live: RunningEmulator;
let liveAccess: string;

beforeAll(async () => {
  emu = await startEmulator({ port: 0, speed: SPEED, strictChunks: false, clock: clock.now, slackMs: 0 });
  access = await token(emu);
  live = await startEmulator({ port: 0, speed: SPEED, strictChunks: false });
  liveAccess = await token(live);
});
afterAll(async () => {
  await emu.close();
  await live.close();
});

const silence = (seconds: number) => Buffer.alloc(Math.round(seconds * 8000), 0xff); // mu-law silence

function expectError(res: { status: number; json: unknown }, code: number, message: string, detail: string) {
  expect(res.status).toBe(code);
  const body = res.json as Msg[];
  expect(Array.isArray(body)).toBe(true);
  const last = body.at(-1)!;
  expect(last.msg.msgname).toBe('completed');
  expect(last.errorinfo).toEqual({ code, message, level: 'ERROR', detail });
}

async function started(
  param: Record<string, unknown> = MULAW_8K,
  extra: Record<string, unknown> = {},
  model = 'ja-gen_tf-08',
  on: 'manual clock' | 'live' = 'manual clock',
) {
  const c = on === 'live' ? new StreamClient(live, liveAccess, model) : new StreamClient(emu, access, model);
  const res = await c.start(param, extra);
  expect(res.status).toBe(200);
  return c;
}

/** The emulator's pacing accounting of a live session on `emu`. */
function pacing(c: StreamClient) {
  const p = emu.pacing(c.uniqueId);
  if (!p) throw new Error(`session ${c.uniqueId} has ended`);
  return p;
}

/** Start requests the service refuses with 410 (spec 02 Errors): name, the detail, the parameters, more fields. */
const INVALID_STARTS: [string, string, Record<string, unknown>, Record<string, unknown>?][] = (() => {
  const base = { ...MULAW_8K };
  return [
    ['unknown model', 'Invalid Model Name', base],
    ['domain id of 7 characters', 'Invalid domainid', { ...base, 'recognizeParameter.domainId': 'cpdomai' }],
    ['domain id with a symbol', 'Invalid domainid', { ...base, 'recognizeParameter.domainId': 'cp-domai' }],
    [
      'missing domain id',
      'Invalid domainid',
      { 'baseParam.samplingRate': 8000, 'baseParam.audioCodec': 'mulaw' },
    ],
    [
      'rate below the model',
      'param.baseParam.samplingRate is invalid (must be at least the model bandwidth)',
      { ...base, 'baseParam.samplingRate': 6000, 'baseParam.audioCodec': 'pcm' },
    ],
    [
      'mu-law at 16 kHz',
      'param.baseParam.samplingRate must be 8000 Hz',
      { ...base, 'baseParam.samplingRate': 16000 },
    ],
    [
      'missing rate',
      'param.baseParam.samplingRate is invalid (must be at least the model bandwidth)',
      { 'recognizeParameter.domainId': 'cpdomain' },
    ],
    ['unknown codec', 'param.baseParam.audioCodec is invalid', { ...base, 'baseParam.audioCodec': 'opus' }],
    [
      'maxResults 0',
      'param.recognizeParameter.maxResults is invalid',
      { ...base, 'recognizeParameter.maxResults': 0 },
    ],
    [
      'maxResults 31',
      'param.recognizeParameter.maxResults is invalid',
      { ...base, 'recognizeParameter.maxResults': 31 },
    ],
    ['boolean as a number', 'param.baseParam.filler is invalid', { ...base, 'baseParam.filler': 1 }],
    ['words not a list', 'Invalid Parameter -> List is null', base, { words: 'x' }],
    ['word with neither field', 'Invalid Parameter -> List is null', base, { words: [{}] }],
    ['empty surface', 'Surface empty', base, { words: [{ surface: '', reading: 'テスト' }] }],
    ['empty reading', 'Reading empty', base, { words: [{ surface: '試験', reading: '' }] }],
    ['illegal surface', 'Surface illegal', base, { words: [{ surface: 'a|b', reading: 'エービー' }] }],
    ['hiragana reading', 'Reading illegal', base, { words: [{ surface: '試験', reading: 'しけん' }] }],
    ['prob 0', 'Prob illegal', base, { words: [{ surface: '試験', reading: 'シケン', prob: 0 }] }],
    ['prob 101', 'Prob illegal', base, { words: [{ surface: '試験', reading: 'シケン', prob: 101 }] }],
    ['prob 2.5', 'Prob illegal', base, { words: [{ surface: '試験', reading: 'シケン', prob: 2.5 }] }],
    [
      'too long',
      'Surface too long',
      base,
      { words: [{ surface: 'あ'.repeat(80), reading: 'ア'.repeat(4) }] },
    ],
    [
      '1001 words',
      'Cascade words exceeded 1000',
      base,
      { words: Array.from({ length: 1001 }, () => ({ surface: 'a', reading: 'ア' })) },
    ],
  ];
})();

describe('start: validation (410 Invalid Parameter, spec 02 Errors)', () => {
  for (const [name, detail, param, extra] of INVALID_STARTS) {
    it(`${name} → ${detail}`, async () => {
      const c = new StreamClient(emu, access, name === 'unknown model' ? 'ja-nope-08' : 'ja-gen_tf-08');
      expectError(await c.start(param, extra), 410, 'Invalid Parameter', detail);
    });
  }

  it('mu-law only on the three 8 kHz models', async () => {
    for (const model of ['ja-gen_tf-16', 'ja-gen_sf-16', 'en_en-gen_sf-16']) {
      const c = new StreamClient(emu, access, model);
      expectError(
        await c.start({ ...MULAW_8K }),
        410,
        'Invalid Parameter',
        'param.baseParam.samplingRate is invalid (must be at least the model bandwidth)',
      );
    }
    for (const model of ['ja-gen_tf-08', 'ja-mdl1_nrw-08', 'ja-mdl2_nrw-08']) {
      const c = new StreamClient(emu, access, model);
      expect((await c.start({ ...MULAW_8K })).status).toBe(200);
      expect((await c.command('cancel')).status).toBe(200);
    }
  });

  it('msgname other than start → msg.msgname is invalid', async () => {
    const res = await post(
      `${emu.baseUrl}/asr/v1/speech_recognition/ja-gen_tf-08`,
      JSON.stringify({ msg: { msgname: 'begin' }, param: MULAW_8K }),
      {
        'Content-Type': 'application/json',
        Authorization: `Bearer ${access}`,
      },
    );
    expectError(res, 410, 'Invalid Parameter', 'msg.msgname is invalid');
  });

  it('accepts numbers and booleans as strings, words: [], any key order, content type with spaces', async () => {
    const body = JSON.stringify({
      words: [],
      param: {
        'recognizeParameter.maxResults': '5',
        'baseParam.filler': 'true',
        'recognizeParameter.domainId': 'cpdomain',
        'baseParam.audioCodec': 'mulaw',
        'baseParam.samplingRate': '8000',
      },
      msg: { msgname: 'start' },
    });
    const res = await post(`${emu.baseUrl}/asr/v1/speech_recognition/ja-gen_tf-08`, body, {
      'Content-Type': ' application/json ;  charset=UTF-8 ',
      Authorization: `Bearer ${access}`,
    });
    expect(res.status).toBe(200);
    const valid = await new StreamClient(emu, access).start(MULAW_8K, {
      words: [{ surface: '回線', reading: 'カイセン', prob: '50' }],
    });
    expect(valid.status).toBe(200);
  });

  it('a well-formed domain id that is not the account’s → 550 No Resource', async () => {
    const c = new StreamClient(emu, access);
    expectError(
      await c.start({ ...MULAW_8K, 'recognizeParameter.domainId': 'otherdom' }),
      550,
      'No Resource',
      'VRG_RESPONSE_SERVICE_UNAVAILABLE',
    );
  });
});

describe('started answer', () => {
  it('is [{msg:{msgname:"started", uniqueId}}] with a token cookie and a load-balancer cookie, never Secure', async () => {
    const c = new StreamClient(emu, access);
    const res = await c.start();
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=UTF-8');
    const body = res.json as Msg[];
    expect(body).toEqual([
      { msg: { msgname: 'started', uniqueId: expect.stringMatching(/^[0-9a-f]{32}$/) } },
    ]);
    expect(res.headers['unique-id']).toBe(body[0]!.msg.uniqueId);
    const cookies = res.headers['set-cookie'] as string[];
    expect(cookies.some((x) => x.startsWith('token='))).toBe(true);
    expect(cookies.some((x) => x.startsWith('CPLBROUTE='))).toBe(true);
    expect(cookies.every((x) => !/secure/i.test(x))).toBe(true);
    await c.command('cancel');
  });

  it('works at /api/asr/v1 as well as /api/dev/asr/v1', async () => {
    const res = await post(
      `${emu.url}/api/asr/v1/speech_recognition/ja-gen_tf-08`,
      JSON.stringify({ msg: { msgname: 'start' }, param: MULAW_8K }),
      {
        'Content-Type': 'application/json',
        Authorization: `Bearer ${access}`,
      },
    );
    expect(res.status).toBe(200);
  });
});

describe('session rules: requests, cookies and timing', () => {
  it('audio answers 204 when there is nothing to say and rotates the token cookie', async () => {
    const c = await started();
    const before = c.jar.get('token');
    const res = await c.audio(silence(0.24));
    expect(res.status).toBe(204);
    expect(res.body.length).toBe(0);
    expect(c.jar.get('token')).not.toBe(before);
    elapse(0.24); // stop answers once the recognizer has reached the end of the audio
    const stop = await c.command('stop');
    expect(stop.status).toBe(200);
    expect(stop.json).toEqual([{ msg: { msgname: 'completed', uniqueId: c.uniqueId, cause: 'STOP' } }]);
  });

  it('unknown unique id → 411 Invalid State', async () => {
    const c = await started();
    expectError(
      await c.audio(silence(0.24), { 'Unique-ID': 'f'.repeat(32) }),
      411,
      'Invalid State',
      'Invalid Unique ID',
    );
  });

  it('missing load-balancer cookie → 411', async () => {
    const c = await started();
    expectError(
      await c.audio(silence(0.24), { Cookie: `token=${c.jar.get('token')}` }),
      411,
      'Invalid State',
      'Invalid Unique ID',
    );
  });

  it('a token cookie other than the last answer’s → 450, and the session is dead (411 after)', async () => {
    const c = await started();
    const first = c.jar.get('token')!;
    expect((await c.audio(silence(0.24))).status).toBe(204);
    const stale = `token=${first}; CPLBROUTE=${c.jar.get('CPLBROUTE')}`;
    expectError(await c.audio(silence(0.24), { Cookie: stale }), 450, 'Invalid Token', 'token Error');
    expectError(await c.audio(silence(0.24)), 411, 'Invalid State', 'Invalid Unique ID');
    expectError(await c.command('stop'), 411, 'Invalid State', 'Invalid Unique ID');
  });

  it('first audio later than 1 s ÷ speed after the start answer → 552 Network Error', async () => {
    const onTime = await started();
    clock.advance(1000 / SPEED); // exactly the deadline: still in time
    expect((await onTime.audio(silence(0.24))).status).toBe(204);
    const late = await started();
    clock.advance(1000 / SPEED + 1);
    expectError(await late.audio(silence(0.24)), 552, 'Network Error', 'Network');
  });

  it('stop later than 1 s ÷ speed after the last audio answer → 552', async () => {
    const onTime = await started();
    expect((await onTime.audio(silence(0.24))).status).toBe(204);
    clock.advance(1000 / SPEED); // exactly the deadline (and the recognizer is done): still in time
    expect((await onTime.command('stop')).status).toBe(200);
    const late = await started();
    expect((await late.audio(silence(0.24))).status).toBe(204);
    clock.advance(1000 / SPEED + 1);
    expectError(await late.command('stop'), 552, 'Network Error', 'Network');
  });

  it('cancel answers 200 with completed CANCEL and ends the session', async () => {
    const c = await started();
    await c.audio(silence(0.24));
    const res = await c.command('cancel');
    expect(res.status).toBe(200);
    expect(res.json).toEqual([{ msg: { msgname: 'completed', uniqueId: c.uniqueId, cause: 'CANCEL' } }]);
    expectError(await c.audio(silence(0.24)), 411, 'Invalid State', 'Invalid Unique ID');
  });
});

describe('session rules: buffer and pacing', () => {
  it('audio further ahead than the 2 s buffer → 412 Interval Too Brief', async () => {
    // The clock stands still: the recognizer stays where the first audio arrived, so every chunk adds
    // its whole length to the buffer, however long the requests take.
    const c = await started();
    for (let i = 1; i <= 8; i++) {
      expect((await c.audio(silence(0.24))).status).toBe(204);
      expect(pacing(c).recognizedSeconds).toBe(0);
      expect(pacing(c).aheadSeconds).toBeCloseTo(0.24 * i, 9);
    }
    // Exactly the buffer is accepted…
    expect((await c.audio(silence(BUFFER_SECONDS - 8 * 0.24))).status).toBe(204);
    expect(pacing(c).aheadSeconds).toBeCloseTo(BUFFER_SECONDS, 9);
    // …one sample beyond it is refused, and the error ends the session.
    expectError(
      await c.audio(silence(1 / 8000)),
      412,
      'Interval Too Brief',
      'audio transmission interval is too short',
    );
    expect(emu.pacing(c.uniqueId)).toBeUndefined();
    expectError(await c.audio(silence(0.24)), 411, 'Invalid State', 'Invalid Unique ID');
  });

  it('the buffer drains at real time ÷ speed: what counts is how far ahead, not how many chunks', async () => {
    const c = await started();
    for (let i = 0; i < 8; i++) expect((await c.audio(silence(0.24))).status).toBe(204);
    elapse(0.5); // the recognizer reaches 0.5 s: 1.42 s of the 1.92 s sent are still ahead
    expect(pacing(c).recognizedSeconds).toBeCloseTo(0.5, 6);
    expect(pacing(c).aheadSeconds).toBeCloseTo(1.42, 6);
    expect((await c.audio(silence(0.24))).status).toBe(204); // 1.66 s ahead
    expect((await c.audio(silence(0.24))).status).toBe(204); // 1.90 s ahead
    expectError(
      await c.audio(silence(0.24)), // would be 2.14 s ahead
      412,
      'Interval Too Brief',
      'audio transmission interval is too short',
    );

    // A client on schedule (240 ms of audio per 240 ms ÷ speed) sends six buffers' worth, never refused.
    const d = await started();
    for (let i = 0; i < 50; i++) {
      expect((await d.audio(silence(0.24))).status).toBe(204);
      expect(pacing(d).aheadSeconds).toBeLessThanOrEqual(0.24 + 1e-6);
      elapse(0.24);
    }
    expect(pacing(d).receivedSeconds).toBeCloseTo(12, 6);
    expect((await d.command('stop')).status).toBe(200);
  });

  it('a ceiling above speed: pacing up to ceiling × real time is accepted, 10 % faster is refused', async () => {
    const ceilingClock = new ManualClock(0);
    const fast = await startEmulator({ port: 0, speed: 1, ceiling: 4, clock: ceilingClock.now, slackMs: 0 });
    try {
      const fastAccess = await token(fast);
      const send = async (rate: number, chunks: number) => {
        const c = new StreamClient(fast, fastAccess, 'ja-gen_tf-08');
        expect((await c.start(MULAW_8K)).status).toBe(200);
        for (let i = 0; i < chunks; i++) {
          const res = await c.audio(silence(0.24));
          if (res.status !== 204) return { refusedAt: i, res };
          ceilingClock.advance((0.24 / rate) * 1000);
        }
        return { refusedAt: undefined, res: await c.command('stop') };
      };
      // A stall earns credit at real time × speed (1 here), not at the ceiling: after 5 s with one
      // chunk, a burst of 5 s + the 2-s buffer goes through (29 chunks with the first), the next does not.
      const stalled = new StreamClient(fast, fastAccess, 'ja-gen_tf-08');
      expect((await stalled.start(MULAW_8K)).status).toBe(200);
      expect((await stalled.audio(silence(0.24))).status).toBe(204);
      ceilingClock.advance(5000);
      for (let i = 1; i < 29; i++) expect((await stalled.audio(silence(0.24))).status).toBe(204);
      expectError(
        await stalled.audio(silence(0.24)),
        412,
        'Interval Too Brief',
        'audio transmission interval is too short',
      );
      // 60 s of audio in 15 s: four times real time, at the ceiling, never refused.
      const atCeiling = await send(4, 250);
      expect(atCeiling.refusedAt).toBeUndefined();
      expect(atCeiling.res.status).toBe(200);
      // At 4.4×, 0.024 s of audio more per chunk than the recognizer works through: the 2-s buffer
      // overflows after about 80 chunks.
      const above = await send(4.4, 250);
      expect(above.refusedAt).toBeGreaterThan(70);
      expect(above.refusedAt).toBeLessThan(95);
      expectError(above.res, 412, 'Interval Too Brief', 'audio transmission interval is too short');
    } finally {
      await fast.close();
    }
  });
});

describe('session rules: session ends', () => {
  it('a request while the previous is unanswered (stop waiting for recognition) → 412', async () => {
    const c = await started();
    for (let i = 0; i < 8; i++) expect((await c.audio(silence(0.24))).status).toBe(204);
    // The clock stands still: stop waits for a recognizer 1.92 s behind, and stays unanswered.
    const stop = c.command('stop');
    await vi.waitFor(() => expect(pacing(c).busy).toBe(true), { timeout: 60_000, interval: 2 });
    const again = await c.audio(silence(0.24));
    expectError(again, 412, 'Interval Too Brief', 'audio transmission interval is too short');
    expectError(await stop, 412, 'Interval Too Brief', 'audio transmission interval is too short');
  });

  it('an unknown msgname on a session → 410 and the session ends', async () => {
    const c = await started();
    expectError(await c.command('pause'), 410, 'Invalid Parameter', 'msg.msgname is invalid');
    expectError(await c.audio(silence(0.24)), 411, 'Invalid State', 'Invalid Unique ID');
  });

  it('a session nobody talks to for 10 s ÷ speed → 651 Session Timeout, told once, then 411', async () => {
    const c = await started();
    expect((await c.audio(silence(0.24))).status).toBe(204);
    clock.advance(10_000 / SPEED); // exactly the idle time: still alive
    expect((await c.audio(silence(0.24))).status).toBe(204);
    clock.advance(10_000 / SPEED + 1);
    expectError(await c.audio(silence(0.24)), 651, 'Session Timeout', '');
    expectError(await c.audio(silence(0.24)), 411, 'Invalid State', 'Invalid Unique ID');
  });

  it('stop completes after all results are out: completed STOP last', async () => {
    const c = await started(MULAW_8K, {}, 'ja-gen_tf-08', 'live');
    const audio = toMulaw(synthesize({ rate: 8000, phrases: [{ id: 1, start: 0.3 }], duration: 1.2 }));
    const run = await streamAudio(c, audio, { chunkBytes: CHUNK, bytesPerSecond: 8000, speed: SPEED });
    expect(run.errors).toEqual([]);
    const names = run.messages.map((m) => m.msg.msgname);
    expect(names).toEqual([
      'speechStartDetected',
      'speechEndDetected',
      'recognized',
      'recognized',
      'completed',
    ]);
    expect(run.messages.at(-1)!.msg.cause).toBe('STOP');
    expect(run.messages[3]!.result).toEqual({ type: 2, sentence: [] });
    expect(run.messages.every((m) => m.msg.uniqueId === c.uniqueId)).toBe(true);
  });
});

describe('chunk sizes and session length', () => {
  it('non-240 ms chunks are accepted and counted without --strict-chunks', async () => {
    const before = emu.stats().nonStandardChunks;
    const c = await started();
    expect((await c.audio(silence(0.1))).status).toBe(204);
    expect((await c.audio(silence(0.3))).status).toBe(204);
    expect(emu.stats().nonStandardChunks).toBe(before + 2);
    await c.command('cancel');
  });

  it('with --strict-chunks: a larger chunk → 413; a shorter one only as the last', async () => {
    const strict = await startEmulator({ port: 0, speed: SPEED, strictChunks: true, clock: clock.now });
    try {
      const t = await token(strict);
      const a = new StreamClient(strict, t);
      await a.start();
      expectError(await a.audio(silence(0.3)), 413, 'Invalid Data', 'Data is not available');
      const b = new StreamClient(strict, t);
      await b.start();
      expect((await b.audio(silence(0.24))).status).toBe(204);
      expect((await b.audio(silence(0.1))).status).toBe(204);
      expectError(await b.audio(silence(0.24)), 413, 'Invalid Data', 'Data is not available');
      const c = new StreamClient(strict, t);
      await c.start();
      expect((await c.audio(silence(0.24))).status).toBe(204);
      expect((await c.audio(silence(0.1))).status).toBe(204);
      elapse(1); // the recognizer is done (0.34 s of audio), within the 1-s deadline
      expect((await c.command('stop')).status).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it('more than 3,000 s of audio in a session → 413', async () => {
    const off = await startEmulator({ port: 0, pacing: 'off', clock: clock.now });
    try {
      const c = new StreamClient(off, await token(off));
      await c.start();
      const big = silence(600);
      for (let i = 0; i < 5; i++) expect((await c.audio(big)).status).toBe(204);
      expectError(await c.audio(silence(0.24)), 413, 'Invalid Data', 'Data is not available');
    } finally {
      await off.close();
    }
  });
});

describe('recognized messages and options', () => {
  const audio8k = toMulaw(synthesize({ rate: 8000, phrases: [{ id: 8, start: 0.5 }], duration: 1.8 }));
  const text8 = 'えーっと、ご登録のお電話番号をお伺いしてもよろしいでしょうか。';

  async function recognize(param: Record<string, unknown>, model = 'ja-gen_tf-08') {
    const c = await started(param, {}, model, 'live');
    const run = await streamAudio(c, audio8k, { chunkBytes: CHUNK, bytesPerSecond: 8000, speed: SPEED });
    expect(run.errors).toEqual([]);
    return run.messages;
  }

  it('defaults: no fillers, no punctuation, spaces between words, one candidate, no reading, no interim', async () => {
    const messages = await recognize(MULAW_8K);
    const f = messages.filter((m) => m.msg.msgname === 'recognized' && m.result!.type === 1);
    expect(f).toHaveLength(1);
    const s = f[0]!.result!.sentence;
    expect(s).toHaveLength(1);
    expect(s[0]!.surface.replace(/ /g, '')).toBe('ご登録のお電話番号をお伺いしてもよろしいでしょうか');
    expect(s[0]!.surface).toContain(' ');
    expect(s[0]).not.toHaveProperty('reading');
    expect(messages.some((m) => m.result?.type === 0)).toBe(false);
  });

  it('filler, punctuation, reading, delimiter false, maxResults, enableProgress', async () => {
    const messages = await recognize({
      ...MULAW_8K,
      'baseParam.filler': true,
      'baseParam.punctuation': true,
      'baseParam.reading': true,
      'baseParam.delimiter': false,
      'recognizeParameter.maxResults': 3,
      'recognizeParameter.enableProgress': true,
    });
    const final = messages.find((m) => m.result?.type === 1)!.result!.sentence;
    expect(final[0]!.surface).toBe(`[えーっと]、${text8.slice(5)}`);
    expect(final[0]!.reading).toMatch(/^エーット/);
    expect(final.length).toBe(3);
    expect(final[1]!.score).toBeLessThan(final[0]!.score);
    const interim = messages.filter((m) => m.result?.type === 0);
    expect(interim.length).toBeGreaterThanOrEqual(1);
    // Interim results show fillers, punctuation and spaces whatever the options, and never a reading.
    expect(interim[0]!.result!.sentence[0]!.surface).toContain('[えーっと] 、');
    expect(interim[0]!.result!.sentence[0]).not.toHaveProperty('reading');
    const order = messages.map((m) =>
      m.msg.msgname === 'recognized' ? `r${m.result!.type}` : m.msg.msgname,
    );
    expect(order.indexOf('r0')).toBeLessThan(order.indexOf('speechEndDetected'));
  });

  it('punctuation is ignored on ja-gen_sf-16 (the model does not allow it)', async () => {
    const pcm16 = toPcm16(synthesize({ rate: 16000, phrases: [{ id: 8, start: 0.5 }], duration: 1.8 }));
    const c = await started(
      {
        'baseParam.samplingRate': 16000,
        'recognizeParameter.domainId': 'cpdomain',
        'baseParam.punctuation': true,
        'baseParam.delimiter': false,
      },
      {},
      'ja-gen_sf-16',
      'live',
    );
    const run = await streamAudio(c, pcm16, { chunkBytes: 7680, bytesPerSecond: 32000, speed: SPEED });
    expect(finals(run.messages)[0]!.surface).toBe('ご登録のお電話番号をお伺いしてもよろしいでしょうか');
  });

  it('times are relative to the first audio byte: ms in timeinfo, seconds in sentences', async () => {
    const messages = await recognize(MULAW_8K);
    const start = messages.find((m) => m.msg.msgname === 'speechStartDetected')!.timeinfo!.startDetectTime!;
    const end = messages.find((m) => m.msg.msgname === 'speechEndDetected')!.timeinfo!.endDetectTime!;
    expect(Math.abs(start - 500)).toBeLessThanOrEqual(20);
    expect(Math.abs(end - (500 + 3 * 120 - 40))).toBeLessThanOrEqual(20);
    const s = finals(messages)[0]!;
    expect(Math.abs(s.startTime - 0.5)).toBeLessThan(0.1);
    expect(Math.abs(s.endTime - 0.82)).toBeLessThan(0.1);
  });

  it('an undecodable segment → 〈不明〉', async () => {
    const noise = Buffer.alloc(8000);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 7919) % 256;
    const audio = Buffer.concat([silence(0.3), noise.subarray(0, 2400), silence(0.9)]);
    const c = await started(MULAW_8K, {}, 'ja-gen_tf-08', 'live');
    const run = await streamAudio(c, audio, { chunkBytes: CHUNK, bytesPerSecond: 8000, speed: SPEED });
    expect(finals(run.messages).map((s) => s.surface)).toEqual(['〈不明〉']);
  });
});
