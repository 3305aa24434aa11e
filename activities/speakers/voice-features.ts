/**
 * What a voice sounds like, measured on a few frames of each utterance: level, the spectral envelope as
 * mel cepstra (the vocal tract and the telephone path's band and tilt), the pitch and how clearly the
 * frame is voiced (autocorrelation peak), and the energy outside the telephone band's core (band edges, coding
 * noise). Pure and deterministic; the caller's reader gives the samples.
 *
 * Cost is bounded: an utterance gets a budget of frames (FRAMES_PER_SECOND of it, MIN_FRAMES to
 * MAX_FRAMES) of 32 ms on an even grid, each read once (a reader may decode on every read); the quiet ones
 * are dropped by their level and the rest analysed (one 256-point FFT for the spectrum and an
 * autocorrelation for the pitch: most of the cost).
 */

export interface AudioReader {
  sampleRate: number;
  /** samples in [-1,1] from start to end seconds (clamped to the audio) */
  read(startSeconds: number, endSeconds: number): Float32Array;
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
export const ABSOLUTE_FLOOR_DBFS = -60;
const MEL_BANDS = 24;
const MEL_LOW_HZ = 150;
const MEL_HIGH_HZ = 3700;
const CORE_LOW_HZ = 400;
const CORE_HIGH_HZ = 3000;
const LOW_EDGE_HZ = 300;
const HIGH_EDGE_HZ = 3300;
const PITCH_MIN_HZ = 70;
/**
 * The pitch is searched on the frame decimated to this rate: a voice's harmonics below 1 kHz carry its
 * period, and the autocorrelation costs a quarter of that at 4 kHz.
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
  melWeights: { first: number; weights: Float64Array }[];
  dct: Float64Array;
  fft: RealFft;
  bins: { coreLo: number; coreHi: number; lowEdge: number; highEdge: number; top: number };
  /** Samples averaged into one for the pitch search, and the lags searched at that rate. */
  decimation: number;
  lags: { lo: number; hi: number };
  /** Scratch buffers, reused frame to frame. */
  scratch: {
    frame: Float64Array;
    plain: Float64Array;
    decimated: Float64Array;
    correlation: Float64Array;
    prefix: Float64Array;
    re: Float64Array;
    im: Float64Array;
    power: Float64Array;
    mel: Float64Array;
  };
}

/** A radix-2 FFT of a real sequence of length n, through a complex FFT of n/2 points. */
interface RealFft {
  n: number;
  half: number;
  bitReverse: Uint32Array;
  cos: Float64Array;
  sin: Float64Array;
  /** Twiddles of the real-split step, e^{-2πik/n}. */
  splitCos: Float64Array;
  splitSin: Float64Array;
  zr: Float64Array;
  zi: Float64Array;
}

function makeRealFft(n: number): RealFft {
  const half = n / 2;
  const bits = Math.log2(half);
  const bitReverse = new Uint32Array(half);
  for (let i = 0; i < half; i++) {
    let r = 0;
    for (let b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
    bitReverse[i] = r;
  }
  const cos = new Float64Array(half / 2);
  const sin = new Float64Array(half / 2);
  for (let i = 0; i < half / 2; i++) {
    cos[i] = Math.cos((2 * Math.PI * i) / half);
    sin[i] = -Math.sin((2 * Math.PI * i) / half);
  }
  const splitCos = new Float64Array(half + 1);
  const splitSin = new Float64Array(half + 1);
  for (let k = 0; k <= half; k++) {
    splitCos[k] = Math.cos((2 * Math.PI * k) / n);
    splitSin[k] = -Math.sin((2 * Math.PI * k) / n);
  }
  return {
    n,
    half,
    bitReverse,
    cos,
    sin,
    splitCos,
    splitSin,
    zr: new Float64Array(half),
    zi: new Float64Array(half),
  };
}

/** Spectrum bins 0..n/2 of the real `x` (length n) into `re`/`im` (length n/2 + 1). */
function realFft(f: RealFft, x: Float64Array, re: Float64Array, im: Float64Array): void {
  const { half, bitReverse, cos, sin, zr, zi } = f;
  for (let i = 0; i < half; i++) {
    const j = bitReverse[i]!;
    zr[j] = x[2 * i]!;
    zi[j] = x[2 * i + 1]!;
  }
  for (let size = 2; size <= half; size *= 2) {
    const step = half / size;
    const h = size / 2;
    for (let k = 0; k < h; k++) {
      const wr = cos[k * step]!;
      const wi = sin[k * step]!;
      for (let a = k; a < half; a += size) {
        const b = a + h;
        const xr = zr[b]!;
        const xi = zi[b]!;
        const br = xr * wr - xi * wi;
        const bi = xr * wi + xi * wr;
        const ar = zr[a]!;
        const ai = zi[a]!;
        zr[b] = ar - br;
        zi[b] = ai - bi;
        zr[a] = ar + br;
        zi[a] = ai + bi;
      }
    }
  }
  // Split the half-length transform into the spectra of the even and odd samples, then combine.
  re[0] = zr[0]! + zi[0]!;
  im[0] = 0;
  re[half] = zr[0]! - zi[0]!;
  im[half] = 0;
  const { splitCos, splitSin } = f;
  for (let k = 1; k < half; k++) {
    const k2 = half - k;
    const r1 = zr[k]!;
    const i1 = zi[k]!;
    const r2 = zr[k2]!;
    const i2 = zi[k2]!;
    const er = (r1 + r2) / 2;
    const ei = (i1 - i2) / 2;
    const or = (i1 + i2) / 2;
    const oi = (r2 - r1) / 2;
    const wr = splitCos[k]!;
    const wi = splitSin[k]!;
    re[k] = er + or * wr - oi * wi;
    im[k] = ei + or * wi + oi * wr;
  }
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
  const melWeights: Analyzer['melWeights'] = [];
  for (let m = 0; m < MEL_BANDS; m++) {
    const [lo, mid, hi] = [edges[m]!, edges[m + 1]!, edges[m + 2]!];
    const first = Math.max(1, Math.floor(lo / binHz));
    const last = Math.min(nyquistBin, Math.ceil(hi / binHz));
    const weights = new Float64Array(last - first + 1);
    for (let k = first; k <= last; k++) {
      const hz = k * binHz;
      weights[k - first] =
        hz <= mid ? Math.max(0, (hz - lo) / (mid - lo)) : Math.max(0, (hi - hz) / (hi - mid));
    }
    melWeights.push({ first, weights });
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
    melWeights,
    dct,
    fft: makeRealFft(fftSize),
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
      hi: Math.min(
        Math.floor(frameLength / decimation) - 8,
        Math.ceil(sampleRate / decimation / PITCH_MIN_HZ),
      ),
    },
    scratch: {
      frame: new Float64Array(fftSize),
      plain: new Float64Array(fftSize),
      decimated: new Float64Array(Math.ceil(frameLength / decimation)),
      correlation: new Float64Array(Math.ceil(frameLength / decimation) + 2),
      prefix: new Float64Array(Math.ceil(frameLength / decimation) + 1),
      re: new Float64Array(fftSize / 2 + 1),
      im: new Float64Array(fftSize / 2 + 1),
      power: new Float64Array(fftSize / 2 + 1),
      mel: new Float64Array(MEL_BANDS),
    },
  };
  analyzers.set(sampleRate, analyzer);
  return analyzer;
}

const dbOf = (meanSquareValue: number) => 10 * Math.log10(meanSquareValue + TINY);

/** Full features of one frame into `out` at `offset`. */
function analyseFrame(a: Analyzer, samples: Float32Array, out: Float64Array, offset: number): void {
  const { frame, plain, re, im, power, mel: melEnergy } = a.scratch;
  const n = Math.min(samples.length, a.frameLength);
  let mean = 0;
  for (let i = 0; i < n; i++) mean += samples[i]!;
  mean = n > 0 ? mean / n : 0;
  let squares = 0;
  for (let i = 0; i < n; i++) {
    const v = samples[i]! - mean;
    squares += v * v;
    plain[i] = v;
    frame[i] = v * a.window[i]!;
  }
  frame.fill(0, n);
  plain.fill(0, n);
  out[offset + LEVEL] = dbOf(n > 0 ? squares / n : 0);

  realFft(a.fft, frame, re, im);
  const half = a.fftSize / 2;
  for (let k = 0; k <= half; k++) power[k] = re[k]! * re[k]! + im[k]! * im[k]! + TINY;

  for (let m = 0; m < melEnergy.length; m++) {
    const { first, weights } = a.melWeights[m]!;
    let e = TINY;
    for (let j = 0; j < weights.length; j++) e += weights[j]! * power[first + j]!;
    melEnergy[m] = Math.log(e);
  }
  for (let c = 0; c < CEPSTRA; c++) {
    let s = 0;
    const row = c * MEL_BANDS;
    for (let m = 0; m < MEL_BANDS; m++) s += a.dct[row + m]! * melEnergy[m]!;
    out[offset + MFCC + c] = s;
  }

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

/**
 * Pitch by the normalized autocorrelation of the frame decimated to about PITCH_RATE_HZ: the first lag whose correlation comes within PITCH_PEAK_SHARE of the
 * best (so a period, not a multiple of it), refined by a parabola. PEAK gets the best correlation.
 */
function pitchOf(a: Analyzer, out: Float64Array, offset: number): void {
  const { plain, decimated, correlation } = a.scratch;
  const factor = a.decimation;
  const n = Math.floor(a.frameLength / factor);
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let j = 0; j < factor; j++) sum += plain[i * factor + j]!;
    decimated[i] = sum;
  }
  // Energies of every prefix, so each lag's two energies cost a subtraction.
  const { prefix } = a.scratch;
  prefix[0] = 0;
  for (let i = 0; i < n; i++) prefix[i + 1] = prefix[i]! + decimated[i]! * decimated[i]!;
  const { lo, hi } = a.lags;
  let best = -1;
  let bestValue = 0;
  for (let lag = lo; lag <= hi; lag++) {
    let xy = 0;
    for (let i = 0, j = lag; j < n; i++, j++) xy += decimated[i]! * decimated[j]!;
    const xx = prefix[n - lag]!;
    const yy = prefix[n]! - prefix[lag]!;
    const r = xx > 0 && yy > 0 ? xy / Math.sqrt(xx * yy) : 0;
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

/** One frame's samples, or undefined when the reader fails or gives samples that are not finite. */
function readFrame(audio: AudioReader, t: number, seconds: number): Float32Array | undefined {
  let samples: Float32Array;
  try {
    samples = audio.read(t, t + seconds);
  } catch {
    return undefined;
  }
  if (!(samples instanceof Float32Array)) return undefined;
  for (let i = 0; i < samples.length; i += 16) if (!Number.isFinite(samples[i]!)) return undefined;
  return samples;
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
  const at = new Float64Array(positions);
  const levels = new Float64Array(positions).fill(-Infinity);
  // The frames' samples, copied: a reader may reuse its buffer.
  const pool = new Float32Array(positions * a.frameLength);
  let loudest = -Infinity;
  for (let i = 0; i < positions; i++) {
    const t = start + offset + i * hop;
    at[i] = t;
    const samples = readFrame(audio, t, frameSeconds);
    if (!samples || samples.length < a.frameLength / 2) continue;
    const length = Math.min(samples.length, a.frameLength);
    const base = i * a.frameLength;
    let sum = 0;
    let squares = 0;
    for (let j = 0; j < length; j++) {
      const v = samples[j]!;
      pool[base + j] = v;
      sum += v;
      squares += v * v;
    }
    const ms = squares / length - (sum / length) ** 2;
    levels[i] = dbOf(Number.isFinite(ms) && ms > 0 ? ms : 0);
    if (levels[i]! > loudest) loudest = levels[i]!;
  }
  const floor = Math.max(ABSOLUTE_FLOOR_DBFS, loudest - RELATIVE_FLOOR_DB);
  const speech: number[] = [];
  for (let i = 0; i < positions; i++) if (levels[i]! >= floor) speech.push(i);
  if (speech.length === 0) return empty;
  const count = speech.length;
  const features = new Float64Array(count * FRAME_DIMS);
  const times = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const c = speech[i]!;
    analyseFrame(a, pool.subarray(c * a.frameLength, (c + 1) * a.frameLength), features, i * FRAME_DIMS);
    times[i] = at[c]! + frameSeconds / 2;
  }
  return { count, features, times };
}
