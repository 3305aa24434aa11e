import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { generateCallScript } from '../../activities/media/call-script.ts';
import { MediaError } from '../../activities/media/errors.ts';
import { containerOf, renderFixture, renderPcm } from '../../activities/media/fixture.ts';
import { probeRecording } from '../../activities/media/probe.ts';
import { CliError } from '../../cli/command.ts';
import * as fixtureCommand from '../../cli/commands/fixture.ts';
import * as planCommand from '../../cli/commands/plan.ts';
import { sessionPlanSchema } from '../../schemas/plan.ts';
import {
  AGENT_PHRASE_IDS,
  CUSTOMER_PHRASE_IDS,
  MISHEARD_PHRASE_IDS,
  PERSONAL_DATA_EXCHANGES,
  fixtureScriptSchema,
  phraseDurationSeconds,
  type FixtureScript,
} from '../../schemas/synthetic-recording.ts';
import { decodeDtmfPhrases } from '../helpers/dtmf-decode.ts';
import { makeTempDir } from '../helpers/media-fixtures.ts';

const tmp = makeTempDir();
afterAll(() => tmp.cleanup());

function pcmOf(script: FixtureScript, sampleRate: number, channels: number): Int16Array[] {
  const all = Buffer.concat([...renderPcm(script, { sampleRate, channels })]);
  const frames = all.length / 2 / channels;
  return Array.from({ length: channels }, (_, c) => {
    const out = new Int16Array(frames);
    for (let i = 0; i < frames; i++) out[i] = all.readInt16LE((i * channels + c) * 2);
    return out;
  });
}

describe('generateCallScript', () => {
  it('is deterministic per seed and valid', () => {
    const a = generateCallScript({ durationSeconds: 600, seed: 7 });
    expect(generateCallScript({ durationSeconds: 600, seed: 7 })).toEqual(a);
    expect(generateCallScript({ durationSeconds: 600, seed: 8 })).not.toEqual(a);
    expect(fixtureScriptSchema.parse(a)).toEqual(a);
  });

  it('gives agents agent lines and customers customer lines, a phrase every few seconds, taking turns', () => {
    const script = generateCallScript({ durationSeconds: 1800, seed: 3 });
    const [agent, customer] = script.channels;
    const ids = (c: typeof agent) => c!.phrases.map((p) => p.id);
    expect(Math.min(...ids(agent))).toBeGreaterThanOrEqual(AGENT_PHRASE_IDS.from);
    expect(Math.max(...ids(agent))).toBeLessThanOrEqual(AGENT_PHRASE_IDS.to);
    expect(Math.min(...ids(customer))).toBeGreaterThanOrEqual(CUSTOMER_PHRASE_IDS.from);
    expect(Math.max(...ids(customer))).toBeLessThanOrEqual(CUSTOMER_PHRASE_IDS.to);
    const total = agent!.phrases.length + customer!.phrases.length;
    // A phrase every few seconds on average (holds included).
    expect(1800 / total).toBeGreaterThan(1.5);
    expect(1800 / total).toBeLessThan(6);
    // The agent speaks first, and both sides speak throughout.
    expect(agent!.phrases[0]!.start).toBeLessThan(customer!.phrases[0]!.start);
    expect(customer!.phrases.at(-1)!.start).toBeGreaterThan(1700);
  });

  it('personalData opens with the exchanges of personal data, questions on the agent, answers on the customer', () => {
    const plain = generateCallScript({ durationSeconds: 300, seed: 5 });
    const script = generateCallScript({ durationSeconds: 300, seed: 5, personalData: true });
    const [agent, customer] = script.channels;
    const asks = PERSONAL_DATA_EXCHANGES.flatMap((e) => [e.ask, ...(e.reply ? [e.reply] : [])]);
    const answers = PERSONAL_DATA_EXCHANGES.flatMap((e) => e.answer);
    expect(agent!.phrases.slice(0, asks.length).map((p) => p.id)).toEqual(asks);
    expect(customer!.phrases.slice(0, answers.length).map((p) => p.id)).toEqual(answers);
    // Each answer after its question; the ordinary call goes on after the exchanges.
    const firstAnswer = customer!.phrases[0]!;
    expect(firstAnswer.start).toBeGreaterThan(agent!.phrases[0]!.start + phraseDurationSeconds(201));
    expect(
      customer!.phrases.some((p) => p.id >= CUSTOMER_PHRASE_IDS.from && p.id <= CUSTOMER_PHRASE_IDS.to),
    ).toBe(true);
    expect(fixtureScriptSchema.parse(script)).toEqual(script);
    expect(script).not.toEqual(plain);
  });

  it('garbled makes that share of the customer’s lines misheard or unknown; none of the agent’s', () => {
    const plain = generateCallScript({ durationSeconds: 900, seed: 5 });
    expect(generateCallScript({ durationSeconds: 900, seed: 5, garbled: 0 })).toEqual(plain);
    const script = generateCallScript({ durationSeconds: 900, seed: 5, garbled: 0.3 });
    const [agent, customer] = script.channels;
    const ids = customer!.phrases.map((p) => p.id);
    const misheard = ids.filter((id) => id >= MISHEARD_PHRASE_IDS.from && id <= MISHEARD_PHRASE_IDS.to);
    const unknown = ids.filter((id) => id === 999);
    const share = (misheard.length + unknown.length) / ids.length;
    expect(share).toBeGreaterThan(0.15);
    expect(share).toBeLessThan(0.45);
    expect(misheard.length).toBeGreaterThan(0);
    expect(unknown.length).toBeGreaterThan(0);
    expect(agent!.phrases.every((p) => p.id >= AGENT_PHRASE_IDS.from && p.id <= AGENT_PHRASE_IDS.to)).toBe(
      true,
    );
    expect(fixtureScriptSchema.parse(script)).toEqual(script);
  });

  it('mono puts both speakers on one channel without overlap, within the length', () => {
    const script = generateCallScript({ durationSeconds: 3600, seed: 11, stereo: false });
    expect(script.channels).toHaveLength(1);
    const phrases = script.channels[0]!.phrases;
    expect(phrases.some((p) => p.id >= CUSTOMER_PHRASE_IDS.from)).toBe(true);
    expect(phrases.some((p) => p.id <= AGENT_PHRASE_IDS.to)).toBe(true);
    phrases.forEach((p, i) => {
      const end = p.start + phraseDurationSeconds(p.id);
      expect(end).toBeLessThanOrEqual(3600);
      if (i + 1 < phrases.length) expect(phrases[i + 1]!.start).toBeGreaterThan(end);
    });
  });

  it('scales from 1 minute to 10 hours', () => {
    const long = generateCallScript({ durationSeconds: 36000, seed: 1 });
    expect(long.channels[0]!.phrases.length + long.channels[1]!.phrases.length).toBeGreaterThan(6000);
    expect(generateCallScript({ durationSeconds: 60 }).channels[0]!.phrases.length).toBeGreaterThan(3);
  });
});

describe('renderPcm', () => {
  const script: FixtureScript = {
    durationSeconds: 3,
    background: 'silence',
    channels: [{ phrases: [{ id: 42, start: 0.5 }] }, { phrases: [{ id: 108, start: 1.25 }] }],
  };

  it('puts each channel’s phrases on its own channel, decodable, at the scripted time', () => {
    const [left, right, extra] = pcmOf(script, 8000, 3);
    expect(left).toHaveLength(24000);
    expect(decodeDtmfPhrases(left!, 8000)).toEqual([{ id: 42, start: expect.closeTo(0.5, 1) }]);
    expect(decodeDtmfPhrases(right!, 8000)).toEqual([{ id: 108, start: expect.closeTo(1.25, 1) }]);
    expect(extra!.every((v) => v === 0)).toBe(true);
  });

  it('tones are about -12 dBFS per sine; the noise floor about -60 dBFS', () => {
    const [tone] = pcmOf({ ...script, channels: [{ phrases: [{ id: 1, start: 0 }] }] }, 48000, 1);
    // First tone ('*'): two sines of amplitude A, RMS A (each contributes A²/2).
    const first = tone!.subarray(0, Math.round(0.08 * 48000));
    const rms = Math.sqrt(first.reduce((s, v) => s + v * v, 0) / first.length) / 32768;
    expect(20 * Math.log10(rms)).toBeCloseTo(-12, 0);
    const [noise] = pcmOf({ durationSeconds: 1, background: 'noise', channels: [{ phrases: [] }] }, 8000, 1);
    const noiseRms = Math.sqrt(noise!.reduce((s, v) => s + v * v, 0) / noise!.length) / 32768;
    expect(20 * Math.log10(noiseRms)).toBeGreaterThan(-63);
    expect(20 * Math.log10(noiseRms)).toBeLessThan(-57);
  });
});

describe('renderFixture', () => {
  it('picks the container from the file name and the rate and channels from options', async () => {
    const script = generateCallScript({ durationSeconds: 20, seed: 2 });
    for (const [name, rate, codec] of [
      ['a.wav', 11025, 'pcm_s16le'],
      ['a.mp3', 32000, 'mp3'],
      ['a.m4a', 16000, 'aac'],
      ['a.flac', 96000, 'flac'],
      ['a.ogg', 48000, 'opus'],
    ] as const) {
      const channels = codec === 'mp3' ? 2 : 3;
      const result = await renderFixture(script, join(tmp.dir, name), { sampleRate: rate, channels });
      expect(result).toMatchObject({ sampleRate: rate, channels, durationSeconds: 20 });
      const probe = await probeRecording(result.path);
      expect(probe).toMatchObject({ codec, channels, sampleRate: rate });
    }
    expect(containerOf('x.OGG')).toBe('ogg');
    expect(containerOf('x.opus')).toBe('ogg');
    expect(containerOf('x.aiff')).toBeUndefined();
  });

  it('refuses what it cannot write', async () => {
    const script = generateCallScript({ durationSeconds: 5 });
    await expect(renderFixture(script, join(tmp.dir, 'x.aiff'))).rejects.toThrow(/cannot tell the container/);
    await expect(renderFixture(script, join(tmp.dir, 'x.wav'), { sampleRate: 4000 })).rejects.toBeInstanceOf(
      MediaError,
    );
    await expect(renderFixture(script, join(tmp.dir, 'x.wav'), { channels: 1 })).rejects.toThrow(
      /has 2 channels/,
    );
  });

  // How long it takes is the benchmarks' business; here, that 10 hours come out whole (one leg: the streamed
  // renderer; two-leg calls go through ffmpeg's telephone paths, test/unit/media.two-leg-fixture.test.ts).
  it('renders 10 hours of mono 8 kHz, streamed', async () => {
    const script = generateCallScript({ durationSeconds: 36000, seed: 4, stereo: false, legs: null });
    const out = join(tmp.dir, 'ten-hours.wav');
    await renderFixture(script, out);
    expect((await probeRecording(out, { fingerprint: 'skip' })).durationSeconds).toBe(36000);
    // Its work: 576 MB written and probed, a few seconds of CPU; the bound is for a machine busy with other tests.
  }, 600_000);
});

describe('callpipe fixture and callpipe plan', () => {
  it('renders a script file, generates calls, and plans them', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      const scriptPath = join(tmp.dir, 'script.json');
      writeFileSync(scriptPath, JSON.stringify({ channels: [{ phrases: [{ id: 5, start: 1 }] }] }));
      expect(
        await fixtureCommand.run([
          scriptPath,
          join(tmp.dir, 'one.flac'),
          '--rate',
          '16000',
          '--channels',
          '2',
        ]),
      ).toBe(0);
      expect(await probeRecording(join(tmp.dir, 'one.flac'))).toMatchObject({
        sampleRate: 16000,
        channels: 2,
      });

      const out = join(tmp.dir, 'gen.wav');
      const scriptOut = join(tmp.dir, 'gen.json');
      expect(
        await fixtureCommand.run([
          '--generate',
          '120',
          out,
          '--stereo',
          '--seed',
          '3',
          '--script-out',
          scriptOut,
        ]),
      ).toBe(0);
      expect(JSON.parse(readFileSync(scriptOut, 'utf8'))).toEqual(
        generateCallScript({ durationSeconds: 120, seed: 3 }),
      );

      log.mockClear();
      expect(await planCommand.run([out, '--max-session', '50', '--compact'])).toBe(0);
      const plan = sessionPlanSchema.parse(JSON.parse(String(log.mock.calls[0]![0])));
      expect(plan.tracks.map((t) => t.speaker)).toEqual(['agent', 'customer']);
      expect(plan.sessions.length).toBeGreaterThanOrEqual(6);
      expect(Math.max(...plan.sessions.map((s) => s.end - s.start))).toBeLessThanOrEqual(50);

      // --skip-silence: silences of 2 s or more are left out of the sessions, not only the minute-long.
      const streamed = (p: typeof plan) => p.sessions.reduce((sum, s) => sum + (s.end - s.start), 0);
      log.mockClear();
      expect(await planCommand.run([out, '--skip-silence', '2', '--compact'])).toBe(0);
      const skipping = sessionPlanSchema.parse(JSON.parse(String(log.mock.calls[0]![0])));
      expect(skipping.options.skipSilenceSeconds).toBe(2);
      expect(plan.options.skipSilenceSeconds).toBe(60);
      expect(streamed(skipping)).toBeLessThan(streamed(plan));

      log.mockClear();
      expect(await planCommand.run([out, '--mix', '--compact'])).toBe(0);
      expect(JSON.parse(String(log.mock.calls[0]![0])).tracks).toEqual([
        { track: 0, channel: 'mix', sourceChannels: [0, 1], speaker: 'mixed' },
      ]);
    } finally {
      log.mockRestore();
    }
  });

  it('turns user mistakes into one-line CliErrors', async () => {
    writeFileSync(join(tmp.dir, 'bad.json'), JSON.stringify({ channels: [] }));
    await expect(fixtureCommand.run([join(tmp.dir, 'bad.json'), join(tmp.dir, 'o.wav')])).rejects.toThrow(
      CliError,
    );
    await expect(fixtureCommand.run(['--generate', '60', join(tmp.dir, 'o.xyz')])).rejects.toThrow(
      /cannot tell the container/,
    );
    await expect(planCommand.run([])).rejects.toThrow(/expected one file/);
    await expect(planCommand.run([join(tmp.dir, 'missing.wav')])).rejects.toMatchObject({
      exitCode: 1,
      message: expect.stringMatching(/no such file/),
    });
    await expect(planCommand.run([join(tmp.dir, 'bad.json'), '--strategy', 'fast'])).rejects.toThrow(
      /fixed or balanced/,
    );
  });
});
