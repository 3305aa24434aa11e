/**
 * Channel analysis: one ffmpeg pass decodes every channel, resampled to 8 kHz, and Node conditions it
 * (conditioning.ts: the same high-pass as the transcode's) and reads it in 10-ms windows, which gives
 * per channel
 *
 * - its noise floor and the silence threshold derived from it: silence is what stays within
 *   {@link NOISE_MARGIN_DB} of the floor, never louder than the configured threshold (the bound: above
 *   it is always speech) and never quieter than {@link MIN_THRESHOLD_DB}; so hiss and comfort noise are
 *   silence on a noisy line, and a quiet voice on a clean line is speech;
 * - its silences (runs of windows under the threshold, at least `minSilenceSeconds` long), which the
 *   plan cuts sessions in;
 * - whether it is silent for the whole call (under {@link SILENT_CHANNEL_MAX_ACTIVE_SECONDS} above its
 *   threshold), and whether it carries the same signal as another channel (mono up-mixed to stereo:
 *   |correlation| ≥ {@link DUPLICATE_MIN_CORRELATION}, measured on the conditioned samples so that hum
 *   two channels share does not make them alike);
 * - its DC offset before conditioning (the mean of the raw samples), for the record;
 *
 * and the recording's decoded length: the samples the pass decoded, counted at the analysis rate. That
 * count is the decoder's output, resampled: it equals a count at the native rate to within a sample (a
 * decoder that drops frames shortens both alike), and costs nothing more than the pass already does, so
 * the probe need not decode the whole recording a second time (plan.ts checks it against the packets).
 *
 * Memory: one 16-bit peak per channel and 10 ms (7 MB per channel for 10 hours), plus a histogram.
 *
 * The same run can also write tracks (`trackOutputs`): each track's channels, conditioned here for the
 * analysis already, mixed at equal gain, rounded to 16 bits and encoded as mu-law to a local file
 * (staged-tracks.ts), so the recognizer's audio costs no decode, resampling or filtering of its own. ffmpeg
 * only decodes and resamples; the analysis is unchanged by it. (ffmpeg's own high-pass, a branch per
 * track, cost ten times the decode on recordings with digital silence: bench/README.md, "Plan step".)
 */
import type { ChannelFacts, Silence } from '../../schemas/plan.ts';
import { Conditioner } from './conditioning.ts';
import { spawnFfmpeg } from './ffmpeg.ts';
import { inputArgs, type MediaInput } from './media-input.ts';
import { openTrackWriters, type TrackOutput, type TrackWriters } from './track-writers.ts';
import { roundThousandths } from '../../schemas/units.ts';

/** The analysis rate: the telephony band, and the rate of the recognizer's 8-kHz input. */
const ANALYSIS_RATE = 8000;
/**
 * Samples per frame after the resampler, which otherwise hands on frames of a few hundred samples: every
 * later filter, split branch and output then runs once per tiny frame, which cost as much CPU as the
 * decode itself. Frames only regroup the samples; their values do not change.
 */
const FRAME_SAMPLES = 4000;
/** Window of the level detector: 10 ms. */
const WINDOW_SECONDS = 0.01;
const WINDOW_SAMPLES = ANALYSIS_RATE * WINDOW_SECONDS;
/** The noise floor is the level that 10 % of a channel's windows stay under (its quietest stretches). */
const NOISE_FLOOR_PERCENTILE = 0.1;
/** Silence is within this much of the noise floor: a stationary noise's 10-ms peaks spread over about 5 dB. */
const NOISE_MARGIN_DB = 10;
/** A threshold never goes below this: the noise of 8-bit G.711 and of lossy codecs sits under it. */
export const MIN_THRESHOLD_DB = -70;
/** The level of a channel: what its loudest 0.1 % of windows reach. */
const LEVEL_PERCENTILE = 0.999;
/** A channel with less than this above its threshold carries nothing (a click is not a call). */
const SILENT_CHANNEL_MAX_ACTIVE_SECONDS = 0.2;
/** Two channels this correlated carry the same signal (a real call's two sides correlate under 0.3). */
const DUPLICATE_MIN_CORRELATION = 0.9;

export interface ChannelAnalysisOptions {
  /** Channels of the stream (ProbeResult.channels). */
  channels: number;
  /** The configured threshold, dBFS: the loudest a derived threshold may be. */
  noiseDb: number;
  /** Shortest silence reported, seconds. */
  minSilenceSeconds: number;
  /** Length of the recording as far as known before decoding (the probe's): sizes the buffers. */
  durationSeconds: number;
  /** Tracks the same run writes, each to its file as conditioned 8-kHz mu-law (staged-tracks.ts). */
  trackOutputs?: TrackOutput[];
  signal?: AbortSignal;
}

export interface ChannelAnalysis {
  channels: ChannelFacts[];
  /** Silences per source channel, in time order. */
  silences: Silence[][];
  /** What decoded, seconds: the samples of the pass at the analysis rate. */
  decodedSeconds: number;
}

const FULL_SCALE = 32768;
const toDb = (amplitude: number) => (amplitude > 0 ? round1(20 * Math.log10(amplitude / FULL_SCALE)) : null);
const round1 = (x: number) => Math.round(x * 10) / 10;

/** The smallest peak that `fraction` of the windows stay at or under (from a histogram of peaks). */
function percentile(histogram: Uint32Array, windows: number, fraction: number): number {
  const rank = Math.max(1, Math.ceil(windows * fraction));
  let seen = 0;
  for (let peak = 0; peak < histogram.length; peak++) {
    seen += histogram[peak]!;
    if (seen >= rank) return peak;
  }
  return histogram.length - 1;
}

/** No bytes left over. */
const EMPTY = Buffer.alloc(0);

/** Accumulates the samples of the conditioned stream: window peaks, energies and cross products. */
class Accumulator {
  readonly peaks: Uint16Array[];
  readonly histograms: Uint32Array[];
  readonly energy: Float64Array;
  /** Sums of the raw samples: the DC offset. */
  readonly sums: Float64Array;
  samples = 0;
  private readonly conditioner: Conditioner;
  /** Conditioned samples of the current block, per channel. */
  private block: Float64Array[] = [];
  /** Cross products of channel pairs (i < j), in the order of {@link pairs}. */
  readonly cross: Float64Array;
  readonly pairs: [number, number][] = [];
  windows = 0;
  private inWindow = 0;
  private readonly current: Float64Array;
  private rest: Buffer = EMPTY;

  readonly channels: number;
  constructor(channels: number, expectedWindows: number) {
    this.channels = channels;
    this.peaks = Array.from({ length: channels }, () => new Uint16Array(expectedWindows + 16));
    this.histograms = Array.from({ length: channels }, () => new Uint32Array(FULL_SCALE + 1));
    this.energy = new Float64Array(channels);
    this.sums = new Float64Array(channels);
    this.conditioner = new Conditioner(ANALYSIS_RATE, channels);

    for (let i = 0; i < channels; i++) for (let j = i + 1; j < channels; j++) this.pairs.push([i, j]);
    this.cross = new Float64Array(this.pairs.length);
    this.current = new Float64Array(channels);
  }

  /** Conditioned samples of the last block pushed, per channel: `frames` of each are valid. */
  conditioned(): { block: readonly Float64Array[]; frames: number } {
    return { block: this.block, frames: this.lastFrames };
  }

  private lastFrames = 0;

  push(chunk: Buffer): void {
    const frameBytes = 2 * this.channels;
    const joined = this.rest.length ? Buffer.concat([this.rest, chunk]) : chunk;
    const usable = joined.length - (joined.length % frameBytes);
    // Read as an Int16Array: in place when the chunk is whole frames at an even offset (as ffmpeg's
    // usually are), else from an aligned copy.
    const inPlace = joined.byteOffset % 2 === 0 && usable === joined.length;
    const aligned = inPlace ? joined : Buffer.alloc(usable);
    if (!inPlace) joined.copy(aligned, 0, 0, usable);
    this.rest = usable === joined.length ? EMPTY : Buffer.from(joined.subarray(usable));
    const samples = new Int16Array(aligned.buffer, aligned.byteOffset, usable / 2);
    const frames = samples.length / this.channels;
    if ((this.block[0]?.length ?? 0) < frames)
      this.block = Array.from({ length: this.channels }, () => new Float64Array(frames));
    this.lastFrames = frames;
    const { channels, energy, sums, cross, pairs, block } = this;
    for (let c = 0; c < channels; c++) {
      const out = block[c]!;
      this.conditioner.processBlock(c, samples, c, channels, out);
      let sum = 0;
      let squares = 0;
      for (let n = 0, i = c; n < frames; n++, i += channels) {
        sum += samples[i]!;
        squares += out[n]! * out[n]!;
      }
      sums[c]! += sum;
      energy[c]! += squares;
    }
    for (let p = 0; p < pairs.length; p++) {
      const a = block[pairs[p]![0]]!;
      const b = block[pairs[p]![1]]!;
      let dot = 0;
      for (let n = 0; n < frames; n++) dot += a[n]! * b[n]!;
      cross[p]! += dot;
    }
    // Window peaks: each channel's run of frames up to the window's end, so windows run across blocks.
    const current = this.current;
    for (let n = 0; n < frames;) {
      const stop = Math.min(frames, n + WINDOW_SAMPLES - this.inWindow);
      for (let c = 0; c < channels; c++) {
        const x = block[c]!;
        let peak = current[c]!;
        for (let k = n; k < stop; k++) {
          const v = x[k]!;
          const abs = v < 0 ? -v : v;
          if (abs > peak) peak = abs;
        }
        current[c] = peak;
      }
      this.inWindow += stop - n;
      n = stop;
      if (this.inWindow === WINDOW_SAMPLES) this.closeWindow();
    }
    this.samples += frames;
  }

  end(): void {
    if (this.inWindow > 0) this.closeWindow();
  }

  private closeWindow(): void {
    for (let c = 0; c < this.channels; c++) {
      const peak = Math.min(Math.round(this.current[c]!), FULL_SCALE);
      if (this.windows >= this.peaks[c]!.length) {
        const grown = new Uint16Array(this.peaks[c]!.length * 2);
        grown.set(this.peaks[c]!);
        this.peaks[c] = grown;
      }
      this.peaks[c]![this.windows] = peak;
      this.histograms[c]![peak]! += 1;
      this.current[c] = 0;
    }
    this.windows += 1;
    this.inWindow = 0;
  }
}

/** Runs of windows at or under `threshold`, at least `minSeconds` long. */
function silencesOf(
  peaks: Uint16Array,
  windows: number,
  threshold: number,
  minSeconds: number,
  durationSeconds: number,
): Silence[] {
  const out: Silence[] = [];
  const minWindows = Math.round(minSeconds / WINDOW_SECONDS);
  let start = -1;
  for (let w = 0; w <= windows; w++) {
    const quiet = w < windows && peaks[w]! <= threshold;
    if (quiet && start < 0) start = w;
    if (!quiet && start >= 0) {
      if (w - start >= minWindows) {
        out.push({
          start: roundThousandths(start * WINDOW_SECONDS),
          end: roundThousandths(Math.min(w * WINDOW_SECONDS, durationSeconds)),
        });
      }
      start = -1;
    }
  }
  return out.filter((s) => s.end > s.start);
}

/** ffmpeg's arguments: the decoded stream at the analysis rate to stdout as 16-bit PCM. */
function analysisArgs(input: MediaInput): string[] {
  return [
    // One filter thread: a worker runs about one ffmpeg per core already.
    ...['-v', 'error', '-filter_threads', '1'],
    ...inputArgs(input),
    ...['-map', `0:${input.streamIndex}`],
    ...['-af', `aresample=${ANALYSIS_RATE},asetnsamples=n=${FRAME_SAMPLES}:p=0`],
    ...['-c:a', 'pcm_s16le', '-f', 's16le', 'pipe:1'],
  ];
}

/** Every chunk of ffmpeg's output into the accumulator, and its conditioned samples into the tracks. */
async function readInto(acc: Accumulator, stdout: AsyncIterable<unknown>, writers: TrackWriters) {
  for await (const chunk of stdout) {
    acc.push(chunk as Buffer);
    const { block, frames } = acc.conditioned();
    // Awaited: ffmpeg waits on its pipe while the tracks are written.
    await writers.write(block, frames);
  }
  acc.end();
}

/** Analyzes every channel of `input` (see the module's comment). */
export async function analyzeChannels(
  input: MediaInput,
  options: ChannelAnalysisOptions,
): Promise<ChannelAnalysis> {
  const { channels } = options;
  const acc = new Accumulator(channels, Math.ceil(options.durationSeconds / WINDOW_SECONDS));
  const writers = await openTrackWriters(options.trackOutputs ?? []);
  const proc = spawnFfmpeg(analysisArgs(input), { signal: options.signal });
  // A failed read or write stops ffmpeg, which would otherwise wait on its full pipe for ever; that
  // failure, not ffmpeg's end by our signal, is the reason reported.
  const reading = readInto(acc, proc.stdout, writers).catch((err: unknown) => {
    proc.kill();
    throw err;
  });
  const [read, done] = await Promise.allSettled([reading, proc.done]);
  // The tracks are written whole only when every sample was read; a failure leaves them unfinished.
  await (read.status === 'fulfilled' && done.status === 'fulfilled' ? writers.end() : writers.close());
  if (read.status === 'rejected') throw read.reason;
  if (done.status === 'rejected') throw done.reason;

  const windows = Math.max(1, acc.windows);
  const decodedSeconds = acc.samples / ANALYSIS_RATE;
  const facts: ChannelFacts[] = [];
  const silences: Silence[][] = [];
  const thresholds: number[] = [];
  for (let c = 0; c < channels; c++) {
    const histogram = acc.histograms[c]!;
    const floor = percentile(histogram, windows, NOISE_FLOOR_PERCENTILE);
    const derivedDb = floor > 0 ? 20 * Math.log10(floor / FULL_SCALE) + NOISE_MARGIN_DB : -Infinity;
    const thresholdDb = round1(Math.min(options.noiseDb, Math.max(MIN_THRESHOLD_DB, derivedDb)));
    const threshold = Math.floor(FULL_SCALE * 10 ** (thresholdDb / 20));
    thresholds.push(threshold);
    let active = 0;
    for (let peak = threshold + 1; peak < histogram.length; peak++) active += histogram[peak]!;
    const activeSeconds = roundThousandths(active * WINDOW_SECONDS);
    facts.push({
      channel: c,
      levelDb: toDb(percentile(histogram, windows, LEVEL_PERCENTILE)),
      noiseFloorDb: toDb(floor),
      silenceThresholdDb: thresholdDb,
      dcOffset: Math.round((acc.sums[c]! / Math.max(1, acc.samples) / FULL_SCALE) * 10_000) / 10_000,
      activeSeconds,
      status: activeSeconds < SILENT_CHANNEL_MAX_ACTIVE_SECONDS ? 'silent' : 'speech',
    });
    silences.push(
      silencesOf(acc.peaks[c]!, acc.windows, threshold, options.minSilenceSeconds, decodedSeconds),
    );
  }
  // Duplicates: a channel joins the first earlier channel (itself no duplicate) it correlates with.
  acc.pairs.forEach(([i, j], p) => {
    const a = facts[i]!;
    const b = facts[j]!;
    if (a.status !== 'speech' || b.status !== 'speech') return;
    const correlation = acc.cross[p]! / Math.sqrt(acc.energy[i]! * acc.energy[j]!);
    if (Math.abs(correlation) < DUPLICATE_MIN_CORRELATION) return;
    facts[j] = { ...b, status: 'duplicate', duplicateOf: i, correlation: roundThousandths(correlation) };
  });
  return { channels: facts, silences, decodedSeconds };
}
