/**
 * What a voice sounds like, measured on a few frames of each utterance: level, the spectral envelope as
 * mel cepstra (the vocal tract and the telephone path's band and tilt), the pitch and how clearly the
 * frame is voiced (cepstral peak), and the energy outside the telephone band's core (band edges, coding
 * noise). Pure and deterministic; the caller's reader gives the samples.
 *
 * Cost is bounded: frames are 32 ms taken on a grid of at most MAX_CANDIDATES positions per utterance;
 * the quiet ones are dropped by their level (which costs a sum of squares), and of the rest FRAMES_PER_SECOND
 * per second of speech, at most MAX_FRAMES, are analysed (one 256-point FFT for the spectrum, one for the
 * cepstrum: most of the cost).
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
/** Cepstral peak height: how periodic the frame is (breathy, creaky or coded voices differ). */
export const PEAK = PITCH + 1;
/** Energy below and above the band's core, dB relative to the core. */
export const LOW_EDGE = PEAK + 1;
export const HIGH_EDGE = LOW_EDGE + 1;
export const FRAME_DIMS = HIGH_EDGE + 1;

/** Frame length: 32 ms holds two or more periods of any adult voice. */
const FRAME_SECONDS = 0.032;
/** Candidate frames are this far apart at most; longer utterances spread their budget wider. */
const MIN_HOP_SECONDS = 0.08;
/** Candidates examined per utterance (level only), and frames analysed in full: per second of speech, and at most. */
const MAX_CANDIDATES = 96;
const FRAMES_PER_SECOND = 4;
export const MAX_FRAMES = 24;
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
const PITCH_MAX_HZ = 400;
/** Cepstral peak (natural-log units, above its neighbourhood's mean) that counts as voiced. */
const VOICED_PEAK = 0.09;
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
  quefrency: { lo: number; hi: number };
  /** Scratch buffers, reused frame to frame. */
  scratch: {
    frame: Float64Array;
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
    quefrency: {
      lo: Math.max(2, Math.floor(sampleRate / PITCH_MAX_HZ)),
      hi: Math.min(fftSize / 2 - 2, Math.ceil(sampleRate / PITCH_MIN_HZ)),
    },
    scratch: {
      frame: new Float64Array(fftSize),
      re: new Float64Array(fftSize / 2 + 1),
      im: new Float64Array(fftSize / 2 + 1),
      power: new Float64Array(fftSize / 2 + 1),
      mel: new Float64Array(MEL_BANDS),
    },
  };
  analyzers.set(sampleRate, analyzer);
  return analyzer;
}

/** Mean square of `samples` after removing their mean; 0 for an empty or non-finite frame. */
function meanSquare(samples: Float32Array): number {
  const n = samples.length;
  if (n === 0) return 0;
  let sum = 0;
  let squares = 0;
  for (let i = 0; i < n; i++) {
    const v = samples[i]!;
    sum += v;
    squares += v * v;
  }
  const mean = sum / n;
  const ms = squares / n - mean * mean;
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

const dbOf = (meanSquareValue: number) => 10 * Math.log10(meanSquareValue + TINY);

/** Full features of one frame into `out` at `offset`. */
function analyseFrame(a: Analyzer, samples: Float32Array, out: Float64Array, offset: number): void {
  const { frame, re, im, power, mel: melEnergy } = a.scratch;
  const n = Math.min(samples.length, a.frameLength);
  let mean = 0;
  for (let i = 0; i < n; i++) mean += samples[i]!;
  mean = n > 0 ? mean / n : 0;
  let squares = 0;
  for (let i = 0; i < n; i++) {
    const v = samples[i]! - mean;
    squares += v * v;
    frame[i] = v * a.window[i]!;
  }
  frame.fill(0, n);
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

  // Real cepstrum: the spectrum of the log magnitude spectrum (even, so its transform is real).
  for (let k = 0; k <= half; k++) frame[k] = 0.5 * Math.log(power[k]!);
  for (let k = half + 1; k < a.fftSize; k++) frame[k] = frame[a.fftSize - k]!;
  realFft(a.fft, frame, re, im);
  const { lo, hi } = a.quefrency;
  let best = lo;
  let sum = 0;
  for (let q = lo; q <= hi; q++) {
    const v = re[q]! / a.fftSize;
    sum += v;
    if (v > re[best]! / a.fftSize) best = q;
  }
  const peakValue = re[best]! / a.fftSize;
  const prominence = peakValue - sum / (hi - lo + 1);
  out[offset + PEAK] = prominence;
  if (prominence >= VOICED_PEAK && best > lo && best < hi) {
    // Parabolic interpolation of the peak's quefrency.
    const y0 = re[best - 1]!;
    const y1 = re[best]!;
    const y2 = re[best + 1]!;
    const denominator = y0 - 2 * y1 + y2;
    const shift = denominator < 0 ? (0.5 * (y0 - y2)) / denominator : 0;
    out[offset + PITCH] = Math.log2(a.sampleRate / (best + shift) / 100);
  } else {
    out[offset + PITCH] = Number.NaN;
  }
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
 * The analysed frames of one utterance: candidates on an even grid over the span, the quiet ones dropped,
 * at most MAX_FRAMES of the rest (evenly spread) analysed in full.
 */
export function utteranceFrames(audio: AudioReader, span: UtteranceSpan, a: Analyzer): UtteranceFrames {
  const frameSeconds = a.frameLength / a.sampleRate;
  const empty: UtteranceFrames = { count: 0, features: new Float64Array(0), times: new Float64Array(0) };
  const start = Number.isFinite(span.start) ? Math.max(0, span.start) : 0;
  const end = Number.isFinite(span.end) ? span.end : start;
  const usable = end - start - frameSeconds;
  if (usable < 0) return empty;
  const positions = Math.min(MAX_CANDIDATES, Math.floor(usable / MIN_HOP_SECONDS) + 1);
  const hop = positions > 1 ? usable / (positions - 1) : 0;
  const offset = positions > 1 ? 0 : usable / 2;
  const at = new Float64Array(positions);
  const levels = new Float64Array(positions).fill(-Infinity);
  let loudest = -Infinity;
  for (let i = 0; i < positions; i++) {
    const t = start + offset + i * hop;
    at[i] = t;
    const samples = readFrame(audio, t, frameSeconds);
    if (!samples || samples.length < a.frameLength / 2) continue;
    levels[i] = dbOf(meanSquare(samples));
    if (levels[i]! > loudest) loudest = levels[i]!;
  }
  const floor = Math.max(ABSOLUTE_FLOOR_DBFS, loudest - RELATIVE_FLOOR_DB);
  const speech: number[] = [];
  for (let i = 0; i < positions; i++) if (levels[i]! >= floor) speech.push(i);
  if (speech.length === 0) return empty;
  const count = Math.min(
    MAX_FRAMES,
    speech.length,
    Math.ceil(speech.length * Math.max(hop, MIN_HOP_SECONDS) * FRAMES_PER_SECOND),
  );
  const features = new Float64Array(count * FRAME_DIMS);
  const times = new Float64Array(count);
  let kept = 0;
  for (let i = 0; i < count; i++) {
    const t = at[speech[Math.floor(((i + 0.5) * speech.length) / count)]!]!;
    const samples = readFrame(audio, t, frameSeconds);
    if (!samples) continue;
    analyseFrame(a, samples, features, kept * FRAME_DIMS);
    times[kept++] = t + frameSeconds / 2;
  }
  if (kept < count)
    return { count: kept, features: features.slice(0, kept * FRAME_DIMS), times: times.slice(0, kept) };
  return { count, features, times };
}
