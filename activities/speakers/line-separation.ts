/**
 * Separates the utterances of a one-track call by how each sounds as a whole, line included
 * (voice-features.ts utteranceFrames: level, cepstra, pitch, band edges on a few frames of each): the
 * method for calls that hold no voice to follow, such as the pipeline's synthetic DTMF recordings, whose
 * legs differ by their telephone line only. Calls of speech go to voice-separation.ts. No model, no
 * native code, deterministic.
 *
 * 1. Each utterance is summed up as one vector: level of its louder frames, mean mel cepstra, median
 *    pitch, voicing, band edges. Dimensions are scaled by how much they vary between the frames of one
 *    utterance, so that a steady trait (a voice's pitch, a line's level) outweighs what changes with the
 *    words.
 * 2. The utterances long enough to be measured well (each distinct vector once) decide the voices. A
 *    voice is a full-covariance Gaussian over the frames of its utterances (level, cepstra, periodicity,
 *    band edges), with a Gaussian over their pitch. Starting from one voice, each step splits a voice in
 *    two (k-means on the utterance vectors, refined by hard EM that moves whole utterances to the voice
 *    under which their frames are likeliest) and keeps the split only when the likelihood of all frames
 *    grows by more than the new voice's price (ΔBIC, with a λ calibrated so that one speaker split by
 *    what they say stays one). A third voice and beyond pays more and must hold a fair share of the call,
 *    unless it takes over from another voice (a transfer: the two never heard in turn).
 * 3. Every utterance is then given the voice under which its frames are likeliest; its confidence is the
 *    posterior between the two likeliest voices, its frames counted as a few independent ones. Short ones
 *    and ones unlike every voice stay unassigned.
 * 4. Joined utterances: frames of an utterance are scored against per-voice frame models; a run of frames
 *    that clearly belongs to another voice marks the utterance joined, and the voice holding most frames
 *    is its voice.
 */
import { seededRandom } from '../../schemas/seeded-random.ts';
import { roundThousandths } from '../../schemas/units.ts';
import { lowerInverse } from './triangular.ts';
import {
  analyzerFor,
  FRAME_DIMS,
  HIGH_EDGE,
  LEVEL,
  LOW_EDGE,
  MAX_FRAMES,
  MFCC,
  CEPSTRA,
  PEAK,
  PITCH,
  utteranceFrames,
  type AudioReader,
  type UtteranceFrames,
  type UtteranceSpan,
} from './voice-features.ts';

export type { AudioReader, UtteranceSpan } from './voice-features.ts';

/** One utterance's voice (shared by both separators; voice-separation.ts re-exports it). */
export interface VoiceAssignment {
  /** voice index, 0 = the voice heard first; null when this utterance cannot be told */
  voice: number | null;
  /** 0..1 */
  confidence: number;
  /** the recognizer joined two voices in this utterance (e.g. a quick はい inside the other's sentence): voice is the one holding most of it */
  joined: boolean;
}

export interface SeparationResult {
  /** 0 when nothing could be told */
  voices: number;
  /** one per span, same order */
  assignments: VoiceAssignment[];
  joined: number;
  /** why voices is 0 or 1 or > 2, or why utterances were left unassigned, in words a user can read */
  reason?: string;
  /** CPU spent, ms */
  cpuMs: number;
}

const DEFAULT_MAX_VOICES = 4;

/** Utterance vector layout: level, cepstra, pitch, voiced share, autocorrelation peak, band edges. */
const U_LEVEL = 0;
const U_MFCC = 1;
const U_PITCH = U_MFCC + CEPSTRA;
const U_VOICED = U_PITCH + 1;
const U_PEAK = U_VOICED + 1;
const U_LOW = U_PEAK + 1;
const U_HIGH = U_LOW + 1;
const U_DIMS = U_HIGH + 1;
/**
 * Smallest spread per dimension used for scaling, in its own units: a dimension that hardly varies over a
 * call (one voice, one line) must not turn its noise into a difference.
 */
const U_MIN_SCALE = (() => {
  const s = new Float64Array(U_DIMS);
  s[U_LEVEL] = 1.5;
  for (let c = 0; c < CEPSTRA; c++) s[U_MFCC + c] = 0.25;
  s[U_PITCH] = 0.08;
  s[U_VOICED] = 0.08;
  s[U_PEAK] = 0.02;
  s[U_LOW] = 1.5;
  s[U_HIGH] = 1.5;
  return s;
})();

/** Utterances at least this long, with this many frames, are measured well enough to cluster. */
const RELIABLE_SECONDS = 0.8;
const RELIABLE_FRAMES = 3;
/** Shorter than this an utterance is assigned only when its confidence is high. */
const SHORT_SECONDS = 0.3;
const SHORT_MIN_CONFIDENCE = 0.95;
const MIN_CONFIDENCE = 0.6;
/**
 * The price of a second voice, as λ of the BIC penalty (½ · parameters · ln frames). Frames of one
 * utterance are not independent (same words, same intonation), so splitting one voice by what it says
 * gains more than chance: λ = 1 is too cheap for that and too dear for two similar voices. Calibrated on
 * the bench (bench/speakers.ts) with each speaker of the two-voice calls alone as a one-voice call.
 */
const SECOND_VOICE_PENALTY = 1.05;
/** A third voice and beyond pays more: splitting one of two voices again by what it says reaches about 1.5. */
const EXTRA_VOICE_PENALTY = 2;
/** A voice model needs more frames than dimensions (its covariance is floored, see COVARIANCE_FLOOR). */
const MIN_MODEL_FRAMES = FRAME_DIMS;
const EM_ITERATIONS = 12;
/** A voice needs this many reliable utterances, and this share of them. */
const MIN_VOICE_UTTERANCES = 3;
const MIN_VOICE_SHARE = 0.04;
const MIN_EXTRA_VOICE_SHARE = 0.1;
/**
 * A voice that takes over from another (a transfer: the two never heard in turn, at most this share of
 * their utterances' pairs out of order) pays less than a third voice heard throughout: one voice split by
 * what it says gives halves that alternate through the call, so a clean succession is evidence of its
 * own, and the later voice speaks in only part of the call, whose frames alone must earn its price.
 * Once per call. Calibrated on the bench's transfer calls against each voice of its two-voice calls
 * divided at its best moment.
 */
const TAKEOVER_INTERLEAVING = 0.05;
const TAKEOVER_PENALTY = 0.5;
/** Mean squared Mahalanobis distance of a frame, per dimension, beyond which an utterance is like no voice. */
const OUTLIER_DISTANCE_PER_DIM = 6;
/** An utterance's frames count as at most this many independent ones in its confidence. */
const CONFIDENT_FRAMES = 4;
const KMEANS_RESTARTS = 3;
const KMEANS_ITERATIONS = 20;
/** Grid (in units of the within-utterance spread) on which two utterance vectors count as the same. */
const DUPLICATE_GRID = 0.15;
/** Joined utterances: frames in a window, and the mean log-likelihood ratio per frame that counts as clear. */
const JOIN_WINDOW_FRAMES = 2;
const JOIN_MIN_LLR = 4;
const JOIN_MIN_FRAMES = 4;
/** Smallest variance of a scaled frame dimension in the per-voice frame models. */
const JOIN_MIN_VARIANCE = 0.05;
const SEED = 0x5eed;

interface Measured {
  index: number;
  span: UtteranceSpan;
  frames: UtteranceFrames;
  vector: Float64Array | undefined;
  squares: Float64Array | undefined;
  counts: Float64Array | undefined;
  /** Sufficient statistics of its frames, for the voice models. */
  stats: FrameStats;
  reliable: boolean;
}

/** Which frame dimension each utterance dimension averages (-1: none). */
const FRAME_DIM_OF = (() => {
  const map = new Int32Array(U_DIMS).fill(-1);
  map[U_LEVEL] = LEVEL;
  for (let c = 0; c < CEPSTRA; c++) map[U_MFCC + c] = MFCC + c;
  map[U_PITCH] = PITCH;
  map[U_PEAK] = PEAK;
  map[U_LOW] = LOW_EDGE;
  map[U_HIGH] = HIGH_EDGE;
  return map;
})();

/**
 * One vector per utterance from its frames (undefined without frames), and the spread of its frames
 * around it: squared deviations and their count per dimension. The level is that of the louder half of
 * the frames (syllables, tones), not of the consonants and edges between them.
 */
function utteranceVector(
  frames: UtteranceFrames,
): { vector: Float64Array; squares: Float64Array; counts: Float64Array } | undefined {
  if (frames.count === 0) return undefined;
  const f = frames.features;
  const vector = new Float64Array(U_DIMS);
  const squares = new Float64Array(U_DIMS);
  const counts = new Float64Array(U_DIMS);
  const n = frames.count;
  const levels = new Float64Array(n);
  const pitches = new Float64Array(n);
  let voiced = 0;
  for (let i = 0; i < n; i++) {
    levels[i] = f[i * FRAME_DIMS + LEVEL]!;
    const p = f[i * FRAME_DIMS + PITCH]!;
    if (!Number.isNaN(p)) pitches[voiced++] = p;
  }
  // The louder half of the levels, and the pitches in order for their median.
  levels.sort().reverse();
  const loud = Math.max(1, Math.ceil(n / 2));
  const voicedPitches = pitches.subarray(0, voiced).sort();
  for (let d = 0; d < U_DIMS; d++) {
    const fd = FRAME_DIM_OF[d]!;
    if (fd < 0) continue;
    if (d === U_LEVEL || d === U_PITCH) {
      const values = d === U_LEVEL ? levels.subarray(0, loud) : voicedPitches;
      if (values.length < (d === U_PITCH ? 2 : 1)) {
        vector[d] = Number.NaN;
        continue;
      }
      let m: number;
      if (d === U_PITCH) {
        const mid = values.length >> 1;
        m = values.length % 2 ? values[mid]! : (values[mid - 1]! + values[mid]!) / 2;
      } else {
        m = 0;
        for (let i = 0; i < values.length; i++) m += values[i]!;
        m /= values.length;
      }
      let sq = 0;
      for (let i = 0; i < values.length; i++) sq += (values[i]! - m) * (values[i]! - m);
      vector[d] = m;
      squares[d] = sq;
      counts[d] = values.length - 1;
      continue;
    }
    let sum = 0;
    for (let i = 0; i < n; i++) sum += f[i * FRAME_DIMS + fd]!;
    const m = sum / n;
    let sq = 0;
    for (let i = 0; i < n; i++) {
      const v = f[i * FRAME_DIMS + fd]! - m;
      sq += v * v;
    }
    vector[d] = m;
    squares[d] = sq;
    counts[d] = n - 1;
  }
  vector[U_VOICED] = voiced / n;
  return { vector, squares, counts };
}

/** Per-dimension centre and scale over `vectors`, with floors; NaN entries are skipped. */
function scaling(
  vectors: Float64Array[],
  dims: number,
  minScale: Float64Array,
): { centre: Float64Array; scale: Float64Array } {
  const centre = new Float64Array(dims);
  const scale = new Float64Array(dims);
  for (let d = 0; d < dims; d++) {
    let n = 0;
    let sum = 0;
    for (const v of vectors) {
      if (Number.isNaN(v[d]!)) continue;
      n++;
      sum += v[d]!;
    }
    const m = n ? sum / n : 0;
    let squares = 0;
    for (const v of vectors) if (!Number.isNaN(v[d]!)) squares += (v[d]! - m) * (v[d]! - m);
    const variance = n > 1 ? squares / (n - 1) : 0;
    centre[d] = m;
    scale[d] = Math.max(Math.sqrt(variance), minScale[d]!);
  }
  return { centre, scale };
}

/**
 * Centre over the utterances, and as scale the spread of frames within an utterance (pooled, floored): a
 * difference between utterances then counts in units of what varies inside one anyway (syllables,
 * tones), so a steady trait of a voice or a line (pitch, level) weighs more than the words said.
 */
function withinUtteranceScaling(utterances: Measured[]): { centre: Float64Array; scale: Float64Array } {
  const { centre } = scaling(
    utterances.map((m) => m.vector!),
    U_DIMS,
    U_MIN_SCALE,
  );
  const scale = new Float64Array(U_DIMS);
  for (let d = 0; d < U_DIMS; d++) {
    let squares = 0;
    let count = 0;
    for (const m of utterances) {
      squares += m.squares![d]!;
      count += m.counts![d]!;
    }
    scale[d] = Math.max(U_MIN_SCALE[d]!, count > 0 ? Math.sqrt(squares / count) : 0);
  }
  return { centre, scale };
}

/** `v` centred and scaled; a missing value (NaN) becomes the centre. */
function scaled(v: Float64Array, s: { centre: Float64Array; scale: Float64Array }): Float64Array {
  const out = new Float64Array(v.length);
  for (let d = 0; d < v.length; d++) out[d] = Number.isNaN(v[d]!) ? 0 : (v[d]! - s.centre[d]!) / s.scale[d]!;
  return out;
}

function squaredDistance(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let d = 0; d < a.length; d++) {
    const t = a[d]! - b[d]!;
    s += t * t;
  }
  return s;
}

interface Clustering {
  k: number;
  labels: Int32Array;
  centres: Float64Array[];
  inertia: number;
}

/** 1 for the values above their median, 0 for the others. */
function medianSplit(values: number[]): Int32Array {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return Int32Array.from(values, (v) => (v > median ? 1 : 0));
}

/** k-means with k-means++ seeding, the best of several seeded restarts. */
function kMeans(points: Float64Array[], k: number): Clustering {
  const n = points.length;
  const dims = points[0]!.length;
  const random = seededRandom(SEED + k);
  let best: Clustering | undefined;
  for (let restart = 0; restart < KMEANS_RESTARTS; restart++) {
    const centres: Float64Array[] = [Float64Array.from(points[Math.floor(random() * n)]!)];
    const nearest = new Float64Array(n).fill(Infinity);
    while (centres.length < k) {
      let total = 0;
      for (let i = 0; i < n; i++) {
        nearest[i] = Math.min(nearest[i]!, squaredDistance(points[i]!, centres[centres.length - 1]!));
        total += nearest[i]!;
      }
      let pick = random() * total;
      let chosen = n - 1;
      for (let i = 0; i < n; i++) {
        pick -= nearest[i]!;
        if (pick <= 0) {
          chosen = i;
          break;
        }
      }
      centres.push(Float64Array.from(points[chosen]!));
    }
    const labels = new Int32Array(n);
    const sums = Array.from({ length: k }, () => new Float64Array(dims));
    const counts = new Int32Array(k);
    let inertia = 0;
    for (let iteration = 0; iteration < KMEANS_ITERATIONS; iteration++) {
      let changed = false;
      inertia = 0;
      for (let i = 0; i < n; i++) {
        let bestC = 0;
        let bestD = Infinity;
        for (let c = 0; c < k; c++) {
          const d = squaredDistance(points[i]!, centres[c]!);
          if (d < bestD) {
            bestD = d;
            bestC = c;
          }
        }
        if (labels[i] !== bestC || iteration === 0) changed = changed || labels[i] !== bestC;
        labels[i] = bestC;
        inertia += bestD;
      }
      for (const sum of sums) sum.fill(0);
      counts.fill(0);
      for (let i = 0; i < n; i++) {
        counts[labels[i]!]!++;
        const s = sums[labels[i]!]!;
        for (let d = 0; d < dims; d++) s[d] = s[d]! + points[i]![d]!;
      }
      for (let c = 0; c < k; c++)
        if (counts[c]! > 0) for (let d = 0; d < dims; d++) centres[c]![d] = sums[c]![d]! / counts[c]!;
      if (!changed && iteration > 0) break;
    }
    if (!best || inertia < best.inertia - 1e-9) best = { k, labels, centres, inertia };
  }
  return best!;
}

/** Smallest spread per frame dimension, in its own units (as U_MIN_SCALE for utterances). */
const FRAME_MIN_SCALE = (() => {
  const s = new Float64Array(FRAME_DIMS).fill(0.25);
  s[LEVEL] = 1.5;
  s[PITCH] = 0.08;
  s[PEAK] = 0.02;
  s[LOW_EDGE] = 1.5;
  s[HIGH_EDGE] = 1.5;
  return s;
})();

/** Frame dimensions of the voice models: all but the pitch, which unvoiced frames lack (modelled apart). */
const MODEL_DIMS = Array.from({ length: FRAME_DIMS }, (_, d) => d).filter((d) => d !== PITCH);
const D = MODEL_DIMS.length;
/** Entries of a symmetric D×D matrix kept as its lower triangle, row by row: (i, j ≤ i) at i(i+1)/2 + j. */
const T = (D * (D + 1)) / 2;
/** What a voice model estimates: a mean and a full covariance of the frames, the pitch's mean and variance. */
const MODEL_PARAMETERS = D + T + 2;
/**
 * Added to each variance of a voice model (its dimension's smallest spread, halved, squared): a steady
 * synthetic voice or a line's constant band edge must not give a covariance near singular, whose
 * likelihoods would then decide everything.
 */
const COVARIANCE_FLOOR = MODEL_DIMS.map((d) => (FRAME_MIN_SCALE[d]! / 2) ** 2);
/** Smallest pitch variance, log2 units squared (about 3 % of the pitch). */
const PITCH_VARIANCE_FLOOR = 0.04 ** 2;

/** Sufficient statistics of some frames: sums and cross products, and the voiced frames' pitch. */
interface FrameStats {
  frames: number;
  sum: Float64Array;
  /** Cross products, lower triangle packed (T entries). */
  products: Float64Array;
  voiced: number;
  pitchSum: number;
  pitchSquares: number;
}

const emptyStats = (): FrameStats => ({
  frames: 0,
  sum: new Float64Array(D),
  products: new Float64Array(T),
  voiced: 0,
  pitchSum: 0,
  pitchSquares: 0,
});

/**
 * Empty statistics for `count` utterances over one buffer: a call has hundreds of utterances, and one
 * allocation costs less than hundreds of small ones.
 */
function statsPool(count: number): () => FrameStats {
  const buffer = new Float64Array(count * (D + T));
  let next = 0;
  return () => {
    const at = next;
    next += D + T;
    return {
      frames: 0,
      sum: buffer.subarray(at, at + D),
      products: buffer.subarray(at + D, at + D + T),
      voiced: 0,
      pitchSum: 0,
      pitchSquares: 0,
    };
  };
}

/** The statistics of an utterance's frames, into `s` (empty). */
const statsRow = new Float64Array(D);

function statsOf(frames: UtteranceFrames, s: FrameStats): FrameStats {
  const x = statsRow;
  for (let f = 0; f < frames.count; f++) {
    const row = f * FRAME_DIMS;
    for (let i = 0; i < D; i++) x[i] = frames.features[row + MODEL_DIMS[i]!]!;
    for (let i = 0, t = 0; i < D; i++) {
      const xi = x[i]!;
      s.sum[i] = s.sum[i]! + xi;
      for (let j = 0; j <= i; j++, t++) s.products[t] = s.products[t]! + xi * x[j]!;
    }
    const pitch = frames.features[row + PITCH]!;
    if (!Number.isNaN(pitch)) {
      s.voiced++;
      s.pitchSum += pitch;
      s.pitchSquares += pitch * pitch;
    }
  }
  s.frames = frames.count;
  return s;
}

function clearStats(s: FrameStats): void {
  s.frames = 0;
  s.voiced = 0;
  s.pitchSum = 0;
  s.pitchSquares = 0;
  s.sum.fill(0);
  s.products.fill(0);
}

function addStats(into: FrameStats, s: FrameStats): void {
  into.frames += s.frames;
  into.voiced += s.voiced;
  into.pitchSum += s.pitchSum;
  into.pitchSquares += s.pitchSquares;
  for (let i = 0; i < D; i++) into.sum[i] = into.sum[i]! + s.sum[i]!;
  for (let t = 0; t < T; t++) into.products[t] = into.products[t]! + s.products[t]!;
}

/** A voice: a full-covariance Gaussian over its frames, and a Gaussian over its voiced frames' pitch. */
interface VoiceGaussian {
  mean: Float64Array;
  /** Inverse covariance, full D×D; its product with the mean, and the mean's quadratic form. */
  precision: Float64Array;
  /** The inverse covariance's lower triangle packed as FrameStats.products, off-diagonal entries doubled. */
  packedPrecision: Float64Array;
  precisionMean: Float64Array;
  meanDistance: number;
  logDet: number;
  pitchMean: number;
  pitchVariance: number;
}

function fitVoice(s: FrameStats): VoiceGaussian {
  const n = Math.max(1, s.frames);
  const mean = s.sum.map((x) => x / n);
  // Cholesky factor L of the floored covariance, then its inverse: precision = L^-T L^-1.
  const l = new Float64Array(D * D);
  let logDet = 0;
  for (let i = 0; i < D; i++) {
    for (let j = 0; j <= i; j++) {
      let v =
        s.products[(i * (i + 1)) / 2 + j]! / n - mean[i]! * mean[j]! + (i === j ? COVARIANCE_FLOOR[i]! : 0);
      for (let k = 0; k < j; k++) v -= l[i * D + k]! * l[j * D + k]!;
      if (i === j) {
        l[i * D + i] = Math.sqrt(Math.max(v, COVARIANCE_FLOOR[i]!));
        logDet += 2 * Math.log(l[i * D + i]!);
      } else l[i * D + j] = v / l[j * D + j]!;
    }
  }
  const inverse = lowerInverse(l, D);
  const precision = new Float64Array(D * D);
  const packedPrecision = new Float64Array(T);
  for (let i = 0, t = 0; i < D; i++) {
    for (let j = 0; j <= i; j++, t++) {
      let v = 0;
      for (let k = i; k < D; k++) v += inverse[k * D + i]! * inverse[k * D + j]!;
      precision[i * D + j] = v;
      precision[j * D + i] = v;
      packedPrecision[t] = i === j ? v : 2 * v;
    }
  }
  const voiced = s.voiced;
  const pitchMean = voiced > 0 ? s.pitchSum / voiced : 0;
  const pitchVariance =
    voiced > 1 ? Math.max(PITCH_VARIANCE_FLOOR, s.pitchSquares / voiced - pitchMean ** 2) : 1;
  const precisionMean = new Float64Array(D);
  let meanDistance = 0;
  for (let i = 0; i < D; i++) {
    for (let j = 0; j < D; j++) precisionMean[i] = precisionMean[i]! + precision[i * D + j]! * mean[j]!;
    meanDistance += precisionMean[i]! * mean[i]!;
  }
  return { mean, precision, packedPrecision, precisionMean, meanDistance, logDet, pitchMean, pitchVariance };
}

/** Squared Mahalanobis distances of the frames summed up in `s` from `m`, summed, from the statistics alone. */
function distanceOf(m: VoiceGaussian, s: FrameStats): number {
  // Σ (x-μ)ᵀ P (x-μ) = Σ_ij P_ij Σxx_ij - 2 (Pμ)·Σx + n μᵀPμ
  const p = m.packedPrecision;
  const products = s.products;
  let quadratic = 0;
  for (let t = 0; t < T; t++) quadratic += p[t]! * products[t]!;
  let cross = 0;
  for (let i = 0; i < D; i++) cross += m.precisionMean[i]! * s.sum[i]!;
  return quadratic - 2 * cross + s.frames * m.meanDistance;
}

/** Log-likelihood of the frames summed up in `s` under `m` (constants shared by every model left out). */
function logLikelihoodOf(m: VoiceGaussian, s: FrameStats, distance = distanceOf(m, s)): number {
  const pitchSquares = s.pitchSquares - 2 * m.pitchMean * s.pitchSum + s.voiced * m.pitchMean * m.pitchMean;
  return (
    -0.5 * (s.frames * m.logDet + distance) -
    0.5 * (s.voiced * Math.log(m.pitchVariance) + pitchSquares / m.pitchVariance)
  );
}

/** Log-likelihood and summed squared distances of the frames summed up in `s` under `m`. */
function scoreFrames(m: VoiceGaussian, s: FrameStats): { logLikelihood: number; distance: number } {
  const distance = distanceOf(m, s);
  return { logLikelihood: logLikelihoodOf(m, s, distance), distance };
}

/** Utterances in k voices, the voices' models, and the log-likelihood of all their frames. */
interface Partition {
  k: number;
  labels: Int32Array;
  models: VoiceGaussian[];
  logLikelihood: number;
  /** Its last voice took over from another (a transfer). */
  takeover?: boolean;
}

/**
 * Hard EM with whole utterances: fit each voice to the frames of its utterances, move every utterance to
 * the voice under which its frames are likeliest, until none moves. Undefined when a voice is left with
 * too few frames to model.
 */
function refine(units: FrameStats[], initial: Int32Array, k: number): Partition | undefined {
  const labels = initial.slice();
  const pooled = Array.from({ length: k }, emptyStats);
  for (let iteration = 0; ; iteration++) {
    for (const p of pooled) clearStats(p);
    for (let i = 0; i < units.length; i++) addStats(pooled[labels[i]!]!, units[i]!);
    if (pooled.some((p) => p.frames < MIN_MODEL_FRAMES)) return undefined;
    const models = pooled.map(fitVoice);
    let moved = false;
    if (iteration < EM_ITERATIONS) {
      for (let i = 0; i < units.length; i++) {
        let best = labels[i]!;
        let bestLikelihood = logLikelihoodOf(models[best]!, units[i]!);
        for (let c = 0; c < k; c++) {
          if (c === labels[i]) continue;
          const likelihood = logLikelihoodOf(models[c]!, units[i]!);
          if (likelihood > bestLikelihood) {
            best = c;
            bestLikelihood = likelihood;
          }
        }
        if (best !== labels[i]) {
          labels[i] = best;
          moved = true;
        }
      }
    }
    if (!moved) {
      const logLikelihood = models.reduce((sum, m, c) => sum + logLikelihoodOf(m, pooled[c]!), 0);
      return { k, labels, models, logLikelihood };
    }
  }
}

/** Each unit's frame mean, standardized by the spread of all frames. */
function standardizedMeans(units: FrameStats[], all: FrameStats): Float64Array[] {
  const n = Math.max(1, all.frames);
  const centre = all.sum.map((x) => x / n);
  const spread = centre.map((m, i) =>
    Math.sqrt(Math.max(COVARIANCE_FLOOR[i]!, all.products[(i * (i + 3)) / 2]! / n - m * m)),
  );
  return units.map((u) => u.sum.map((x, i) => (x / Math.max(1, u.frames) - centre[i]!) / spread[i]!));
}

/**
 * How much two voices take turns: of the pairs of their utterances (one of each), the share in which the
 * order differs from the voices' usual order. 0 when one voice is heard only after the other has stopped
 * (a transfer: another agent takes the call), about a half when they alternate (a conversation, or one
 * voice split by what it says).
 */
export function interleaving(labels: Int32Array, times: ArrayLike<number>, a: number, b: number): number {
  const ta: number[] = [];
  const tb: number[] = [];
  labels.forEach((label, i) => {
    if (label === a) ta.push(times[i]!);
    else if (label === b) tb.push(times[i]!);
  });
  if (ta.length === 0 || tb.length === 0) return 0.5;
  ta.sort((x, y) => x - y);
  tb.sort((x, y) => x - y);
  // Pairs in which a's utterance comes after b's.
  let after = 0;
  for (let i = 0, j = 0; i < ta.length; i++) {
    while (j < tb.length && tb[j]! < ta[i]!) j++;
    after += j;
  }
  const share = after / (ta.length * tb.length);
  return Math.min(share, 1 - share);
}

/** The least interleaving of any two voices of a partition. */
function leastInterleaving(p: Partition, times: readonly number[]): number {
  let least = 0.5;
  for (let a = 0; a < p.k; a++)
    for (let b = a + 1; b < p.k; b++) least = Math.min(least, interleaving(p.labels, times, a, b));
  return least;
}

/**
 * The voices of the call, by model selection over the frames (ΔBIC): one voice more is kept while it
 * explains the frames better by more than its parameters' price, λ · ½ · MODEL_PARAMETERS · ln(frames).
 * Each step tries splitting every voice in two (k-means on the utterance vectors, then refine) and keeps
 * the likeliest; a third voice and beyond pays a higher price and must hold a fair share of the call,
 * unless it takes over from another voice (a transfer: the two are never heard in turn).
 */
function chooseVoices(
  units: FrameStats[],
  points: Float64Array[],
  times: readonly number[],
  maxVoices: number,
): Partition {
  const all = emptyStats();
  for (const u of units) addStats(all, u);
  const one = fitVoice(all);
  let current: Partition = {
    k: 1,
    labels: new Int32Array(units.length),
    models: [one],
    logLikelihood: logLikelihoodOf(one, all),
  };
  const frameMeans = standardizedMeans(units, all);
  const price = 0.5 * MODEL_PARAMETERS * Math.log(Math.max(2, all.frames));
  // One transfer per call at a second voice's price: once a voice has taken over, more pay in full.
  let takenOver = false;
  while (current.k < maxVoices) {
    const k = current.k + 1;
    // A third voice and beyond (a transfer, a conference) speaks for a while, not in a handful of lines.
    const share = k > 2 ? MIN_EXTRA_VOICE_SHARE : MIN_VOICE_SHARE;
    const minCount = Math.max(MIN_VOICE_UTTERANCES, Math.ceil(share * units.length));
    let best: Partition | undefined;
    for (let c = 0; c < current.k; c++) {
      const members: number[] = [];
      current.labels.forEach((label, i) => {
        if (label === c) members.push(i);
      });
      if (members.length < 2 * MIN_VOICE_UTTERANCES) continue;
      // Two k-means starts for a second voice: the utterance vectors (pitch, voicing, scaled by what varies
      // within an utterance) and the frames' means standardized by the call's frames; the likelier result
      // is kept. A third voice and beyond start from the frames' means alone: a second start found no
      // other voice on the bench, at about a fifth of the separation's CPU.
      const kmStarts = (k > 2 ? [frameMeans] : [points, frameMeans]).map(
        (starts) =>
          kMeans(
            members.map((i) => starts[i]!),
            2,
          ).labels,
      );
      // A second voice also starts from the louder and the quieter half: legs that differ by their line
      // only differ most by level, and k-means on every trait can split one leg by its digits instead.
      const byLevel = k === 2 ? [medianSplit(members.map((i) => points[i]![U_LEVEL]!))] : [];
      for (const halves of [...kmStarts, ...byLevel]) {
        const labels = current.labels.slice();
        members.forEach((i, j) => {
          if (halves[j] === 1) labels[i] = current.k;
        });
        const candidate = refine(units, labels, k);
        if (!candidate) continue;
        const counts = new Int32Array(k);
        for (const label of candidate.labels) counts[label]!++;
        if (counts.some((n) => n < minCount)) continue;
        const takeover = k > 2 && !takenOver && leastInterleaving(candidate, times) <= TAKEOVER_INTERLEAVING;
        const lambda = k === 2 ? SECOND_VOICE_PENALTY : takeover ? TAKEOVER_PENALTY : EXTRA_VOICE_PENALTY;
        if (candidate.logLikelihood - current.logLikelihood <= lambda * price) continue;
        if (!best || candidate.logLikelihood > best.logLikelihood) best = { ...candidate, takeover };
      }
    }
    if (!best) break;
    takenOver ||= best.takeover === true;
    current = best;
  }
  return current;
}

const ZERO_CONFIDENCE: VoiceAssignment = { voice: null, confidence: 0, joined: false };

/** No voice for any of `spans`. */
export const unassigned = (spans: readonly unknown[]): VoiceAssignment[] =>
  spans.map(() => ({ ...ZERO_CONFIDENCE }));

/** No voice found, and why: every utterance unassigned. */
export function noVoices(spans: readonly UtteranceSpan[], reason: string): Omit<SeparationResult, 'cpuMs'> {
  return { voices: 0, assignments: unassigned(spans), joined: 0, reason };
}

/** Why a separator cannot look at `spans` of `audio` at all (none, an unusable rate); undefined: it can. */
export function unseparable(audio: AudioReader, spans: readonly UtteranceSpan[]): string | undefined {
  if (spans.length === 0) return 'no utterances to separate';
  const rate = audio.sampleRate;
  if (!Number.isFinite(rate) || rate < 4000) return `the audio's sample rate (${rate}) is not usable`;
  return undefined;
}

/** The most voices a separator looks for (DEFAULT_MAX_VOICES unless asked, at least one). */
export function maxVoicesOf(options: { maxVoices?: number }): number {
  return Math.max(1, Math.floor(options.maxVoices ?? DEFAULT_MAX_VOICES));
}

/** The CPU this process has used, ms. */
function cpuNowMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * A separator's result with the CPU it took. Separators never throw: an error becomes no voices and its
 * message as the reason.
 */
export function timedSeparation(
  spans: readonly UtteranceSpan[],
  run: () => Omit<SeparationResult, 'cpuMs'>,
): SeparationResult {
  const t0 = cpuNowMs();
  let result: Omit<SeparationResult, 'cpuMs'>;
  try {
    result = run();
  } catch (error) {
    result = {
      voices: 0,
      assignments: unassigned(spans),
      joined: 0,
      reason: `voices could not be separated: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  return { ...result, cpuMs: cpuNowMs() - t0 };
}

/**
 * Separates the utterances of one track by their sound, line included (see the module comment). Never
 * throws: odd input gives 0 or 1 voices and a reason.
 */
export function separateByLine(
  audio: AudioReader,
  spans: readonly UtteranceSpan[],
  options: { maxVoices?: number } = {},
): SeparationResult {
  return timedSeparation(spans, () => separate(audio, spans, options));
}

function separate(
  audio: AudioReader,
  spans: readonly UtteranceSpan[],
  options: { maxVoices?: number },
): Omit<SeparationResult, 'cpuMs'> {
  const maxVoices = maxVoicesOf(options);
  const nothing = (reason: string) => noVoices(spans, reason);
  const unusable = unseparable(audio, spans);
  if (unusable) return nothing(unusable);
  const analyzer = analyzerFor(Math.round(audio.sampleRate));

  const newStats = statsPool(spans.length);
  const measured: Measured[] = spans.map((span, index) => {
    const frames = utteranceFrames(audio, span, analyzer);
    const summary = utteranceVector(frames);
    const reliable =
      !!summary && span.end - span.start >= RELIABLE_SECONDS && frames.count >= RELIABLE_FRAMES;
    return {
      index,
      span,
      frames,
      vector: summary?.vector,
      squares: summary?.squares,
      counts: summary?.counts,
      stats: statsOf(frames, newStats()),
      reliable,
    };
  });
  const usable = measured.filter((m) => m.vector);
  if (usable.length === 0) return nothing('no utterance holds audible speech (silence or the line only)');
  // Cluster the well-measured utterances; when there are too few, every usable one.
  let basis = measured.filter((m) => m.reliable);
  if (basis.length < 2 * MIN_VOICE_UTTERANCES) basis = usable;
  const scale = withinUtteranceScaling(basis);
  // Utterances that sound exactly alike (a recording played again, a synthetic test phrase) would make
  // a tight cluster of their own: they count once.
  const seen = new Set<string>();
  const distinct = basis.filter((m) => {
    const key = Array.from(scaled(m.vector!, scale), (x) => Math.round(x / DUPLICATE_GRID)).join(',');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (distinct.length >= 2 * MIN_VOICE_UTTERANCES) basis = distinct;
  const points = basis.map((m) => scaled(m.vector!, scale));

  const units = basis.map((m) => m.stats);
  const chosen = chooseVoices(
    units,
    points,
    basis.map((m) => m.span.start),
    maxVoices,
  );
  const k = chosen.k;

  const assignments: VoiceAssignment[] = unassigned(spans);
  const voiceOf = new Int32Array(spans.length).fill(-1);
  let unlike = 0;
  let tooShort = 0;
  let unclear = 0;
  for (const m of usable) {
    const stats = m.stats;
    const scores = chosen.models.map((model) => scoreFrames(model, stats));
    const order = scores.map((_, i) => i).sort((a, b) => scores[b]!.logLikelihood - scores[a]!.logLikelihood);
    const best = order[0]!;
    // The frames of one utterance are not independent: they count as at most CONFIDENT_FRAMES.
    const weight = Math.min(1, CONFIDENT_FRAMES / Math.max(1, stats.frames));
    const margin =
      k > 1 ? weight * (scores[best]!.logLikelihood - scores[order[1]!]!.logLikelihood) : Infinity;
    const confidence = k > 1 ? 1 / (1 + Math.exp(-margin)) : 1;
    const duration = m.span.end - m.span.start;
    let accept = confidence >= MIN_CONFIDENCE;
    if (scores[best]!.distance / Math.max(1, stats.frames) > OUTLIER_DISTANCE_PER_DIM * D) {
      accept = false;
      unlike++;
    } else if (duration < SHORT_SECONDS && confidence < SHORT_MIN_CONFIDENCE) {
      if (accept) tooShort++;
      accept = false;
    } else if (!accept) unclear++;
    assignments[m.index] = {
      voice: accept ? best : null,
      confidence: roundThousandths(confidence),
      joined: false,
    };
    if (accept) voiceOf[m.index] = best;
  }

  let joined = 0;
  if (k > 1) joined = markJoined(measured, assignments, voiceOf, k);

  const voices = numberVoicesAsHeard(assignments, spans, k);

  const notes = separationNotes(voices, measured.length, usable.length, { tooShort, unclear, unlike });
  return { voices, assignments, joined, ...(notes.length ? { reason: notes.join('; ') } : {}) };
}

/**
 * Renumbers the voices of `assignments` (one per span, `k` voices) so that voice 0 is the one heard first;
 * returns how many voices were heard. Both separators number their voices so.
 */
export function numberVoicesAsHeard(
  assignments: VoiceAssignment[],
  spans: readonly UtteranceSpan[],
  k: number,
): number {
  const firstHeard = Array.from({ length: k }, () => Infinity);
  assignments.forEach((a, u) => {
    if (a.voice !== null) firstHeard[a.voice] = Math.min(firstHeard[a.voice]!, spans[u]!.start);
  });
  const order = firstHeard
    .map((t, v) => ({ t, v }))
    .filter((e) => Number.isFinite(e.t))
    .sort((a, b) => a.t - b.t || a.v - b.v);
  const renumber = new Map(order.map((e, i) => [e.v, i]));
  for (const a of assignments) if (a.voice !== null) a.voice = renumber.get(a.voice)!;
  return order.length;
}

/** Why a separation found what it found, in words for result.json. */
function separationNotes(
  voices: number,
  utterances: number,
  usable: number,
  left: { tooShort: number; unclear: number; unlike: number },
): string[] {
  const { tooShort, unclear, unlike } = left;
  const notes: string[] = [];
  if (voices === 1)
    notes.push(
      usable < 2
        ? 'one voice: only one utterance could be measured'
        : 'one voice: the utterances do not fall into distinct voices',
    );
  if (voices > 2) notes.push(`${voices} voices: more than two people speak (a transfer or a conference)`);
  const missing = utterances - usable;
  if (missing > 0) notes.push(`${missing} utterance${missing > 1 ? 's hold' : ' holds'} no audible speech`);
  if (tooShort > 0) notes.push(`${tooShort} too short to tell`);
  if (unclear > 0) notes.push(`${unclear} between voices`);
  if (unlike > 0) notes.push(`${unlike} unlike any voice of the call`);
  return notes;
}

/**
 * Per-voice diagonal Gaussians over the training frames, each dimension scaled by its spread over all
 * of them (floored); a missing pitch stays missing.
 */
function frameVoiceModels(training: Measured[], voiceOf: Int32Array, k: number) {
  const count = new Float64Array(FRAME_DIMS);
  const sum = new Float64Array(FRAME_DIMS);
  const voiceCount = new Float64Array(k * FRAME_DIMS);
  const voiceSum = new Float64Array(k * FRAME_DIMS);
  const voiceSquares = new Float64Array(k * FRAME_DIMS);
  for (const m of training) {
    const f = m.frames.features;
    for (let i = 0; i < m.frames.count * FRAME_DIMS; i += FRAME_DIMS) {
      for (let d = 0; d < FRAME_DIMS; d++) {
        const x = f[i + d]!;
        if (Number.isNaN(x)) continue;
        count[d] = count[d]! + 1;
        sum[d] = sum[d]! + x;
      }
    }
  }
  const centre = new Float64Array(FRAME_DIMS);
  for (let d = 0; d < FRAME_DIMS; d++) centre[d] = count[d]! ? sum[d]! / count[d]! : 0;
  const spread = new Float64Array(FRAME_DIMS);
  for (const m of training) {
    const f = m.frames.features;
    for (let i = 0; i < m.frames.count * FRAME_DIMS; i += FRAME_DIMS) {
      for (let d = 0; d < FRAME_DIMS; d++) {
        const x = f[i + d]!;
        if (Number.isNaN(x)) continue;
        spread[d] = spread[d]! + (x - centre[d]!) * (x - centre[d]!);
      }
    }
  }
  const scale = new Float64Array(FRAME_DIMS);
  for (let d = 0; d < FRAME_DIMS; d++)
    scale[d] = Math.max(Math.sqrt(count[d]! > 1 ? spread[d]! / (count[d]! - 1) : 0), FRAME_MIN_SCALE[d]!);
  for (const m of training) {
    const f = m.frames.features;
    const v = voiceOf[m.index]! * FRAME_DIMS;
    for (let i = 0; i < m.frames.count * FRAME_DIMS; i += FRAME_DIMS) {
      for (let d = 0; d < FRAME_DIMS; d++) {
        const x = f[i + d]!;
        if (Number.isNaN(x)) continue;
        const z = (x - centre[d]!) / scale[d]!;
        voiceCount[v + d] = voiceCount[v + d]! + 1;
        voiceSum[v + d] = voiceSum[v + d]! + z;
        voiceSquares[v + d] = voiceSquares[v + d]! + z * z;
      }
    }
  }
  const mean = new Float64Array(k * FRAME_DIMS);
  const variance = new Float64Array(k * FRAME_DIMS);
  const logVariance = new Float64Array(k * FRAME_DIMS);
  for (let j = 0; j < k * FRAME_DIMS; j++) {
    const n = voiceCount[j]!;
    mean[j] = n > 0 ? voiceSum[j]! / n : 0;
    variance[j] = n > 1 ? Math.max(JOIN_MIN_VARIANCE, voiceSquares[j]! / n - mean[j]! * mean[j]!) : 1;
    logVariance[j] = Math.log(variance[j]!);
  }
  return { centre, scale, mean, variance, logVariance };
}

/**
 * Marks the utterances in which a run of frames clearly belongs to another voice; the voice holding most
 * frames becomes the utterance's voice. Returns how many were marked.
 */
function markJoined(
  measured: Measured[],
  assignments: VoiceAssignment[],
  voiceOf: Int32Array,
  k: number,
): number {
  const training = measured.filter(
    (m) => m.reliable && voiceOf[m.index]! >= 0 && assignments[m.index]!.confidence >= 0.9,
  );
  let frames = 0;
  for (const m of training) frames += m.frames.count;
  if (frames < 10 * k) return 0;
  const { centre, scale, mean, variance, logVariance } = frameVoiceModels(training, voiceOf, k);
  const z = new Float64Array(FRAME_DIMS);
  const ll = new Float64Array(MAX_FRAMES * k);
  const votes = new Int32Array(k);
  let joined = 0;
  for (const m of measured) {
    const own = voiceOf[m.index]!;
    const n = m.frames.count;
    if (own < 0 || n < JOIN_MIN_FRAMES) continue;
    const f = m.frames.features;
    votes.fill(0);
    for (let i = 0; i < n; i++) {
      for (let d = 0; d < FRAME_DIMS; d++) {
        const x = f[i * FRAME_DIMS + d]!;
        z[d] = Number.isNaN(x) ? x : (x - centre[d]!) / scale[d]!;
      }
      let best = 0;
      for (let v = 0; v < k; v++) {
        let s = 0;
        for (let d = 0, j = v * FRAME_DIMS; d < FRAME_DIMS; d++, j++) {
          const x = z[d]!;
          if (Number.isNaN(x)) continue;
          s -= logVariance[j]! + ((x - mean[j]!) * (x - mean[j]!)) / variance[j]!;
        }
        ll[i * k + v] = 0.5 * s;
        if (ll[i * k + v]! > ll[i * k + best]!) best = v;
      }
      votes[best]!++;
    }
    let other = -1;
    for (let i = 0; i + JOIN_WINDOW_FRAMES <= n && other < 0; i++) {
      for (let v = 0; v < k; v++) {
        if (v === own) continue;
        let sum = 0;
        for (let j = i; j < i + JOIN_WINDOW_FRAMES; j++) sum += ll[j * k + v]! - ll[j * k + own]!;
        if (sum / JOIN_WINDOW_FRAMES >= JOIN_MIN_LLR) {
          other = v;
          break;
        }
      }
    }
    if (other < 0) continue;
    joined++;
    const majority = votes[other]! > votes[own]! ? other : own;
    assignments[m.index] = { ...assignments[m.index]!, voice: majority, joined: true };
    voiceOf[m.index] = majority;
  }
  return joined;
}
