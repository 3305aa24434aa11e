/**
 * What a voice sounds like, measured on a few frames of each utterance: level, the spectral envelope as
 * mel cepstra (the vocal tract and the telephone path's band and tilt), the pitch and how clearly the
 * frame is voiced (autocorrelation peak), and the energy outside the telephone band's core (band edges, coding
 * noise). Pure and deterministic; the caller's reader gives the samples.
 *
 * Cost is bounded: an utterance gets a budget of frames (FRAMES_PER_SECOND of it, MIN_FRAMES to
 * MAX_FRAMES) of 32 ms on an even grid; the quiet ones are dropped by their level and the rest analysed
 * with one 256-point real FFT (a 128-point complex one and a split step): the mel cepstra come from its
 * power spectrum through sparse triangles and a DCT matrix, and the pitch's autocorrelation is the inverse
 * transform of the same power spectrum's low bins. Every table and buffer is built once per sample rate.
 *
 * Each frame is read on its own: the frames cover about a tenth of an utterance, and a reader may decode
 * on every read (the speakers stage's decodes mu-law), so one read of the whole utterance would decode
 * ten times the samples. A reader that can decode straight into the caller's buffer (`readInto`) does
 * so, with no array of its own per frame.
 */

import { decodeMulawInto, mulawSamples } from '../../schemas/g711.ts';
import { fastLog } from './fast-log.ts';
import {
  makeRealFft,
  powerSpectrum,
  realPart,
  windowedMulawPowerSpectrum,
  windowedPowerSpectrum,
  type RealFft,
} from './real-fft.ts';

export interface AudioReader {
  sampleRate: number;
  /** samples in [-1,1] from start to end seconds (clamped to the audio) */
  read(startSeconds: number, endSeconds: number): Float32Array;
  /**
   * The same samples written into `out` from index `at`, at most `limit` of them; returns how many were
   * written. Optional: without it each frame is read into an array of its own and copied.
   */
  readInto?(startSeconds: number, endSeconds: number, out: Float32Array, at: number, limit: number): number;
  /**
   * The G.711 mu-law codes whose samples readInto would give for the same arguments, when the reader
   * holds them as one stretch; else null. Sample n is at n / sampleRate seconds: a read from t starts
   * at sample Math.round(t · sampleRate). Optional: with it the voiced frames decode each frame as they
   * measure its level rather than the whole utterance first, and a long call's frames apart (step > 1)
   * are cut from one view of their span rather than read one by one.
   */
  mulawCodes?(startSeconds: number, endSeconds: number, limit: number): Uint8Array | null;
}

/** seconds */
export interface UtteranceSpan {
  start: number;
  end: number;
}

/** Layout of one frame's feature vector. */
export const LEVEL = 0;
/** Mel cepstra c1..c12 occupy dims MFCC..MFCC+11. */
export const MFCC = 1;
export const CEPSTRA = 12;
/** log2(F0 / 100 Hz); NaN when the frame is not clearly voiced. */
export const PITCH = MFCC + CEPSTRA;
/** Best normalized autocorrelation: how periodic the frame is (breathy, creaky or coded voices differ). */
export const PEAK = PITCH + 1;
/** Energy below and above the band's core, dB relative to the core. */
export const LOW_EDGE = PEAK + 1;
export const HIGH_EDGE = LOW_EDGE + 1;
export const FRAME_DIMS = HIGH_EDGE + 1;

/** Frame length: 32 ms holds two or more periods of any adult voice. */
const FRAME_SECONDS = 0.032;
/** Candidate frames are at least this far apart. */
const MIN_HOP_SECONDS = 0.04;
/** Frames analysed in full per utterance: per second of it, at least and at most. */
const FRAMES_PER_SECOND = 3;
const MIN_FRAMES = 4;
export const MAX_FRAMES = 20;
/** A frame this far below the utterance's loudest one is a pause inside it, not speech. */
const RELATIVE_FLOOR_DB = 25;
/** Below this a frame is line noise whatever the utterance's level. */
const ABSOLUTE_FLOOR_DBFS = -60;
const MEL_BANDS = 24;
const MEL_LOW_HZ = 150;
const MEL_HIGH_HZ = 3700;
const CORE_LOW_HZ = 400;
const CORE_HIGH_HZ = 3000;
const LOW_EDGE_HZ = 300;
const HIGH_EDGE_HZ = 3300;
const PITCH_MIN_HZ = 70;
/**
 * The pitch is searched at this rate, from the spectrum below its Nyquist: a voice's harmonics below 1 kHz
 * carry its period, and the inverse transform is then an eighth of the frame's. A 256-point frame's
 * autocorrelation so computed is circular: a lag τ also holds lag 256 − τ, weighted by the window's
 * autocorrelation there, under 3 % down to 133 Hz and 8 % at 100 Hz.
 */
const PITCH_RATE_HZ = 2000;
const PITCH_MAX_HZ = 400;
/** Normalized autocorrelation at the period that counts as voiced, and a peak's share of the best that is the period. */
const VOICED_CORRELATION = 0.5;
const PITCH_PEAK_SHARE = 0.85;
const TINY = 1e-10;

/** Frames of one utterance: `count` rows of FRAME_DIMS, and the time of each frame's centre. */
export interface UtteranceFrames {
  count: number;
  features: Float64Array;
  times: Float64Array;
}

/** Precomputed tables for one sample rate. */
export interface Analyzer {
  sampleRate: number;
  frameLength: number;
  fftSize: number;
  window: Float64Array;
  /**
   * Mel triangles by the segments between their edges: segment s (edges s to s + 1) holds the bins from
   * melSegmentEnd[s − 1] (melStart for s = 0) up to melSegmentEnd[s], each with its weight on the rising
   * side of band s (melRise, by bin); band s − 1 falls over the same bins with 1 minus that weight. A
   * band's energy is then its rising segment's weighted sum plus its falling segment's plain sum less
   * that segment's weighted one: one product a bin, not one a bin and band.
   */
  melStart: number;
  melSegmentEnd: Int32Array;
  melRise: Float64Array;
  /** DCT-II rows c1..c12 over the log mel energies, row-major. */
  dct: Float64Array;
  fft: RealFft;
  bins: { coreLo: number; coreHi: number; lowEdge: number; highEdge: number; top: number };
  /**
   * The pitch is searched at the rate divided by `decimation`: the autocorrelation at those lags is the
   * inverse transform (`autocorrelationFft`) of the power spectrum's bins below that rate's Nyquist. The
   * window's own autocorrelation, so computed and normalized, divides it out (kept as its inverse).
   */
  decimation: number;
  lags: { lo: number; hi: number };
  autocorrelationFft: RealFft;
  windowCorrelationInverse: Float64Array;
  /** Scratch buffers, reused frame to frame. */
  scratch: {
    frame: Float64Array;
    /** The low bins of the power spectrum laid out around the circle, and their inverse transform. */
    lowPower: Float64Array;
    autocorrelation: Float64Array;
    correlation: Float64Array;
    power: Float64Array;
    mel: Float64Array;
    /** Per mel segment: the power's sum, and its sum weighted by melRise. */
    segmentSum: Float64Array;
    segmentRise: Float64Array;
    /** One frame's pitch and peak (laid out as FRAME_DIMS). */
    pitchOut: Float64Array;
    /**
     * One utterance's frames, read before its quiet ones are known, their levels and lengths (or, for
     * the voiced frames, where each frame begins in its span's codes: frameCodes).
     */
    pool: Float32Array;
    levels: Float64Array;
    means: Float64Array;
    lengths: Int32Array;
  };
}

const mel = (hz: number) => 2595 * Math.log10(1 + hz / 700);
const hzOfMel = (m: number) => 700 * (10 ** (m / 2595) - 1);

const analyzers = new Map<number, Analyzer>();

/** The tables for `sampleRate` (built once per rate). */
export function analyzerFor(sampleRate: number): Analyzer {
  const cached = analyzers.get(sampleRate);
  if (cached) return cached;
  const frameLength = Math.max(16, Math.round(FRAME_SECONDS * sampleRate));
  let fftSize = 16;
  while (fftSize < frameLength) fftSize *= 2;
  const window = new Float64Array(frameLength);
  for (let i = 0; i < frameLength; i++)
    window[i] = 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (frameLength - 1));
  const binHz = sampleRate / fftSize;
  const nyquistBin = fftSize / 2;
  const bin = (hz: number) => Math.max(1, Math.min(nyquistBin, Math.round(hz / binHz)));
  const high = Math.min(MEL_HIGH_HZ, 0.47 * sampleRate);
  const edges: number[] = [];
  for (let i = 0; i < MEL_BANDS + 2; i++) {
    edges.push(hzOfMel(mel(MEL_LOW_HZ) + ((mel(high) - mel(MEL_LOW_HZ)) * i) / (MEL_BANDS + 1)));
  }
  // Bin k lies in segment s when edges[s] < k·binHz ≤ edges[s + 1].
  const melRise = new Float64Array(nyquistBin + 1);
  const melSegmentEnd = new Int32Array(MEL_BANDS + 1);
  const melStart = Math.max(1, Math.floor(edges[0]! / binHz) + 1);
  let k = melStart;
  for (let segment = 0; segment <= MEL_BANDS; segment++) {
    const [lo, hi] = [edges[segment]!, edges[segment + 1]!];
    for (; k <= nyquistBin && k * binHz <= hi; k++) melRise[k] = (k * binHz - lo) / (hi - lo);
    melSegmentEnd[segment] = k;
  }
  const dct = new Float64Array(CEPSTRA * MEL_BANDS);
  for (let c = 0; c < CEPSTRA; c++) {
    for (let m = 0; m < MEL_BANDS; m++) {
      dct[c * MEL_BANDS + m] =
        Math.cos((Math.PI * (c + 1) * (m + 0.5)) / MEL_BANDS) * Math.sqrt(2 / MEL_BANDS);
    }
  }
  const decimation = Math.max(1, Math.round(sampleRate / PITCH_RATE_HZ));
  const analyzer: Analyzer = {
    sampleRate,
    frameLength,
    fftSize,
    window,
    melStart,
    melSegmentEnd,
    melRise,
    dct,
    fft: makeRealFft(fftSize),
    autocorrelationFft: makeRealFft(fftSize / decimation),
    windowCorrelationInverse: new Float64Array(fftSize / decimation / 2 + 1),
    bins: {
      coreLo: bin(CORE_LOW_HZ),
      coreHi: bin(Math.min(CORE_HIGH_HZ, 0.45 * sampleRate)),
      lowEdge: bin(LOW_EDGE_HZ),
      highEdge: bin(Math.min(HIGH_EDGE_HZ, 0.45 * sampleRate)),
      top: bin(Math.min(3900, 0.49 * sampleRate)),
    },
    decimation,
    lags: {
      lo: Math.max(2, Math.floor(sampleRate / decimation / PITCH_MAX_HZ)),
      hi: Math.min(fftSize / decimation / 2 - 2, Math.ceil(sampleRate / decimation / PITCH_MIN_HZ)),
    },
    scratch: {
      frame: new Float64Array(fftSize),
      lowPower: new Float64Array(fftSize / decimation),
      autocorrelation: new Float64Array(fftSize / decimation / 2 + 1),
      correlation: new Float64Array(fftSize / decimation / 2 + 2),
      power: new Float64Array(fftSize / 2 + 1),
      mel: new Float64Array(MEL_BANDS),
      segmentSum: new Float64Array(MEL_BANDS + 1),
      segmentRise: new Float64Array(MEL_BANDS + 1),
      pitchOut: new Float64Array(FRAME_DIMS),
      pool: new Float32Array(MAX_FRAMES * frameLength),
      levels: new Float64Array(MAX_FRAMES),
      means: new Float64Array(MAX_FRAMES),
      lengths: new Int32Array(MAX_FRAMES),
    },
  };
  // The window's autocorrelation, through the same steps as a frame's.
  analyzer.scratch.frame.fill(0).set(window);
  powerSpectrum(analyzer.fft, analyzer.scratch.frame, analyzer.scratch.power);
  lowAutocorrelation(analyzer);
  const { autocorrelation } = analyzer.scratch;
  for (let m = 0; m < autocorrelation.length; m++)
    analyzer.windowCorrelationInverse[m] = autocorrelation[0]! / autocorrelation[m]!;
  analyzers.set(sampleRate, analyzer);
  return analyzer;
}

const dbOf = (meanSquareValue: number) => 10 * Math.log10(meanSquareValue + TINY);

/**
 * Full features of one frame, `length` samples of `pool` from `base` whose mean and level (dB) the caller
 * has measured, into `out` at `offset`. One pass removes the mean and windows the frame.
 */
function analyseFrame(
  a: Analyzer,
  pool: Float32Array,
  base: number,
  length: number,
  mean: number,
  level: number,
  out: Float64Array,
  offset: number,
): void {
  const { frame, power } = a.scratch;
  const { window } = a;
  const n = Math.min(length, a.frameLength);
  for (let i = 0; i < n; i++) frame[i] = (pool[base + i]! - mean) * window[i]!;
  // A frame cut short by the end of the audio: the rest is silence.
  frame.fill(0, n);
  out[offset + LEVEL] = level;

  powerSpectrum(a.fft, frame, power);

  cepstraOf(a, out, offset + MFCC);

  const { coreLo, coreHi, lowEdge, highEdge, top } = a.bins;
  let core = TINY;
  for (let k = coreLo; k <= coreHi; k++) core += power[k]!;
  let low = TINY;
  for (let k = 1; k < lowEdge; k++) low += power[k]!;
  let high = TINY;
  for (let k = highEdge; k <= top; k++) high += power[k]!;
  out[offset + LOW_EDGE] = 10 * Math.log10(low / core);
  out[offset + HIGH_EDGE] = 10 * Math.log10(high / core);

  pitchOf(a, out, offset);
}

/** The autocorrelation of the frame whose power spectrum is in scratch.power, at the pitch search's rate. */
function lowAutocorrelation(a: Analyzer): void {
  const { power, lowPower, autocorrelation } = a.scratch;
  const length = lowPower.length;
  const top = length / 2;
  lowPower[0] = power[0]!;
  lowPower[top] = power[top]!;
  for (let k = 1; k < top; k++) {
    lowPower[k] = power[k]!;
    lowPower[length - k] = power[k]!;
  }
  realPart(a.autocorrelationFft, lowPower, autocorrelation);
}

/**
 * Pitch by the normalized autocorrelation at about PITCH_RATE_HZ (the inverse transform of the power
 * spectrum below it, divided by the window's): the first lag whose correlation comes within
 * PITCH_PEAK_SHARE of the best (so a period, not a multiple of it), refined by a parabola. PEAK gets the
 * best correlation.
 */
function pitchOf(a: Analyzer, out: Float64Array, offset: number): void {
  lowAutocorrelation(a);
  const { autocorrelation, correlation } = a.scratch;
  const { windowCorrelationInverse } = a;
  const factor = a.decimation;
  const { lo, hi } = a.lags;
  const energy = autocorrelation[0]!;
  const inverseEnergy = energy > 0 ? 1 / energy : 0;
  let best = -1;
  let bestValue = 0;
  for (let lag = lo; lag <= hi; lag++) {
    const r = autocorrelation[lag]! * inverseEnergy * windowCorrelationInverse[lag]!;
    correlation[lag] = r;
    if (r > bestValue) {
      bestValue = r;
      best = lag;
    }
  }
  out[offset + PEAK] = bestValue;
  if (best < 0 || bestValue < VOICED_CORRELATION) {
    out[offset + PITCH] = Number.NaN;
    return;
  }
  // The shortest lag at a local maximum close to the best: the period rather than two of them.
  for (let lag = lo + 1; lag < best; lag++) {
    const r = correlation[lag]!;
    if (r >= PITCH_PEAK_SHARE * bestValue && r >= correlation[lag - 1]! && r >= correlation[lag + 1]!) {
      best = lag;
      break;
    }
  }
  let shift = 0;
  if (best > lo && best < hi) {
    const y0 = correlation[best - 1]!;
    const y1 = correlation[best]!;
    const y2 = correlation[best + 1]!;
    const denominator = y0 - 2 * y1 + y2;
    if (denominator < 0) shift = (0.5 * (y0 - y2)) / denominator;
  }
  out[offset + PITCH] = Math.log2(a.sampleRate / factor / (best + shift) / 100);
}

/**
 * One frame's samples into `pool` from `base` (at most `limit`); how many were read, 0 when the reader
 * fails. Samples that are not finite make the frame's level NaN, and the frame is dropped as quiet.
 */
function readFrameInto(
  audio: AudioReader,
  t: number,
  seconds: number,
  pool: Float32Array,
  base: number,
  limit: number,
): number {
  try {
    if (audio.readInto)
      return Math.max(0, Math.min(limit, audio.readInto(t, t + seconds, pool, base, limit)));
    const samples = audio.read(t, t + seconds);
    if (!(samples instanceof Float32Array)) return 0;
    // Copied: a reader may reuse its buffer.
    const length = Math.min(samples.length, limit);
    pool.set(length < samples.length ? samples.subarray(0, length) : samples, base);
    return length;
  } catch {
    return 0;
  }
}

/**
 * Samples from `t0` to `t1` into `pool` from 0 (at most `limit`); how many were read, 0 when the reader
 * fails. Samples that are not finite make their frames' levels NaN, and those frames are dropped as quiet.
 */
function readSpanInto(audio: AudioReader, t0: number, t1: number, pool: Float32Array, limit: number): number {
  try {
    if (audio.readInto) return Math.max(0, Math.min(limit, audio.readInto(t0, t1, pool, 0, limit)));
    const samples = audio.read(t0, t1);
    if (!(samples instanceof Float32Array)) return 0;
    // Copied: a reader may reuse its buffer.
    const length = Math.min(samples.length, limit);
    pool.set(length < samples.length ? samples.subarray(0, length) : samples, 0);
    return length;
  } catch {
    return 0;
  }
}

/**
 * The analysed frames of one utterance: its budget of frames on an even grid over the span, each read
 * once; the quiet ones (pauses inside the utterance) dropped, the rest analysed.
 */
export function utteranceFrames(audio: AudioReader, span: UtteranceSpan, a: Analyzer): UtteranceFrames {
  const frameSeconds = a.frameLength / a.sampleRate;
  const empty: UtteranceFrames = { count: 0, features: new Float64Array(0), times: new Float64Array(0) };
  const start = Number.isFinite(span.start) ? Math.max(0, span.start) : 0;
  const end = Number.isFinite(span.end) ? span.end : start;
  const usable = end - start - frameSeconds;
  if (usable < 0) return empty;
  const budget = Math.min(MAX_FRAMES, Math.max(MIN_FRAMES, Math.ceil((end - start) * FRAMES_PER_SECOND)));
  const positions = Math.min(budget, Math.floor(usable / MIN_HOP_SECONDS) + 1);
  const hop = positions > 1 ? usable / (positions - 1) : 0;
  const offset = positions > 1 ? 0 : usable / 2;
  const { pool, levels, means, lengths } = scratchFor(a, positions);
  let loudest = -Infinity;
  for (let i = 0; i < positions; i++) {
    levels[i] = -Infinity;
    const base = i * a.frameLength;
    const length = readFrameInto(audio, start + offset + i * hop, frameSeconds, pool, base, a.frameLength);
    if (length < a.frameLength / 2) continue;
    lengths[i] = length;
    samplesLevel(pool, base, length, means, levels, i);
    if (levels[i]! > loudest) loudest = levels[i]!;
  }
  const floor = Math.max(ABSOLUTE_FLOOR_DBFS, loudest - RELATIVE_FLOOR_DB);
  let count = 0;
  for (let i = 0; i < positions; i++) if (levels[i]! >= floor) count++;
  if (count === 0) return empty;
  const features = new Float64Array(count * FRAME_DIMS);
  const times = new Float64Array(count);
  for (let i = 0, row = 0; i < positions; i++) {
    if (!(levels[i]! >= floor)) continue;
    analyseFrame(a, pool, i * a.frameLength, lengths[i]!, means[i]!, levels[i]!, features, row * FRAME_DIMS);
    times[row] = start + offset + i * hop + frameSeconds / 2;
    row++;
  }
  return { count, features, times };
}

/** The analyzer's buffers for one utterance's frames, grown to hold `positions` of them. */
function scratchFor(
  a: Analyzer,
  positions: number,
): { pool: Float32Array; levels: Float64Array; means: Float64Array; lengths: Int32Array } {
  const held = a.scratch.levels.length;
  if (held < positions) {
    const size = Math.max(positions, MAX_FRAMES);
    a.scratch.pool = new Float32Array(size * a.frameLength);
    a.scratch.levels = new Float64Array(size);
    a.scratch.means = new Float64Array(size);
    a.scratch.lengths = new Int32Array(size);
  }
  return a.scratch;
}

/**
 * Voiced frames: the voice itself, frame by frame. The utterance is read once and cut into back-to-back
 * frames, and only those that hold a voice are kept: loud enough, periodic (a pitch), and not a
 * tone (DTMF digits, beeps, dial tones: nearly all their energy in one or two narrow peaks). Each kept
 * frame gives its pitch and mel cepstra; the cepstra's call-wide mean is the line's and the caller takes
 * it out.
 */
/** Layout of one voiced frame: log2(F0 / 100 Hz), then cepstra c1..c12. */
export const V_PITCH = 0;
const V_MFCC = 1;
export const VOICED_DIMS = V_MFCC + CEPSTRA;
/**
 * Voiced frames are back to back: every sample of a voiced stretch is analysed once. Every other frame
 * (64 ms) halves the cost but lets one voice split by its words gain as much as two close voices on the
 * development split (bench/README.md).
 */
export const VOICED_HOP_SECONDS = FRAME_SECONDS;
/** A frame holding at least this share of its band's energy in two narrow peaks at DTMF frequencies is a digit. */
const TONE_SHARE = 0.9;
/** A frame holding this share of its band's energy in one narrow peak is a sine. */
const SINE_SHARE = 0.99;
/** How far a DTMF tone may be off its frequency (receivers accept 1.5 %), beyond the bin's own half. */
const DTMF_TOLERANCE = 0.015;
/** DTMF's two groups of frequencies, Hz. */
const DTMF_LOW_HZ = [697, 770, 852, 941] as const;
const DTMF_HIGH_HZ = [1209, 1336, 1477, 1633] as const;
/** Bins each side of a peak that belong to it (a Hamming window's main lobe is two bins each side). */
const TONE_PEAK_BINS = 2;
/** Relative to the utterance's loudest frame, a voiced frame is at most this much quieter. */
const VOICED_RELATIVE_FLOOR_DB = 30;

export interface VoicedFrames {
  count: number;
  /** count rows of VOICED_DIMS */
  features: Float64Array;
  /** each frame's centre, seconds */
  times: Float64Array;
  /** frames loud enough to be heard, and of them the periodic tones */
  audible: number;
  tones: number;
}

/**
 * Whether the power spectrum in scratch.power is a tone: a DTMF digit (its two strongest peaks, one in
 * each DTMF group, hold most of the band) or a single sine (a beep, a dial tone). A voice's harmonics can
 * hold as much in two peaks (a high voice's low vowel), but not at a DTMF pair's frequencies.
 */
function isTone(a: Analyzer): boolean {
  const { power } = a.scratch;
  const { top } = a.bins;
  const lo = Math.max(1, a.bins.lowEdge);
  let total = 0;
  let first = lo;
  let strongest = power[lo]!;
  for (let k = lo; k <= top; k++) {
    const p = power[k]!;
    total += p;
    if (p > strongest) {
      strongest = p;
      first = k;
    }
  }
  const one = lobeEnergy(power, first, lo, top);
  if (one >= SINE_SHARE * total) return true;
  // A DTMF pair's stronger peak is one of its two tones: a voice's strongest harmonic seldom is, and then
  // the second peak need not be looked for.
  const binHz = a.sampleRate / a.fftSize;
  if (!nearAny(first * binHz, DTMF_LOW_HZ, binHz) && !nearAny(first * binHz, DTMF_HIGH_HZ, binHz))
    return false;
  // The second peak, outside the first one's lobes: below them, then above.
  let second = -1;
  let secondPower = -Infinity;
  const exclude = 2 * TONE_PEAK_BINS;
  for (let k = lo, below = Math.min(top + 1, first - exclude); k < below; k++)
    if (power[k]! > secondPower) {
      secondPower = power[k]!;
      second = k;
    }
  for (let k = Math.max(lo, first + exclude + 1); k <= top; k++)
    if (power[k]! > secondPower) {
      secondPower = power[k]!;
      second = k;
    }
  if (second < 0 || one + lobeEnergy(power, second, lo, top) < TONE_SHARE * total) return false;
  const low = first < second ? first : second;
  const high = first < second ? second : first;
  return nearAny(low * binHz, DTMF_LOW_HZ, binHz) && nearAny(high * binHz, DTMF_HIGH_HZ, binHz);
}

/** The energy of the peak at bin `p`: TONE_PEAK_BINS each side of it, within lo..top. */
function lobeEnergy(power: Float64Array, p: number, lo: number, top: number): number {
  let e = 0;
  for (let k = Math.max(lo, p - TONE_PEAK_BINS), last = Math.min(top, p + TONE_PEAK_BINS); k <= last; k++)
    e += power[k]!;
  return e;
}

/** Whether `hz` is within a DTMF receiver's tolerance (and half a bin) of one of `list`. */
function nearAny(hz: number, list: readonly number[], binHz: number): boolean {
  for (const f of list) if (Math.abs(hz - f) <= DTMF_TOLERANCE * f + binHz / 2) return true;
  return false;
}

/**
 * `positions` frames from `start`, `every` frames apart, into `pool`; how many were read whole. Back-to-back
 * frames: the whole span is read once (one decode of each sample, no view or call per frame), then cut into
 * frames. Frames apart: each is read on its own, the samples between them never.
 */
function readFrames(
  audio: AudioReader,
  a: Analyzer,
  start: number,
  positions: number,
  every: number,
  pool: Float32Array,
): number {
  const length = a.frameLength;
  const frameSeconds = length / a.sampleRate;
  if (every === 1) {
    const got = readSpanInto(audio, start, start + positions * frameSeconds, pool, positions * length);
    return Math.min(positions, Math.floor(got / length));
  }
  const hop = every * VOICED_HOP_SECONDS;
  let whole = 0;
  while (
    whole < positions &&
    readFrameInto(audio, start + whole * hop, frameSeconds, pool, whole * length, length) === length
  )
    whole++;
  return whole;
}

/**
 * The codes of `positions` frames from `start`, `every` frames apart, when the reader holds their whole
 * span as one stretch (AudioReader.mulawCodes); each frame's first code into `starts`. Back-to-back frames:
 * as many whole frames as the codes hold. Frames apart: all of them or null (then read one by one), so
 * that a frame is analysed here exactly when readFrames would read it whole; the span's codes are a view,
 * and only the frames' own samples are decoded.
 */
function frameCodes(
  audio: AudioReader,
  start: number,
  positions: number,
  every: number,
  length: number,
  frameSeconds: number,
  starts: Int32Array,
): Uint8Array | null {
  if (!audio.mulawCodes) return null;
  const rate = audio.sampleRate;
  try {
    if (every === 1) {
      for (let i = 0; i < positions; i++) starts[i] = i * length;
      // The span readFrames would read.
      return audio.mulawCodes(start, start + positions * frameSeconds, positions * length);
    }
    // Where readFrames would start each frame's read (AudioReader.mulawCodes: sample n at n / rate).
    const hop = every * VOICED_HOP_SECONDS;
    const first = Math.round(start * rate);
    for (let i = 0; i < positions; i++) starts[i] = Math.round((start + i * hop) * rate) - first;
    const need = starts[positions - 1]! + length;
    const codes = audio.mulawCodes(start, start + (positions - 1) * hop + frameSeconds, need);
    return codes && codes.length >= need ? codes : null;
  } catch {
    return null;
  }
}

/**
 * Frame `i`'s mean and level (dB) from `length` samples of `pool` from `base`, into `means` and `levels`;
 * returns the level. Two sums each way, so that the additions do not wait on each other; an odd length's
 * last sample after.
 */
function samplesLevel(
  pool: Float32Array,
  base: number,
  length: number,
  means: Float64Array,
  levels: Float64Array,
  i: number,
): number {
  let sum = 0;
  let squares = 0;
  let sumOdd = 0;
  let squaresOdd = 0;
  for (let j = base, last = base + length - 1; j < last; j += 2) {
    const v = pool[j]!;
    const u = pool[j + 1]!;
    sum += v;
    squares += v * v;
    sumOdd += u;
    squaresOdd += u * u;
  }
  if (length % 2 === 1) {
    const v = pool[base + length - 1]!;
    sum += v;
    squares += v * v;
  }
  return storeLevel(sum + sumOdd, squares + squaresOdd, length, means, levels, i);
}

/** Frame `i`'s mean and level from its samples' sum and sum of squares, into `means` and `levels`. */
function storeLevel(
  sum: number,
  squares: number,
  length: number,
  means: Float64Array,
  levels: Float64Array,
  i: number,
): number {
  const mean = sum / length;
  const ms = squares / length - mean * mean;
  means[i] = mean;
  levels[i] = dbOf(Number.isFinite(ms) && ms > 0 ? ms : 0);
  return levels[i]!;
}

/**
 * Each mu-law code's sample (mulawSamples) and its square, as doubles: the same values the Float32 table
 * gives once widened (a square of a Float32 is exact in a double), read with no widening or product per
 * sample.
 */
const CODE_SAMPLES = Float64Array.from(mulawSamples);
const CODE_SQUARES = CODE_SAMPLES.map((v) => v * v);

/**
 * samplesLevel of the `length` mu-law codes from `from`, each read through mulawSamples: the same sums in
 * the same order as decoding them first, with nothing written (the windowed load reads the codes again).
 */
function codesLevel(
  codes: Uint8Array,
  from: number,
  length: number,
  means: Float64Array,
  levels: Float64Array,
  i: number,
): number {
  const samples = CODE_SAMPLES;
  const squared = CODE_SQUARES;
  let sum = 0;
  let squares = 0;
  let sumOdd = 0;
  let squaresOdd = 0;
  for (let j = from, last = from + length - 1; j < last; j += 2) {
    const c = codes[j]!;
    const d = codes[j + 1]!;
    sum += samples[c]!;
    squares += squared[c]!;
    sumOdd += samples[d]!;
    squaresOdd += squared[d]!;
  }
  if (length % 2 === 1) {
    const c = codes[from + length - 1]!;
    sum += samples[c]!;
    squares += squared[c]!;
  }
  return storeLevel(sum + sumOdd, squares + squaresOdd, length, means, levels, i);
}

/**
 * The voiced frames of one utterance (see VOICED_DIMS): every frame, or with `step` > 1 every step-th of
 * them (a long call, which has voice to spare: see voice-separation.ts), each then read on its own.
 */
export function voicedFrames(audio: AudioReader, span: UtteranceSpan, a: Analyzer, step = 1): VoicedFrames {
  const empty: VoicedFrames = {
    count: 0,
    features: new Float64Array(0),
    times: new Float64Array(0),
    audible: 0,
    tones: 0,
  };
  const start = Number.isFinite(span.start) ? Math.max(0, span.start) : 0;
  const end = Number.isFinite(span.end) ? span.end : start;
  if (!(end - start >= a.frameLength / a.sampleRate)) return empty;
  const length = a.frameLength;
  const frameSeconds = length / a.sampleRate;
  const every = Math.max(1, Math.floor(step));
  const hop = every * VOICED_HOP_SECONDS;
  const positions = Math.floor((end - start - frameSeconds) / hop) + 1;
  if (positions <= 0) return empty;
  const { pool, levels, means, lengths: starts } = scratchFor(a, positions);
  const codes = frameCodes(audio, start, positions, every, length, frameSeconds, starts);
  const whole = !codes
    ? readFrames(audio, a, start, positions, every, pool)
    : every === 1
      ? Math.min(positions, Math.floor(codes.length / length))
      : positions;
  const direct = codes !== null && length === a.fftSize;
  let loudest = -Infinity;
  for (let i = 0; i < positions; i++) {
    levels[i] = -Infinity;
    if (i >= whole) continue;
    // A full frame's codes are read where they lie, by the level here and the windowed load below,
    // never decoded to the pool; a shorter frame's are decoded as its level is measured (bench/README.md).
    let level: number;
    if (direct) level = codesLevel(codes, starts[i]!, length, means, levels, i);
    else {
      if (codes) decodeMulawInto(codes, starts[i]!, starts[i]! + length, pool, i * length);
      level = samplesLevel(pool, i * length, length, means, levels, i);
    }
    if (level > loudest) loudest = level;
  }
  const floor = Math.max(ABSOLUTE_FLOOR_DBFS, loudest - VOICED_RELATIVE_FLOOR_DB);
  // Rows for the audible frames only: the voiced ones are among them.
  let heard = 0;
  for (let i = 0; i < positions; i++) if (levels[i]! >= floor) heard++;
  const rows = new Float64Array(heard * VOICED_DIMS);
  const times = new Float64Array(heard);
  const { frame, power, pitchOut } = a.scratch;
  const { window } = a;
  let count = 0;
  let audible = 0;
  let tones = 0;
  for (let i = 0; i < positions; i++) {
    if (!(levels[i]! >= floor)) continue;
    audible++;
    const base = i * length;
    const mean = means[i]!;
    if (direct) {
      windowedMulawPowerSpectrum(a.fft, codes, starts[i]!, CODE_SAMPLES, mean, window, power);
    } else if (length === a.fftSize) {
      windowedPowerSpectrum(a.fft, pool, base, mean, window, power);
    } else {
      for (let j = 0; j < length; j++) frame[j] = (pool[base + j]! - mean) * window[j]!;
      frame.fill(0, length);
      powerSpectrum(a.fft, frame, power);
    }
    // The pitch first: most audible frames that are not voiced (consonants, breath) stop there, before the
    // tone test; a tone with no period is left out as unvoiced all the same.
    pitchOf(a, pitchOut, 0);
    const pitch = pitchOut[PITCH]!;
    if (Number.isNaN(pitch)) continue;
    if (isTone(a)) {
      tones++;
      continue;
    }
    cepstraOf(a, rows, count * VOICED_DIMS + V_MFCC);
    rows[count * VOICED_DIMS + V_PITCH] = pitch;
    times[count] = start + i * hop + frameSeconds / 2;
    count++;
  }
  return {
    count,
    features: rows.subarray(0, count * VOICED_DIMS),
    times: times.subarray(0, count),
    audible,
    tones,
  };
}

/** Mel cepstra c1..c12 of the power spectrum in scratch.power, into `out` from `at`. */
function cepstraOf(a: Analyzer, out: Float64Array, at: number): void {
  const { power, mel: melEnergy, segmentSum, segmentRise } = a.scratch;
  const { melSegmentEnd, melRise, dct } = a;
  for (let segment = 0, k = a.melStart; segment <= MEL_BANDS; segment++) {
    let sum = 0;
    let rise = 0;
    for (const end = melSegmentEnd[segment]!; k < end; k++) {
      const p = power[k]!;
      sum += p;
      rise += melRise[k]! * p;
    }
    segmentSum[segment] = sum;
    segmentRise[segment] = rise;
  }
  for (let m = 0; m < MEL_BANDS; m++)
    melEnergy[m] = fastLog(TINY + segmentRise[m]! + (segmentSum[m + 1]! - segmentRise[m + 1]!));
  // DCT-II row k (c_k) is symmetric about the middle band for even k and antisymmetric for odd k: each
  // takes half the bands, of the bands' pairwise sums or differences. Two cepstra at a time (an odd k and
  // the even one after it), so that their sums do not wait on each other.
  const pairs = MEL_BANDS / 2;
  for (let c = 0; c < CEPSTRA; c += 2) {
    let odd = 0;
    let even = 0;
    const r0 = c * MEL_BANDS;
    for (let m = 0; m < pairs; m++) {
      const low = melEnergy[m]!;
      const high = melEnergy[MEL_BANDS - 1 - m]!;
      odd += dct[r0 + m]! * (low - high);
      even += dct[r0 + MEL_BANDS + m]! * (low + high);
    }
    out[at + c] = odd;
    out[at + c + 1] = even;
  }
}
