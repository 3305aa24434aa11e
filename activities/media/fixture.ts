/**
 * Renders a fixture script (schemas/synthetic-recording.ts) to an audio file: each phrase becomes the
 * DTMF string `*id#` over silence or low noise, synthesized as 16-bit PCM in blocks and streamed into
 * ffmpeg's stdin, which encodes the container the file name (or an option) asks for. Memory stays flat
 * whatever the length: a 10-hour recording is never held whole.
 */
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { Readable } from 'node:stream';
import {
  DTMF_FREQUENCIES,
  DTMF_GAP_SECONDS,
  DTMF_LEVEL_DBFS,
  DTMF_TONE_SECONDS,
  fixtureScriptSchema,
  phraseSymbols,
  type FixtureScript,
} from '../../schemas/synthetic-recording.ts';
import { seededRandom } from '../../schemas/seeded-random.ts';
import { runFfmpeg } from './ffmpeg.ts';
import { MediaError } from './errors.ts';
import { mixLegs, settleAll, TELEPHONE_PATHS } from './telephone-path.ts';
import { makeScratchDir } from '../scratch.ts';

export const FIXTURE_CONTAINERS = ['wav', 'mp3', 'm4a', 'flac', 'ogg'] as const;
export type FixtureContainer = (typeof FIXTURE_CONTAINERS)[number];

export interface FixtureOptions {
  /** Output sample rate, 8,000 to 96,000 Hz. Default: the script's, else 8,000. */
  sampleRate?: number;
  /** Output channels; script channel i goes to output channel i, extra ones are silent. Default: the script's. */
  channels?: number;
  /** Container; default from the file name's extension. */
  container?: FixtureContainer;
  /** Codec inside a WAV file: linear PCM (default), mu-law or a-law. */
  wavCodec?: 'pcm_s16le' | 'pcm_mulaw' | 'pcm_alaw';
  /** Seed of the background noise. Default 1. */
  seed?: number;
  signal?: AbortSignal;
}

export interface FixtureResult {
  path: string;
  container: FixtureContainer;
  sampleRate: number;
  channels: number;
  durationSeconds: number;
}

const DEFAULT_SAMPLE_RATE = 8000;
const MIN_SAMPLE_RATE = 8000;
const MAX_SAMPLE_RATE = 96000;
/** Frames per rendered block: about a second at 48 kHz; large enough to be fast, small enough to stream. */
const BLOCK_FRAMES = 65536;
/** Low background noise: white noise at about -60 dBFS RMS (a uniform variable's RMS is its bound / √3). */
const NOISE_RMS_DBFS = -60;
const NOISE_BOUND = Math.round(32767 * 10 ** (NOISE_RMS_DBFS / 20) * Math.sqrt(3));
/** MP3 is mono or stereo; ffmpeg would otherwise downmix silently. */
const MP3_MAX_CHANNELS = 2;
/** Silence after the last phrase when the script gives no length. */
const DEFAULT_TAIL_SECONDS = 1;

/** How each container is written: ffmpeg muxer and codec arguments. */
const ENCODERS: Record<FixtureContainer, { format: string; codec: string[] }> = {
  wav: { format: 'wav', codec: ['-c:a', 'pcm_s16le'] },
  // Constant bit rate: realistic for telephony recorders, and it seeks exactly.
  mp3: { format: 'mp3', codec: ['-c:a', 'libmp3lame', '-b:a', '64k'] },
  // Left without +faststart, as many recorders write it: the index at the end.
  m4a: { format: 'ipod', codec: ['-c:a', 'aac', '-b:a', '64k'] },
  flac: { format: 'flac', codec: ['-c:a', 'flac'] },
  ogg: { format: 'ogg', codec: ['-c:a', 'libopus', '-b:a', '32k'] },
};

/** The container a file name implies, or undefined. */
export function containerOf(path: string): FixtureContainer | undefined {
  const ext = extname(path).slice(1).toLowerCase();
  if (ext === 'opus') return 'ogg';
  return (FIXTURE_CONTAINERS as readonly string[]).includes(ext) ? (ext as FixtureContainer) : undefined;
}

/** End of the last phrase of a script, in seconds. */
function scriptEndSeconds(script: FixtureScript): number {
  let end = 0;
  for (const channel of script.channels) {
    for (const p of channel.phrases) {
      end = Math.max(end, p.start + phraseSymbols(p.id).length * (DTMF_TONE_SECONDS + DTMF_GAP_SECONDS));
    }
  }
  return end;
}

interface Tone {
  /** First frame of the tone. */
  at: number;
  samples: Int16Array;
}

/** One tone per symbol, synthesized once per rate: two sines at DTMF_LEVEL_DBFS each. */
function toneTable(sampleRate: number): Map<string, Int16Array> {
  const amplitude = 32767 * 10 ** (DTMF_LEVEL_DBFS / 20);
  const length = Math.round(DTMF_TONE_SECONDS * sampleRate);
  const table = new Map<string, Int16Array>();
  for (const [symbol, [low, high]] of Object.entries(DTMF_FREQUENCIES)) {
    const samples = new Int16Array(length);
    for (let i = 0; i < length; i++) {
      const t = i / sampleRate;
      samples[i] = Math.round(
        amplitude * (Math.sin(2 * Math.PI * low * t) + Math.sin(2 * Math.PI * high * t)),
      );
    }
    table.set(symbol, samples);
  }
  return table;
}

/** Every tone of one script channel, in time order. */
function channelTones(
  phrases: FixtureScript['channels'][number]['phrases'],
  sampleRate: number,
  table: Map<string, Int16Array>,
): Tone[] {
  const tones: Tone[] = [];
  for (const phrase of phrases) {
    [...phraseSymbols(phrase.id)].forEach((symbol, k) => {
      const at = Math.round((phrase.start + k * (DTMF_TONE_SECONDS + DTMF_GAP_SECONDS)) * sampleRate);
      tones.push({ at, samples: table.get(symbol)! });
    });
  }
  return tones.sort((a, b) => a.at - b.at);
}

/**
 * The script as interleaved s16le PCM, block by block. Exposed for tests that check the signal itself.
 */
export function* renderPcm(
  script: FixtureScript,
  format: { sampleRate: number; channels: number; seed?: number },
): Generator<Buffer> {
  const { sampleRate, channels } = format;
  const durationSeconds = script.durationSeconds ?? scriptEndSeconds(script) + DEFAULT_TAIL_SECONDS;
  const totalFrames = Math.round(durationSeconds * sampleRate);
  const table = toneTable(sampleRate);
  const tones = script.channels.map((c) => channelTones(c.phrases, sampleRate, table));
  // Index of the first tone per channel that may still reach the current block.
  const next = tones.map(() => 0);
  const noise = script.background === 'noise';
  const random = seededRandom(format.seed ?? 1);

  for (let b0 = 0; b0 < totalFrames; b0 += BLOCK_FRAMES) {
    const frames = Math.min(BLOCK_FRAMES, totalFrames - b0);
    const block = new Int16Array(frames * channels);
    if (noise) {
      for (let i = 0; i < block.length; i++) block[i] = Math.round((random() * 2 - 1) * NOISE_BOUND);
    }
    for (let c = 0; c < Math.min(channels, tones.length); c++) {
      const list = tones[c]!;
      while (next[c]! < list.length && list[next[c]!]!.at + list[next[c]!]!.samples.length <= b0) next[c]!++;
      for (let k = next[c]!; k < list.length && list[k]!.at < b0 + frames; k++) {
        const { at, samples } = list[k]!;
        const from = Math.max(0, b0 - at);
        const to = Math.min(samples.length, b0 + frames - at);
        for (let i = from; i < to; i++) {
          const j = (at + i - b0) * channels + c;
          block[j] = Math.max(-32768, Math.min(32767, block[j]! + samples[i]!));
        }
      }
    }
    yield Buffer.from(block.buffer, block.byteOffset, block.byteLength);
  }
}

/** The script, validated, or a MediaError saying what is wrong with it. */
function parseScript(script: FixtureScript): FixtureScript {
  const parsed = fixtureScriptSchema.safeParse(script);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` (${issue.path.join('.')})` : '';
    throw new MediaError('invalid-option', `invalid fixture script: ${issue?.message ?? 'unknown'}${where}`);
  }
  return parsed.data;
}

/** What a render writes: container, rate, channel count and ffmpeg's muxer and codec arguments. */
interface OutputFormat {
  container: FixtureContainer;
  sampleRate: number;
  channels: number;
  format: string;
  codec: string[];
}

function outputFormat(script: FixtureScript, outPath: string, options: FixtureOptions): OutputFormat {
  const container = options.container ?? containerOf(outPath);
  if (!container) {
    throw new MediaError(
      'invalid-option',
      `cannot tell the container of ${outPath}: use .wav, .mp3, .m4a, .flac or .ogg`,
    );
  }
  const sampleRate = options.sampleRate ?? script.sampleRate ?? DEFAULT_SAMPLE_RATE;
  if (!Number.isInteger(sampleRate) || sampleRate < MIN_SAMPLE_RATE || sampleRate > MAX_SAMPLE_RATE) {
    throw new MediaError(
      'invalid-option',
      `sample rate must be an integer from ${MIN_SAMPLE_RATE} to ${MAX_SAMPLE_RATE} Hz`,
    );
  }
  const channels = options.channels ?? script.channels.length;
  if (!Number.isInteger(channels) || channels < script.channels.length) {
    throw new MediaError(
      'invalid-option',
      `the script has ${script.channels.length} channels: cannot write ${channels}`,
    );
  }
  if (container === 'mp3' && channels > MP3_MAX_CHANNELS) {
    throw new MediaError('invalid-option', `MP3 holds at most ${MP3_MAX_CHANNELS} channels, not ${channels}`);
  }
  const encoder = ENCODERS[container];
  const codec = container === 'wav' && options.wavCodec ? ['-c:a', options.wavCodec] : [...encoder.codec];
  // More than two channels of Opus: discrete channels (no surround layout can be guessed for them).
  if (container === 'ogg' && channels > 2) codec.push('-mapping_family', '255');
  return { container, sampleRate, channels, format: encoder.format, codec };
}

/**
 * Renders `script` to `outPath`; see {@link FixtureOptions}. A script with a channel of `legs` (a mono
 * call of two speakers, each through its own telephone path) is rendered by {@link renderLegFixture}.
 */
export async function renderFixture(
  script: FixtureScript,
  outPath: string,
  options: FixtureOptions = {},
): Promise<FixtureResult> {
  const valid = parseScript(script);
  if (valid.channels.some((c) => c.legs)) return renderLegFixture(valid, outPath, options);
  return renderChannels(valid, outPath, options);
}

/** Each script channel on its own output channel, as written. */
async function renderChannels(
  valid: FixtureScript,
  outPath: string,
  options: FixtureOptions,
): Promise<FixtureResult> {
  const { container, sampleRate, channels, format, codec } = outputFormat(valid, outPath, options);
  const durationSeconds = valid.durationSeconds ?? scriptEndSeconds(valid) + DEFAULT_TAIL_SECONDS;
  const pcm = Readable.from(renderPcm(valid, { sampleRate, channels, seed: options.seed }), {
    objectMode: false,
  });
  await runFfmpeg(
    [
      '-v',
      'error',
      '-f',
      's16le',
      '-ar',
      String(sampleRate),
      '-ac',
      String(channels),
      '-i',
      'pipe:0',
      ...codec,
      '-f',
      format,
      '-y',
      outPath,
    ],
    { stdin: pcm, signal: options.signal },
  );
  return { path: outPath, container, sampleRate, channels, durationSeconds };
}

/** How a channel's file is written: rate, ffmpeg's muxer and codec, and the seed of its background. */
interface ChannelOutput {
  sampleRate: number;
  format: string;
  codec: string[];
  seed: number;
  signal?: AbortSignal;
}

/**
 * One script channel with legs as a mono file: the phrases of each leg (a phrase without `leg` is on
 * leg 0) rendered alone, each as long as the script so its phrases keep their times, then passed through
 * the telephone path its preset names and summed (activities/media/telephone-path.ts).
 */
async function renderLegChannel(
  script: FixtureScript,
  channel: FixtureScript['channels'][number],
  outPath: string,
  output: ChannelOutput,
  dir: string,
): Promise<void> {
  const legs = channel.legs ?? [];
  const durationSeconds = script.durationSeconds ?? scriptEndSeconds(script) + DEFAULT_TAIL_SECONDS;
  const inputs = await settleAll(
    legs.map(async (_, leg) => {
      const input = join(dir, `${randomUUID()}.wav`);
      const phrases = channel.phrases.filter((p) => (p.leg ?? 0) === leg);
      // The line runs at 8 kHz: rendering the legs faster would only be filtered away. Each leg its own
      // background noise, so the legs' noises do not add up coherently.
      await renderChannels(
        { durationSeconds, background: script.background, channels: [{ phrases }] },
        input,
        {
          sampleRate: DEFAULT_SAMPLE_RATE,
          channels: 1,
          container: 'wav',
          seed: output.seed + leg,
          signal: output.signal,
        },
      );
      return input;
    }),
  );
  await mixLegs(
    legs.map((name, leg) => ({ input: inputs[leg]!, path: TELEPHONE_PATHS[name] })),
    outPath,
    {
      sampleRate: output.sampleRate,
      output: { format: output.format, codec: output.codec },
      signal: output.signal,
    },
  );
}

/** Seeds of one channel's backgrounds: apart from every other channel's and leg's. */
const SEEDS_PER_CHANNEL = 1000;

/**
 * Renders a script whose channels have `legs`: each such channel is the sum of its speakers' legs, each
 * through its own telephone path ({@link renderLegChannel}), as a PBX records a call of several speakers in
 * one channel; channels without legs are rendered as written, extra output channels are silent. A script
 * without legs is rendered as {@link renderFixture} does.
 */
export async function renderLegFixture(
  script: FixtureScript,
  outPath: string,
  options: FixtureOptions = {},
): Promise<FixtureResult> {
  const valid = parseScript(script);
  if (!valid.channels.some((c) => c.legs)) return renderFixture(valid, outPath, options);
  const { container, sampleRate, channels, format, codec } = outputFormat(valid, outPath, options);
  const durationSeconds = valid.durationSeconds ?? scriptEndSeconds(valid) + DEFAULT_TAIL_SECONDS;
  const seed = options.seed ?? 1;
  const { signal } = options;
  const dir = await makeScratchDir('fixture-legs-');
  try {
    // A mono recording: the legs' sum is the file.
    if (channels === 1) {
      await renderLegChannel(
        valid,
        valid.channels[0]!,
        outPath,
        { sampleRate, format, codec, seed, signal },
        dir,
      );
      return { path: outPath, container, sampleRate, channels, durationSeconds };
    }
    // Otherwise each channel on its own, then side by side.
    const pcm = { format: 'wav', codec: ['-c:a', 'pcm_s16le'] };
    const parts = await settleAll(
      valid.channels.map(async (channel, c) => {
        const part = join(dir, `channel-${c}.wav`);
        const channelSeed = seed + c * SEEDS_PER_CHANNEL;
        if (channel.legs) {
          await renderLegChannel(
            valid,
            channel,
            part,
            { sampleRate, ...pcm, seed: channelSeed, signal },
            dir,
          );
        } else {
          await renderChannels({ ...valid, durationSeconds, channels: [channel] }, part, {
            sampleRate,
            channels: 1,
            container: 'wav',
            seed: channelSeed,
            signal,
          });
        }
        return part;
      }),
    );
    const silent = channels - parts.length;
    const graph = [
      ...Array.from({ length: silent }, (_, i) => `anullsrc=r=${sampleRate}:cl=mono[silent${i}]`),
      `${parts.map((_, c) => `[${c}:a]`).join('')}${Array.from({ length: silent }, (_, i) => `[silent${i}]`).join('')}amerge=inputs=${channels}[out]`,
    ];
    await runFfmpeg(
      [
        '-v',
        'error',
        ...parts.flatMap((part) => ['-i', part]),
        '-filter_complex',
        graph.join(';'),
        '-map',
        '[out]',
        ...codec,
        '-f',
        format,
        '-y',
        outPath,
      ],
      { signal },
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return { path: outPath, container, sampleRate, channels, durationSeconds };
}
