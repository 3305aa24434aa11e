import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeChannels, MIN_THRESHOLD_DB } from '../../activities/media/channel-analysis.ts';
import { applyChannelAnalysis, planTracks } from '../../activities/media/channels.ts';
import { runFfmpeg, spawnFfmpeg } from '../../activities/media/ffmpeg.ts';
import { Conditioner, conditioningFilters } from '../../activities/media/conditioning.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { plainInput } from '../../activities/media/media-input.ts';
import type { ChannelFacts } from '../../schemas/plan.ts';
import type { FixtureScript } from '../../schemas/synthetic-recording.ts';
import { makeTempDir, writeLavfi } from '../helpers/media-fixtures.ts';

const tmp = makeTempDir();
afterAll(() => tmp.cleanup());
const at = (name: string) => join(tmp.dir, name);

const SECONDS = 20;
const script: FixtureScript = {
  durationSeconds: SECONDS,
  background: 'noise',
  channels: [
    {
      phrases: [
        { id: 12, start: 1 },
        { id: 34, start: 9 },
      ],
    },
    {
      phrases: [
        { id: 123, start: 5 },
        { id: 145, start: 14 },
      ],
    },
  ],
};
const analyze = (name: string, channels: number, noiseDb = -30) =>
  analyzeChannels(plainInput(at(name), undefined), {
    channels,
    noiseDb,
    minSilenceSeconds: 0.3,
    durationSeconds: SECONDS,
  });

beforeAll(async () => {
  await renderFixture(script, at('call.wav'));
  // DC at -26 dBFS and 50 Hz hum at -35 dBFS RMS on both channels.
  const filtered = (filter: string, out: string) =>
    runFfmpeg(['-v', 'error', '-i', at('call.wav'), '-af', filter, '-y', at(out)]);
  await filtered("aeval=exprs='val(ch)+0.05+0.0251*sin(2*PI*50*t)':c=same", 'hum.wav');
  // The same signal on both channels, one inverted and 3 dB lower.
  await filtered('pan=stereo|c0=c0|c1=-0.7*c0', 'upmix.wav');
  // Hiss at about -40 dBFS RMS (peaks near -30): louder than the configured bound allows as silence.
  await runFfmpeg([
    '-v',
    'error',
    '-i',
    at('call.wav'),
    '-f',
    'lavfi',
    '-i',
    `anoisesrc=a=0.0175:c=white:r=8000:d=${SECONDS}:seed=3`,
    '-filter_complex',
    '[1:a]pan=stereo|c0=c0|c1=c0[n];[0:a][n]amix=inputs=2:normalize=0',
    '-y',
    at('hiss.wav'),
  ]);
});

describe('analyzeChannels', () => {
  it('finds the silences between phrases through DC and mains hum, and records the DC offset', async () => {
    const { channels, silences } = await analyze('hum.wav', 2);
    expect(channels.map((c) => c.status)).toEqual(['speech', 'speech']);
    expect(channels[0]!.dcOffset).toBeCloseTo(0.05, 3);
    // The hum is gone: the floor is the fixture's -60 dBFS noise, not -35 dBFS of hum.
    expect(channels[0]!.noiseFloorDb!).toBeLessThan(-50);
    for (const [c, list] of silences.entries()) {
      expect(list.length, `channel ${c}`).toBeGreaterThan(1);
      for (const p of script.channels[c]!.phrases)
        expect(list.some((s) => s.start < p.start + 0.1 && s.end > p.start + 0.1)).toBe(false);
    }
  });

  it('derives each threshold from the noise floor, bounded by the configured value and the minimum', async () => {
    const quiet = await analyze('call.wav', 2);
    expect(quiet.channels[0]!.silenceThresholdDb).toBeCloseTo(quiet.channels[0]!.noiseFloorDb! + 10, 1);
    const strict = await analyze('call.wav', 2, -50);
    expect(strict.channels[0]!.silenceThresholdDb).toBe(-50);
    const hiss = await analyze('hiss.wav', 2);
    expect(hiss.channels[0]!.silenceThresholdDb).toBe(-30);
    const digital = await analyzeChannels(plainInput(at('silent.wav'), undefined), {
      channels: 1,
      noiseDb: -30,
      minSilenceSeconds: 0.3,
      durationSeconds: 2,
    }).catch(() => undefined);
    expect(digital).toBeUndefined(); // no such file: the analysis fails rather than inventing facts
    await writeLavfi(at('silent.wav'), 'anullsrc=r=8000:cl=mono', ['-t', '2']);
    const silent = await analyzeChannels(plainInput(at('silent.wav'), undefined), {
      channels: 1,
      noiseDb: -30,
      minSilenceSeconds: 0.3,
      durationSeconds: 2,
    });
    expect(silent.channels[0]).toMatchObject({
      status: 'silent',
      noiseFloorDb: null,
      levelDb: null,
      silenceThresholdDb: MIN_THRESHOLD_DB,
    });
    expect(silent.silences[0]).toEqual([{ start: 0, end: 2 }]);
  });

  it('tells a duplicated channel (even inverted and quieter) from the two sides of a call', async () => {
    const call = await analyze('call.wav', 2);
    expect(call.channels.map((c) => c.status)).toEqual(['speech', 'speech']);
    const upmix = await analyze('upmix.wav', 2);
    expect(upmix.channels[1]).toMatchObject({ status: 'duplicate', duplicateOf: 0 });
    expect(upmix.channels[1]!.correlation!).toBeLessThan(-0.99);
  });
});

/** The conditioning's two 200-Hz sections at 8 kHz (Audio EQ Cookbook high-pass, Q 0.707), never flushed. */
function unflushedHighpass(input: Int16Array): Float64Array {
  const w0 = (2 * Math.PI * 200) / 8000;
  const alpha = Math.sin(w0) / (2 * 0.707);
  const a0 = 1 + alpha;
  const [b0, b1, a1, a2] = [
    (1 + Math.cos(w0)) / 2 / a0,
    -(1 + Math.cos(w0)) / a0,
    (-2 * Math.cos(w0)) / a0,
    (1 - alpha) / a0,
  ];
  const out = Float64Array.from(input);
  for (let section = 0; section < 2; section++) {
    let [s1, s2] = [0, 0];
    for (let i = 0; i < out.length; i++) {
      const x = out[i]!;
      const y = b0 * x + s1;
      s1 = b1 * x - a1 * y + s2;
      s2 = b0 * x - a2 * y;
      out[i] = y;
    }
  }
  return out;
}

describe('Conditioner', () => {
  it("conditions as ffmpeg's high-pass does (within a quantization step), removing DC and hum", async () => {
    const source = "aevalsrc=exprs='0.05+0.05*sin(2*PI*50*t)+0.2*sin(2*PI*1000*t)':s=8000:d=2";
    const pcm = async (filters: string[]) => {
      const chunks: Buffer[] = [];
      const proc = spawnFfmpeg([
        '-v',
        'error',
        '-f',
        'lavfi',
        '-i',
        source,
        ...(filters.length ? ['-af', filters.join(',')] : []),
        '-c:a',
        'pcm_s16le',
        '-f',
        's16le',
        'pipe:1',
      ]);
      for await (const chunk of proc.stdout) chunks.push(chunk as Buffer);
      await proc.done;
      const buf = Buffer.concat(chunks);
      return Array.from({ length: buf.length / 2 }, (_, i) => buf.readInt16LE(i * 2));
    };
    const [raw, byFfmpeg] = await Promise.all([pcm([]), pcm(conditioningFilters())]);
    const conditioner = new Conditioner(8000, 1);
    const byNode = raw.map((v) => conditioner.process(0, v));
    expect(Math.max(...byNode.map((v, i) => Math.abs(v - byFfmpeg[i]!)))).toBeLessThanOrEqual(2);
    // After the first 0.5 s: no DC, 50 Hz down to noise, the 1 kHz tone kept.
    const tail = byNode.slice(4000);
    const mean = tail.reduce((a, b) => a + b, 0) / tail.length;
    expect(Math.abs(mean)).toBeLessThan(5);
    expect(Math.max(...tail)).toBeGreaterThan(0.19 * 32768);
    expect(Math.max(...tail)).toBeLessThan(0.21 * 32768);
  });

  it('comes to rest at exactly zero in digital silence after a sound, as the unflushed filter would to within 1e-15', () => {
    // 0.5 s of a tone, then 3 s of exact zeros: the filter's state decays towards the subnormals.
    const input = new Int16Array(8000 * 3.5);
    for (let i = 0; i < 4000; i++) input[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
    const flushed = new Float64Array(input.length);
    new Conditioner(8000, 1).processBlock(0, input, 0, 1, flushed);
    const reference = unflushedHighpass(input);
    let worst = 0;
    for (let i = 0; i < input.length; i++) worst = Math.max(worst, Math.abs(flushed[i]! - reference[i]!));
    expect(worst).toBeLessThan(1e-15);
    // Unflushed, the last second still holds values under the smallest normal double; flushed, zeros.
    const last = (a: Float64Array) => Array.from(a.subarray(a.length - 8000));
    expect(last(reference).some((v) => v !== 0 && Math.abs(v) < 2.2250738585072014e-308)).toBe(true);
    expect(last(flushed).every((v) => v === 0)).toBe(true);
  });
});

describe('applyChannelAnalysis', () => {
  const fact = (channel: number, status: ChannelFacts['status'], duplicateOf?: number): ChannelFacts => ({
    channel,
    levelDb: -6,
    noiseFloorDb: -60,
    silenceThresholdDb: -50,
    dcOffset: 0,
    activeSeconds: status === 'silent' ? 0 : 5,
    status,
    ...(duplicateOf !== undefined ? { duplicateOf, correlation: 0.99 } : {}),
  });

  it('recognizes a duplicated stereo call once, as mixed', () => {
    const { tracks, decisions } = applyChannelAnalysis(planTracks(2), [
      fact(0, 'speech'),
      fact(1, 'duplicate', 0),
    ]);
    expect(tracks).toEqual([{ track: 0, channel: 0, sourceChannels: [0], speaker: 'mixed' }]);
    expect(decisions).toEqual([
      "channel 1 carries the same signal as channel 0 (correlation 0.99): recognized once, as 'mixed'",
    ]);
  });

  it('leaves a silent side out and keeps the other speaker', () => {
    const { tracks } = applyChannelAnalysis(planTracks(2), [fact(0, 'silent'), fact(1, 'speech')]);
    expect(tracks).toEqual([{ track: 0, channel: 1, sourceChannels: [1], speaker: 'customer' }]);
  });

  it('drops silent channels from a mix, keeps everything when every channel is silent or when told to', () => {
    const six = [fact(0, 'speech'), fact(1, 'speech'), ...[2, 3, 4, 5].map((c) => fact(c, 'silent'))];
    expect(applyChannelAnalysis(planTracks(6), six).tracks).toEqual([
      { track: 0, channel: 'mix', sourceChannels: [0, 1], speaker: 'mixed' },
    ]);
    const allSilent = [fact(0, 'silent'), fact(1, 'silent')];
    expect(applyChannelAnalysis(planTracks(2), allSilent).tracks).toEqual(planTracks(2));
    expect(
      applyChannelAnalysis(planTracks(2), [fact(0, 'speech'), fact(1, 'duplicate', 0)], { detect: false })
        .tracks,
    ).toEqual(planTracks(2));
  });
});
