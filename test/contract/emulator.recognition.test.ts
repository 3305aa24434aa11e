/**
 * Recognition of synthetic recordings over real HTTP (issue 3, items 4 and 6): DTMF phrases streamed at
 * speed 100 come back as the phrasebook's text with times within ±0.1 s, through 8 kHz mu-law and PCM,
 * 48 kHz PCM, a crude resampler, and ffmpeg's resampling of a stereo 44.1 kHz recording split into its
 * channels. File recognition with its multipart rules.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.ts';
import { formatSurface } from '../../emulator/asr-text.ts';
import { loadPhrasebook } from '../../emulator/phrasebook.ts';
import { startEmulator, type RunningEmulator } from '../../emulator/server.ts';
import {
  phraseToneSeconds,
  resampleLinear,
  synthesize,
  toMulaw,
  toPcm16,
  wavFile,
  type PhraseAt,
} from '../helpers/dtmf-audio.ts';
import { finals, MULAW_8K, StreamClient, streamAudio, token, type Msg } from './emulator.client.ts';

const SPEED = 100;
const book = loadPhrasebook();
const OPTIONS = { filler: false, punctuation: true, delimiter: false };
const PARAM_OPTIONS = { 'baseParam.punctuation': true, 'baseParam.delimiter': false };
let emu: RunningEmulator;
let access: string;
const errors: number[] = [];

beforeAll(async () => {
  emu = await startEmulator({ port: 0, speed: SPEED });
  access = await token(emu);
});
afterAll(async () => {
  await emu.close();
  if (errors.length > 0) {
    console.log(
      `DTMF decode: ${errors.length / 2} phrases, max start/end error ${Math.max(...errors).toFixed(4)} s`,
    );
  }
});

const agentScript: PhraseAt[] = [
  { id: 1, start: 0.4 },
  { id: 5, start: 2.1 },
  { id: 16, start: 4.0 },
  { id: 42, start: 5.3 },
  { id: 67, start: 7.05 },
  { id: 89, start: 8.6 },
];
const customerScript: PhraseAt[] = [
  { id: 101, start: 1.2 },
  { id: 112, start: 3.1 },
  { id: 150, start: 6.2 },
  { id: 175, start: 9.4 },
];

function expectScript(messages: Msg[], script: PhraseAt[]) {
  const got = finals(messages);
  expect(got.map((s) => s.surface)).toEqual(script.map((p) => formatSurface(book.get(p.id)!, OPTIONS)));
  got.forEach((s, i) => {
    const p = script[i]!;
    const startError = Math.abs(s.startTime - p.start);
    const endError = Math.abs(s.endTime - (p.start + phraseToneSeconds(p.id)));
    errors.push(startError, endError);
    expect(startError).toBeLessThanOrEqual(0.1);
    expect(endError).toBeLessThanOrEqual(0.1);
  });
}

async function stream(audio: Buffer, param: Record<string, unknown>, model: string, bytesPerSecond: number) {
  const c = new StreamClient(emu, access, model);
  expect((await c.start({ ...param, ...PARAM_OPTIONS })).status).toBe(200);
  const run = await streamAudio(c, audio, {
    chunkBytes: Math.round(bytesPerSecond * 0.24),
    bytesPerSecond,
    speed: SPEED,
  });
  expect(run.errors).toEqual([]);
  expect(run.statuses.filter((s) => s !== 200 && s !== 204)).toEqual([]);
  return run.messages;
}

describe('streamed at speed 100: phrases and times within ±0.1 s', () => {
  it('8 kHz mu-law over low noise', async () => {
    const audio = toMulaw(synthesize({ rate: 8000, phrases: agentScript, noiseDbfs: -60 }));
    expectScript(await stream(audio, MULAW_8K, 'ja-gen_tf-08', 8000), agentScript);
  });

  it('8 kHz PCM', async () => {
    const audio = toPcm16(synthesize({ rate: 8000, phrases: customerScript }));
    const param = { 'baseParam.samplingRate': 8000, 'recognizeParameter.domainId': 'cpdomain' };
    expectScript(await stream(audio, param, 'ja-mdl1_nrw-08', 16000), customerScript);
  });

  it('48 kHz PCM sent at its own rate on a 16 kHz model', async () => {
    const audio = toPcm16(synthesize({ rate: 48000, phrases: agentScript, noiseDbfs: -60 }));
    const param = { 'baseParam.samplingRate': 48000, 'recognizeParameter.domainId': 'cpdomain' };
    expectScript(await stream(audio, param, 'ja-gen_tf-16', 96000), agentScript);
  });

  it('44.1 kHz resampled to 8 kHz mu-law by a crude linear resampler', async () => {
    const audio = toMulaw(
      resampleLinear(synthesize({ rate: 44100, phrases: customerScript, noiseDbfs: -60 }), 44100, 8000),
    );
    expectScript(await stream(audio, MULAW_8K, 'ja-gen_tf-08', 8000), customerScript);
  });

  it('a stereo 44.1 kHz call split into channels and transcoded to 8 kHz mu-law by ffmpeg', async () => {
    const dir = tempDir('emu-dtmf-');
    const duration = 11;
    const left = synthesize({ rate: 44100, phrases: agentScript, duration, noiseDbfs: -60, seed: 3 });
    const right = synthesize({ rate: 44100, phrases: customerScript, duration, noiseDbfs: -60, seed: 4 });
    const wav = join(dir, 'call.wav');
    writeFileSync(wav, wavFile([left, right], 44100));
    const channels = [agentScript, customerScript].map((script, c) => {
      const out = join(dir, `ch${c}.ul`);
      execFileSync('ffmpeg', [
        '-v',
        'error',
        '-y',
        '-i',
        wav,
        '-af',
        `pan=mono|c0=c${c}`,
        '-ar',
        '8000',
        '-c:a',
        'pcm_mulaw',
        '-f',
        'mulaw',
        out,
      ]);
      return { script, audio: readFileSync(out) };
    });
    // Both channels at once, as the pipeline streams them.
    const results = await Promise.all(channels.map((ch) => stream(ch.audio, MULAW_8K, 'ja-gen_tf-08', 8000)));
    results.forEach((messages, i) => expectScript(messages, channels[i]!.script));
  });
});

const url = () => `${emu.baseUrl}/asr/v1/speech_recognition/ja-gen_tf-08`;

function multipart(parts: { name: string; type?: string; data: Buffer | string }[], boundary = 'XbOuNdArY') {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`,
      ),
    );
    chunks.push(Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

/** Sends the body with chunked transfer encoding, in pieces. */
function sendChunked(body: Buffer, boundary = 'XbOuNdArY'): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url(),
      {
        method: 'POST',
        headers: {
          'Content-Type': `multipart/form-data; boundary="${boundary}"`,
          Authorization: `Bearer ${access}`,
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, json: JSON.parse(Buffer.concat(parts).toString('utf8')) }),
        );
      },
    );
    req.on('error', reject);
    for (let i = 0; i < body.length; i += 4096) req.write(body.subarray(i, i + 4096));
    req.end();
  });
}

const param = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ msg: { msgname: 'start' }, param: { ...MULAW_8K, ...PARAM_OPTIONS, ...extra } });
const stop = JSON.stringify({ msg: { msgname: 'stop' } });
const script: PhraseAt[] = [
  { id: 3, start: 0.5 },
  { id: 120, start: 2.0 },
];
const audio = toMulaw(synthesize({ rate: 8000, phrases: script, noiseDbfs: -60 }));

describe('file recognition (multipart, 60 s)', () => {
  it('three parts (chunked body, a part without content type) → the messages in order', async () => {
    const body = multipart([
      { name: 'parameter', type: 'application/json; charset=UTF-8', data: param() },
      { name: 'audio', data: audio },
      { name: 'command', type: 'application/json; charset=UTF-8', data: stop },
    ]);
    const res = await sendChunked(body);
    expect(res.status).toBe(200);
    const messages = res.json as Msg[];
    const names = messages.map((m) => m.msg.msgname);
    expect(names[0]).toBe('started');
    expect(names.at(-1)).toBe('completed');
    expect(messages.at(-1)!.msg.cause).toBe('STOP');
    expect(names.filter((n) => n === 'speechStartDetected')).toHaveLength(2);
    expectScript(messages, script);
  });

  it('enableProgress → 410; more than 60 s → 652; a missing part → 410', async () => {
    const progress = await sendChunked(
      multipart([
        { name: 'parameter', data: param({ 'recognizeParameter.enableProgress': true }) },
        { name: 'audio', data: audio },
        { name: 'command', data: stop },
      ]),
    );
    expect(progress.status).toBe(410);
    expect((progress.json as Msg[]).at(-1)!.errorinfo).toEqual({
      code: 410,
      message: 'Invalid Parameter',
      level: 'ERROR',
      detail: 'recognizeParameter.enableProgress must be false for file speech recognition',
    });
    const long = await sendChunked(
      multipart([
        { name: 'parameter', data: param() },
        { name: 'audio', data: Buffer.alloc(8000 * 60 + 8, 0xff) },
        { name: 'command', data: stop },
      ]),
    );
    expect(long.status).toBe(652);
    expect((long.json as Msg[]).at(-1)!.errorinfo).toMatchObject({
      code: 652,
      message: 'Excess Of Max Voice Length',
      detail: 'limit 60 seconds',
    });
    const exactly60 = await sendChunked(
      multipart([
        { name: 'parameter', data: param() },
        { name: 'audio', data: Buffer.alloc(8000 * 60, 0xff) },
        { name: 'command', data: stop },
      ]),
    );
    expect(exactly60.status).toBe(200);
    const missing = await sendChunked(
      multipart([
        { name: 'parameter', data: param() },
        { name: 'audio', data: audio },
      ]),
    );
    expect(missing.status).toBe(410);
    expect((missing.json as Msg[]).at(-1)!.errorinfo!.detail).toBe('msg.msgname is invalid');
  });
});
