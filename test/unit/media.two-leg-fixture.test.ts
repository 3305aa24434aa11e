/**
 * Two-leg mono fixtures: each speaker's leg through its own telephone path, then summed. Whatever the
 * paths do to the sound, the emulator must still hear every phrase: each recording is checked with the
 * emulator's own decoding (its Segmenter and parsePhrases) on what the emulator receives, 8 kHz mu-law.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_MONO_LEGS, generateCallScript, scriptedCall } from '../../activities/media/call-script.ts';
import { MediaError } from '../../activities/media/errors.ts';
import { runFfmpeg } from '../../activities/media/ffmpeg.ts';
import { renderFixture, renderLegFixture } from '../../activities/media/fixture.ts';
import { probeRecording } from '../../activities/media/probe.ts';
import { mixLegs, TELEPHONE_PATHS, type TelephonePath } from '../../activities/media/telephone-path.ts';
import { AudioDecoder } from '../../emulator/audio.ts';
import { parsePhrases, type DecodedPhrase } from '../../emulator/dtmf-decode.ts';
import { Segmenter } from '../../emulator/segments.ts';
import {
  fixtureScriptSchema,
  phraseDurationSeconds,
  TELEPHONE_PATH_NAMES,
  type FixtureScript,
  type TelephonePathName,
} from '../../schemas/synthetic-recording.ts';
import { makeTempDir } from '../helpers/media-fixtures.ts';

const tmp = makeTempDir('callpipe-two-leg-');
afterAll(() => tmp.cleanup());

/** The bytes of 240 ms of 8 kHz mu-law: one chunk of a recognition session. */
const CHUNK_BYTES = 1920;
/** How far a decoded start may be from the script's. */
const START_TOLERANCE_SECONDS = 0.1;
/**
 * How far the level difference of two legs' phrases may be from their gain difference: a tilt moves the
 * DTMF tones' level by up to half a dB and a GSM round trip lowers them by about 1 dB.
 */
const LEVEL_TOLERANCE_DB = 2;

let transcodes = 0;
/** The recording (after `filter`) as the pipeline's transcode hands it to recognition: 8 kHz mono mu-law. */
async function asMulaw(path: string, filter = 'anull'): Promise<Buffer> {
  const out = `${path}.${++transcodes}.ulaw`;
  await runFfmpeg([
    '-v',
    'error',
    '-i',
    path,
    '-af',
    filter,
    '-ar',
    '8000',
    '-ac',
    '1',
    '-c:a',
    'pcm_mulaw',
    '-f',
    'mulaw',
    '-y',
    out,
  ]);
  return readFileSync(out);
}

/** The audio of a file as 8-kHz floats. */
async function samplesOf(path: string): Promise<Float32Array> {
  const out = `${path}.s16`;
  await runFfmpeg(['-v', 'error', '-i', path, '-ar', '8000', '-ac', '1', '-f', 's16le', '-y', out]);
  return new AudioDecoder('pcm').decode(readFileSync(out));
}

/** What the emulator decodes from the audio, chunk by chunk, as a session would push it. */
function emulatorPhrases(mulaw: Buffer): DecodedPhrase[] {
  const decoder = new AudioDecoder('mulaw');
  const segmenter = new Segmenter(8000);
  const events = [];
  for (let at = 0; at < mulaw.length; at += CHUNK_BYTES) {
    events.push(...segmenter.push(decoder.decode(mulaw.subarray(at, at + CHUNK_BYTES))));
  }
  events.push(...segmenter.flush());
  return events.flatMap((e) => (e.kind === 'end' ? parsePhrases(e.symbols) : []));
}

function expectDecodes(script: FixtureScript, decoded: DecodedPhrase[]): void {
  const phrases = [...script.channels[0]!.phrases].sort((a, b) => a.start - b.start);
  expect(decoded.map((p) => p.id)).toEqual(phrases.map((p) => p.id));
  const worst = Math.max(...decoded.map((p, i) => Math.abs(p.start - phrases[i]!.start)));
  expect(worst).toBeLessThan(START_TOLERANCE_SECONDS);
}

/** RMS level in dBFS of the mu-law audio over the phrases of one leg. */
function legLevelDbfs(script: FixtureScript, mulaw: Buffer, leg: number): number {
  const samples = new AudioDecoder('mulaw').decode(mulaw);
  let sum = 0;
  let n = 0;
  for (const p of script.channels[0]!.phrases.filter((x) => (x.leg ?? 0) === leg)) {
    const from = Math.round(p.start * 8000);
    const to = Math.min(samples.length, Math.round((p.start + phraseDurationSeconds(p.id)) * 8000));
    for (let i = from; i < to; i++) sum += samples[i]! ** 2;
    n += Math.max(0, to - from);
  }
  return 10 * Math.log10(sum / n);
}

describe('two-leg mono call scripts', () => {
  it('records who says each phrase and the default legs', () => {
    const script = generateCallScript({ durationSeconds: 120, seed: 3, stereo: false });
    const channel = script.channels[0]!;
    expect(channel.legs).toEqual([...DEFAULT_MONO_LEGS]);
    expect(DEFAULT_MONO_LEGS).toEqual(['headset', 'mobile-gsm']);
    for (const p of channel.phrases) expect(p.leg).toBe(p.id < 100 ? 0 : 1);
    expect(fixtureScriptSchema.parse(script)).toEqual(script);
  });

  it('keeps plain mono when told, and stereo as it was', () => {
    for (const legs of [null, false] as const) {
      const plain = generateCallScript({ durationSeconds: 120, seed: 3, stereo: false, legs });
      expect(plain.channels[0]!.legs).toBeUndefined();
      expect(plain.channels[0]!.phrases.every((p) => p.leg === undefined)).toBe(true);
    }
    const stereo = generateCallScript({ durationSeconds: 120, seed: 3 });
    expect(
      stereo.channels.every((c) => c.legs === undefined && c.phrases.every((p) => p.leg === undefined)),
    ).toBe(true);
    const chosen = scriptedCall({
      durationSeconds: 120,
      stereo: false,
      legs: ['landline', 'far-line'],
    }).script;
    expect(chosen.channels[0]!.legs).toEqual(['landline', 'far-line']);
  });

  it('rejects legs that do not exist', () => {
    const bad = { channels: [{ legs: ['landline'], phrases: [{ id: 1, start: 0, leg: 1 }] }] };
    expect(fixtureScriptSchema.safeParse(bad).success).toBe(false);
    const unknown = { channels: [{ legs: ['tin-can'], phrases: [] }] };
    expect(fixtureScriptSchema.safeParse(unknown).success).toBe(false);
    // Without legs, a phrase's leg only says who speaks.
    expect(
      fixtureScriptSchema.safeParse({ channels: [{ phrases: [{ id: 1, start: 0, leg: 3 }] }] }).success,
    ).toBe(true);
  });
});

describe('two-leg mono rendering', () => {
  it('decodes every phrase of a 90-s call with the default legs, and the legs differ in level', async () => {
    const { script } = scriptedCall({ durationSeconds: 90, stereo: false, seed: 12, complaint: true });
    const out = join(tmp.dir, 'default.wav');
    const result = await renderFixture(script, out);
    expect(result).toMatchObject({ channels: 1, sampleRate: 8000, durationSeconds: 90 });
    expect(await probeRecording(out, { fingerprint: 'skip' })).toMatchObject({
      channels: 1,
      sampleRate: 8000,
      durationSeconds: 90,
    });
    const mulaw = await asMulaw(out);
    expectDecodes(script, emulatorPhrases(mulaw));
    const expected = TELEPHONE_PATHS.headset.gainDb - TELEPHONE_PATHS['mobile-gsm'].gainDb;
    const measured = legLevelDbfs(script, mulaw, 0) - legLevelDbfs(script, mulaw, 1);
    expect(Math.abs(measured - expected)).toBeLessThan(LEVEL_TOLERANCE_DB);
  }, 60_000);

  const pairs: [TelephonePathName, TelephonePathName][] = TELEPHONE_PATH_NAMES.flatMap((a, i) =>
    TELEPHONE_PATH_NAMES.slice(i + 1).map((b) => [a, b] as [TelephonePathName, TelephonePathName]),
  );
  it.each(pairs)(
    'decodes every phrase of a 90-s call through %s and %s',
    async (agent, customer) => {
      const script = generateCallScript({
        durationSeconds: 90,
        stereo: false,
        seed: 21,
        background: 'noise',
        legs: [agent, customer],
      });
      const out = join(tmp.dir, `${agent}-${customer}.flac`);
      await renderFixture(script, out, { sampleRate: 16000 });
      const mulaw = await asMulaw(out);
      expectDecodes(script, emulatorPhrases(mulaw));
      const expected = TELEPHONE_PATHS[agent].gainDb - TELEPHONE_PATHS[customer].gainDb;
      const measured = legLevelDbfs(script, mulaw, 0) - legLevelDbfs(script, mulaw, 1);
      expect(Math.abs(measured - expected)).toBeLessThan(LEVEL_TOLERANCE_DB);
    },
    60_000,
  );

  it('writes the container and codec asked', async () => {
    const script = generateCallScript({ durationSeconds: 20, stereo: false, seed: 5 });
    const out = join(tmp.dir, 'asked.wav');
    await renderLegFixture(script, out, { wavCodec: 'pcm_mulaw', sampleRate: 8000 });
    expect(await probeRecording(out, { fingerprint: 'skip' })).toMatchObject({
      codec: 'pcm_mulaw',
      channels: 1,
      durationSeconds: 20,
    });
  }, 60_000);

  it('renders a channel with legs beside plain and silent channels', async () => {
    const mono = generateCallScript({ durationSeconds: 30, stereo: false, seed: 8, background: 'noise' });
    const other = { phrases: [{ id: 5, start: 2 }] };
    const script: FixtureScript = { ...mono, channels: [mono.channels[0]!, other] };
    const out = join(tmp.dir, 'three.wav');
    expect(await renderFixture(script, out, { channels: 3 })).toMatchObject({ channels: 3 });
    expect(await probeRecording(out, { fingerprint: 'skip' })).toMatchObject({
      channels: 3,
      durationSeconds: 30,
    });
    const channel = (c: number) => asMulaw(out, `pan=mono|c0=c${c}`);
    expectDecodes(script, emulatorPhrases(await channel(0)));
    expectDecodes({ ...script, channels: [other] }, emulatorPhrases(await channel(1)));
    expect(emulatorPhrases(await channel(2))).toEqual([]);
  }, 60_000);

  it('falls back to plain rendering without legs', async () => {
    const script = generateCallScript({ durationSeconds: 20, stereo: true, seed: 5 });
    const result = await renderLegFixture(script, join(tmp.dir, 'stereo.wav'));
    expect(result.channels).toBe(2);
  }, 60_000);
});

describe('mixLegs', () => {
  /** A 1-kHz sine of amplitude 0.1 (-23 dBFS RMS) lasting `seconds`, as a 16-kHz WAV. */
  async function sine(name: string, seconds: number): Promise<string> {
    const path = join(tmp.dir, name);
    const source = `aevalsrc=0.1*sin(2*PI*1000*t):s=16000:d=${seconds}`;
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', source, '-y', path]);
    return path;
  }
  const flat: TelephonePath = { gainDb: 0, bandHz: [300, 3400], tiltDbPerOctave: 0, codec: 'none' };
  const rms = (samples: Float32Array, from: number, to: number) => {
    let sum = 0;
    for (let i = from; i < to; i++) sum += samples[i]! ** 2;
    return 10 * Math.log10(sum / (to - from));
  };

  it('pads to the longest leg, applies gains and adds noise at the level asked', async () => {
    const [long, short] = await Promise.all([sine('long.wav', 2), sine('short.wav', 1)]);
    const out = join(tmp.dir, 'mix.wav');
    await mixLegs(
      [
        { input: short, path: { ...flat, gainDb: -6 } },
        { input: long, path: { ...flat, gainDb: -100, noiseDbfs: -50 } },
      ],
      out,
    );
    const probe = await probeRecording(out, { fingerprint: 'skip' });
    expect(probe).toMatchObject({ sampleRate: 8000, channels: 1, durationSeconds: 2 });
    const samples = await samplesOf(out);
    // The sine at -6 dB (the noise adds 0.03 dB to it), then the noise alone.
    expect(rms(samples, 2000, 6000)).toBeCloseTo(-29, 0);
    expect(rms(samples, 10000, 16000)).toBeCloseTo(-50, 0);
  });

  it('tilts around 1 kHz', async () => {
    const tone = async (hz: number, tilt: number) => {
      const input = join(tmp.dir, `tone-${hz}.wav`);
      await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', `sine=f=${hz}:r=8000:d=1`, '-y', input]);
      const out = join(tmp.dir, `tilt-${hz}-${tilt}.wav`);
      await mixLegs([{ input, path: { ...flat, bandHz: [0, 3900], tiltDbPerOctave: tilt } }], out);
      const samples = await samplesOf(out);
      return rms(samples, 2000, 6000);
    };
    expect((await tone(1000, 4)) - (await tone(1000, 0))).toBeCloseTo(0, 0);
    // A first-order shelf: about the slope at 1 kHz, within its first octave either way.
    const up = (await tone(2000, 3)) - (await tone(2000, 0));
    const down = (await tone(500, 3)) - (await tone(500, 0));
    expect(up).toBeGreaterThan(2);
    expect(up).toBeLessThan(3.5);
    expect(down).toBeLessThan(-2);
    expect(down).toBeGreaterThan(-3.5);
  });

  it('refuses a path outside the line', async () => {
    const input = await sine('x.wav', 0.5);
    for (const path of [
      { ...flat, bandHz: [300, 4000] as const },
      { ...flat, tiltDbPerOctave: 6 },
      { ...flat, noiseDbfs: 0 },
    ]) {
      await expect(mixLegs([{ input, path }], join(tmp.dir, 'never.wav'))).rejects.toBeInstanceOf(MediaError);
    }
  });
});
