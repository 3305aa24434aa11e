/**
 * Separates the utterances of a one-track call into voices, by the voice itself: no model, no native
 * code, deterministic.
 *
 * 1. Every voiced frame of every utterance (voice-features.ts voicedFrames: half-overlapped 32-ms frames
 *    that are loud, periodic and not a tone) gives its pitch and mel cepstra. The call's mean is taken
 *    out (cepstral mean normalization: what every frame shares is the line and the recorder, not a
 *    person) and each dimension scaled by its spread over the call.
 * 2. A voice is a full-covariance Gaussian over its frames; an utterance belongs to one voice as a whole.
 *    Starting from one voice, each step splits a voice in two (k-means on the utterances' mean frames,
 *    refined by hard EM that moves whole utterances to the voice under which their frames are likeliest)
 *    and keeps the split when it explains the voice's frames better by at least a fixed gain per frame
 *    (nats), so the count depends on how far apart the voices are, not on how long the call is: one voice
 *    split by what it says gains little per frame however many frames there are. Once the count is
 *    decided, utterances move one at a time where that, with the voices refitted, explains the frames
 *    better (hard EM stops where a better partition is one refit away).
 * 3. Every utterance with voiced frames is given the voice under which its frames are likeliest; its
 *    confidence is the posterior between the two likeliest voices, its frames counted as a few independent
 *    ones. Utterances without a voiced frame stay unassigned.
 * 4. Joined utterances: a run of frames that clearly belongs to another voice marks the utterance joined,
 *    and the voice holding most of its frames is its voice.
 *
 * A call without voices to follow (no utterance holds enough voiced frames: the pipeline's synthetic DTMF
 * recordings) is separated by how each utterance sounds, line included (line-separation.ts), and says so.
 */
import {
  interleaving,
  maxVoicesOf,
  noVoices,
  numberVoicesAsHeard,
  separateByLine,
  timedSeparation,
  unassigned,
  unseparable,
  type SeparationResult,
  type VoiceAssignment,
} from './line-separation.ts';
import { roundThousandths } from '../../schemas/units.ts';
import { lowerInverse } from './triangular.ts';
import {
  analyzerFor,
  voicedFrames,
  V_PITCH,
  VOICED_DIMS,
  VOICED_HOP_SECONDS,
  type AudioReader,
  type UtteranceSpan,
  type VoicedFrames,
} from './voice-features.ts';

export type { AudioReader, UtteranceSpan } from './voice-features.ts';
export type { SeparationResult } from './line-separation.ts';
const D = VOICED_DIMS;
/**
 * The least gain per frame (nats) for which a voice is split in two: SPLIT_GAIN, plus SMALL_VOICE_GAIN
 * divided by the utterances of the smaller half. The best split of a few utterances is chosen among many
 * and gains by chance, the more so the fewer they are; with many the price is SPLIT_GAIN whatever the
 * call's length. Chosen on the development split of bench/speakers.ts (bench/README.md), with each voice of
 * its two-voice calls alone as a one-voice call: between what one voice split by its words gains and what
 * two close voices gain.
 */
const SPLIT_GAIN = 0.13;
const SMALL_VOICE_GAIN = 1.3;
/**
 * A third voice and beyond: a voice that takes over from another (a transfer: the two hardly heard in turn,
 * at most TAKEOVER_INTERLEAVING of their utterances' pairs out of order, so that a few utterances of a close
 * voice put with the other, or the first agent heard once more after the second has begun, still count)
 * pays as a second voice does, once per call; the voice it takes over from may be any voice, not only the
 * one it was split from (split from the customer's, it takes over from the first agent's), and it may be
 * either half of the split voice (the customer the new one, the second agent left in the old); one heard
 * throughout the call (a conference) pays CONFERENCE_GAIN, as one voice split by its words into halves that
 * alternate through the call gains up to about 0.85 on the development split. Chosen on the development
 * split (bench/README.md, tenth round): its transfers' splits are out of order in up to 0.079 of pairs, a
 * third voice split by words from a two-voice call that would gain enough in 0.266 or more.
 */
const TAKEOVER_INTERLEAVING = 0.1;
const CONFERENCE_GAIN = 1.0;
/** Voiced frames in `seconds` of voice. */
const framesIn = (seconds: number) => Math.ceil(seconds / VOICED_HOP_SECONDS);
/**
 * An utterance with less voice than this does not decide the voices (it is still given one). A short
 * answer or backchannel (はい, ええ, そうですね) is a few set words: one voice's short utterances alike
 * in their words are a group of their own, and split from the voice's sentences they gained as much as
 * two voices do. Chosen on the development split (bench/README.md).
 */
export const BASIS_FRAMES = framesIn(0.75);
/** An utterance of a long call keeps at least this many analysed frames (see analysisSteps). */
const KEPT_FRAMES = framesIn(0.5);
/** A call whose utterances hold voices: at least this share of the audible ones has this much voice. */
const VOICED_UTTERANCE_FRAMES = framesIn(0.25);
const VOICED_CALL_SHARE = 0.5;
/** A voice holds at least this many utterances, this much voice, and this share of the call's. */
const MIN_VOICE_UTTERANCES = 4;
const MIN_VOICE_FRAMES = framesIn(4);
const MIN_VOICE_SHARE = 0.04;
const MIN_EXTRA_VOICE_SHARE = 0.1;
/** Smallest variance of a scaled dimension in a voice's covariance. */
const EM_ITERATIONS = 10;
/**
 * Passes of single moves over the deciding utterances once the voices are chosen (see `improve`), and the
 * units tried: those within this many nats per frame of another voice. Chosen on the development split
 * (bench/README.md, ninth round): every unit tried, or those within 1, 0.5 or 0.25, moved the same ones.
 */
const IMPROVE_SWEEPS = 3;
const IMPROVE_MARGIN = 1;
const KMEANS_ITERATIONS = 15;
const POWER_ITERATIONS = 20;
/**
 * The least spread of a voice per dimension, in its own units (octaves of pitch, cepstra): no voice is
 * steadier than this, so utterances that differ by less (a steady voice's pitch from line to line) are
 * not two voices.
 */
const MIN_SPREAD_PITCH = 0.08;
const MIN_SPREAD_CEPSTRUM = 0.3;
/** An utterance's frames count as at most this many independent ones in its confidence. */
const CONFIDENT_FRAMES = 8;
const MIN_CONFIDENCE = 0.6;
/**
 * A call with more utterance time than this has voice to spare: every step-th frame is analysed, the
 * step chosen so that about this much is analysed (short utterances excepted: analysisSteps), each
 * analysed frame standing for `step` in the statistics. The separation's CPU is then bounded per call,
 * however long (bench/README.md, cost).
 */
const ANALYSED_SECONDS = 300;
/** Joined utterances: frames in a window, and the mean log-likelihood ratio per frame that counts as clear. */
const JOIN_WINDOW_FRAMES = framesIn(0.5);
const JOIN_MIN_LLR = 2;

/**
 * Sufficient statistics of a set of frames, packed in one vector so that pooling them is one sum and a
 * likelihood one dot product (`Gaussian.weights`): the sums of products x_i x_j for i ≤ j (the upper
 * triangle, row by row), then the sums x_i, then the count.
 */
type Stats = Float64Array;
const TRIANGLE = (D * (D + 1)) / 2;
const SUM_AT = TRIANGLE;
const COUNT_AT = SUM_AT + D;
const STATS_LENGTH = COUNT_AT + 1;
/** Where the product of dimensions i ≤ j sits in the packed triangle. */
const triangleIndex = (i: number, j: number) => i * D - (i * (i - 1)) / 2 + (j - i);

const emptyStats = (): Stats => new Float64Array(STATS_LENGTH);
/** Frames counted in `s` (each analysed frame standing for its step's). */
const countOf = (s: Stats) => s[COUNT_AT]!;

function addStats(into: Stats, s: Stats): void {
  for (let i = 0; i < STATS_LENGTH; i++) into[i] = into[i]! + s[i]!;
}

/** `weight`: the frames each analysed frame stands for (see ANALYSED_SECONDS). */
function statsOf(frames: Float64Array, count: number, weight: number): Stats {
  const s = emptyStats();
  // Each sum in a local over the frames in order (the sums a frame-by-frame pass would make), four
  // products of a row at a time so that their additions do not wait on each other.
  const end = count * D;
  for (let i = 0, t = 0; i < D; i++) {
    let sum = 0;
    for (let o = i; o < end; o += D) sum += frames[o]!;
    s[SUM_AT + i] = sum;
    let j = i;
    for (; j + 3 < D; j += 4, t += 4) {
      let a = 0;
      let b = 0;
      let c = 0;
      let d = 0;
      for (let o = 0; o < end; o += D) {
        const x = frames[o + i]!;
        a += x * frames[o + j]!;
        b += x * frames[o + j + 1]!;
        c += x * frames[o + j + 2]!;
        d += x * frames[o + j + 3]!;
      }
      s[t] = a;
      s[t + 1] = b;
      s[t + 2] = c;
      s[t + 3] = d;
    }
    for (; j < D; j++, t++) {
      let a = 0;
      for (let o = 0; o < end; o += D) a += frames[o + i]! * frames[o + j]!;
      s[t] = a;
    }
  }
  for (let i = 0; i < COUNT_AT; i++) s[i] = s[i]! * weight;
  s[COUNT_AT] = count * weight;
  return s;
}

/**
 * A voice: mean, the log of its covariance's determinant, and the inverse of the covariance's Cholesky
 * factor (a frame's likelihood is then a triangular product). `weights`: the log-likelihood of frames with
 * statistics s is weights · s (see `fit`).
 */
interface Gaussian {
  mean: Float64Array;
  logDet: number;
  /** L⁻¹, lower, row-major: precision = L⁻ᵀ L⁻¹. */
  inverseFactor: Float64Array;
  weights: Float64Array;
}

/**
 * Cholesky factor (lower, row-major) of a symmetric positive definite matrix, into `l` (every entry on and
 * below the diagonal written); undefined if it is not.
 */
function cholesky(a: Float64Array, l: Float64Array): Float64Array | undefined {
  for (let i = 0; i < D; i++) {
    for (let j = 0; j <= i; j++) {
      let s = a[i * D + j]!;
      for (let k = 0; k < j; k++) s -= l[i * D + k]! * l[j * D + k]!;
      if (i === j) {
        if (!(s > 0)) return undefined;
        l[i * D + i] = Math.sqrt(s);
      } else l[i * D + j] = s / l[j * D + j]!;
    }
  }
  return l;
}

/** Each dimension's least variance in the call's scaled units (set per call by `separate`). */
let varianceFloor = new Float64Array(D);
const LOG_2PI = Math.log(2 * Math.PI);

/** fit's matrices that no voice keeps, reused fit to fit: every entry it reads is written first. */
const fitScratch = {
  cov: new Float64Array(D * D),
  factor: new Float64Array(D * D),
  precision: new Float64Array(D * D),
};

function fit(s: Stats): Gaussian | undefined {
  const n = countOf(s);
  if (n < 2) return undefined;
  const mean = new Float64Array(D);
  for (let i = 0; i < D; i++) mean[i] = s[SUM_AT + i]! / n;
  const { cov, factor, precision } = fitScratch;
  for (let i = 0; i < D; i++)
    for (let j = i; j < D; j++) {
      const c = s[triangleIndex(i, j)]! / n - mean[i]! * mean[j]!;
      cov[i * D + j] = c;
      cov[j * D + i] = c;
    }
  for (let i = 0; i < D; i++) cov[i * D + i] = Math.max(cov[i * D + i]!, 0) + varianceFloor[i]!;
  const l = cholesky(cov, factor);
  if (!l) return undefined;
  let logDet = 0;
  for (let i = 0; i < D; i++) logDet += 2 * Math.log(l[i * D + i]!);
  // The inverse of L, then precision = L⁻ᵀ L⁻¹.
  const inv = lowerInverse(l, D);
  for (let i = 0; i < D; i++)
    for (let j = i; j < D; j++) {
      let s2 = 0;
      for (let k = j; k < D; k++) s2 += inv[k * D + i]! * inv[k * D + j]!;
      precision[i * D + j] = s2;
      precision[j * D + i] = s2;
    }
  // Σ (x - μ)ᵀ P (x - μ) over the frames = tr(P · Q) - 2 (P μ) · s + n μᵀ P μ, Q the sums of products:
  // the upper triangle of P counted twice off the diagonal, once on it.
  const weights = new Float64Array(STATS_LENGTH);
  for (let i = 0, t = 0; i < D; i++)
    for (let j = i; j < D; j++, t++) weights[t] = (i === j ? -0.5 : -1) * precision[i * D + j]!;
  let meanPrecisionMean = 0;
  for (let i = 0; i < D; i++) {
    let s2 = 0;
    for (let j = 0; j < D; j++) s2 += precision[i * D + j]! * mean[j]!;
    weights[SUM_AT + i] = s2;
    meanPrecisionMean += mean[i]! * s2;
  }
  weights[COUNT_AT] = -0.5 * (D * LOG_2PI + logDet + meanPrecisionMean);
  return { mean, logDet, inverseFactor: inv, weights };
}

/** Log-likelihood of frames with statistics `s` under `g`, from the statistics alone. */
function logLikelihood(g: Gaussian, s: Stats): number {
  const w = g.weights;
  let a = 0;
  let b = 0;
  // Two sums, so that the additions do not wait on each other (STATS_LENGTH is odd: the count last).
  for (let i = 0; i < STATS_LENGTH - 1; i += 2) {
    a += w[i]! * s[i]!;
    b += w[i + 1]! * s[i + 1]!;
  }
  return a + b + w[STATS_LENGTH - 1]! * s[STATS_LENGTH - 1]!;
}

/** Log-likelihood of one frame (`x` from `at`) under `g`, without the constant. */
function frameLogLikelihood(g: Gaussian, x: Float64Array, at: number, d: Float64Array): number {
  for (let i = 0; i < D; i++) d[i] = x[at + i]! - g.mean[i]!;
  // (x - μ)ᵀ P (x - μ) = |L⁻¹ (x - μ)|², L⁻¹ lower triangular.
  // Two rows at a time, so that their sums do not wait on each other; each row's terms in order.
  const inv = g.inverseFactor;
  let q = 0;
  let i = 0;
  for (; i + 1 < D; i += 2) {
    let row = 0;
    let next = 0;
    const r0 = i * D;
    const r1 = r0 + D;
    for (let j = 0; j <= i; j++) {
      const dj = d[j]!;
      row += inv[r0 + j]! * dj;
      next += inv[r1 + j]! * dj;
    }
    next += inv[r1 + i + 1]! * d[i + 1]!;
    q += row * row;
    q += next * next;
  }
  for (; i < D; i++) {
    let row = 0;
    for (let j = 0; j <= i; j++) row += inv[i * D + j]! * d[j]!;
    q += row * row;
  }
  return -0.5 * (g.logDet + q);
}

interface Partition {
  k: number;
  /** per unit */
  labels: Int32Array;
  models: Gaussian[];
  logLikelihood: number;
}

/** The statistics of each of the `k` voices: its units' summed in the units' order. */
function pooledBy(units: Stats[], labels: Int32Array, k: number): Stats[] {
  const pooled = Array.from({ length: k }, emptyStats);
  for (let i = 0; i < units.length; i++) addStats(pooled[labels[i]!]!, units[i]!);
  return pooled;
}

/**
 * logLikelihood of `s` under two voices in one pass over it (each voice's sums as logLikelihood makes
 * them), into `out` at `at` and `at + 1`.
 */
function twoLogLikelihoods(g: Gaussian, h: Gaussian, s: Stats, out: Float64Array, at: number): void {
  const w = g.weights;
  const x = h.weights;
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  for (let i = 0; i < STATS_LENGTH - 1; i += 2) {
    const si = s[i]!;
    const sj = s[i + 1]!;
    a += w[i]! * si;
    b += w[i + 1]! * sj;
    c += x[i]! * si;
    d += x[i + 1]! * sj;
  }
  const n = s[STATS_LENGTH - 1]!;
  out[at] = a + b + w[STATS_LENGTH - 1]! * n;
  out[at + 1] = c + d + x[STATS_LENGTH - 1]! * n;
}

/** Each voice's logLikelihood of `s`, into `out` (two voices a pass). */
function logLikelihoods(models: Gaussian[], s: Stats, out: Float64Array): void {
  let v = 0;
  for (; v + 1 < models.length; v += 2) twoLogLikelihoods(models[v]!, models[v + 1]!, s, out, v);
  if (v < models.length) out[v] = logLikelihood(models[v]!, s);
}

/**
 * The voice under which `u` is likeliest, from `label` (kept on a tie), and its log-likelihood there;
 * `scores` is scratch, a slot per voice.
 */
function likeliest(
  models: Gaussian[],
  u: Stats,
  label: number,
  scores: Float64Array,
): { voice: number; ll: number } {
  logLikelihoods(models, u, scores);
  let voice = label;
  let ll = scores[label]!;
  for (let v = 0; v < models.length; v++) {
    if (v === label) continue;
    const other = scores[v]!;
    if (other > ll) {
      ll = other;
      voice = v;
    }
  }
  return { voice, ll };
}

/**
 * Hard EM over whole units from `labels`; undefined when a voice loses its frames. Each step pools the
 * next step's statistics as it assigns the units, in the units' order (the same sums as pooling after),
 * and a step that moves no unit has computed the partition's log-likelihood already.
 */
function refine(units: Stats[], initial: Int32Array, k: number): Partition | undefined {
  const labels = initial.slice();
  let pooled = pooledBy(units, labels, k);
  let models: Gaussian[] = [];
  const scores = new Float64Array(k);
  for (let iteration = 0; iteration <= EM_ITERATIONS; iteration++) {
    if (pooled.some((p) => countOf(p) < MIN_VOICE_FRAMES / 2)) return undefined;
    const fitted = pooled.map(fit);
    if (fitted.some((g) => !g)) return undefined;
    models = fitted as Gaussian[];
    if (iteration === EM_ITERATIONS) break;
    const next = Array.from({ length: k }, emptyStats);
    let changed = 0;
    let total = 0;
    for (let i = 0; i < units.length; i++) {
      const u = units[i]!;
      const { voice, ll } = likeliest(models, u, labels[i]!, scores);
      if (voice !== labels[i]) changed++;
      labels[i] = voice;
      addStats(next[voice]!, u);
      total += ll;
    }
    if (changed === 0) return { k, labels, models, logLikelihood: total };
    pooled = next;
  }
  let total = 0;
  for (let i = 0; i < units.length; i++) total += logLikelihood(models[labels[i]!]!, units[i]!);
  return { k, labels, models, logLikelihood: total };
}

/** Log-likelihood of the frames pooled in `s` under the voice fitted to them; -Infinity when none fits. */
function ownLikelihood(s: Stats): number {
  const g = fit(s);
  return g ? logLikelihood(g, s) : -Infinity;
}

/**
 * Moves single units between voices while a move raises the partition's likelihood with both voices
 * refitted (hard EM moves a unit under the voices as they were, so it stops where a better partition is
 * one refit away), then refines again. At most `sweeps` passes over the units.
 */
function improve(units: Stats[], p: Partition, sweeps: number): Partition {
  const k = p.k;
  const labels = p.labels.slice();
  const pooled = pooledBy(units, labels, k);
  const own = pooled.map(ownLikelihood);
  const counts = new Int32Array(k);
  for (const l of labels) counts[l]!++;
  const minus = emptyStats();
  const plus = emptyStats();
  // Only units nearly as likely under another voice are tried: one far likelier under its own is kept.
  const near = units.map((u, i) => {
    const own = logLikelihood(p.models[p.labels[i]!]!, u);
    let other = -Infinity;
    for (let v = 0; v < k; v++)
      if (v !== p.labels[i]) other = Math.max(other, logLikelihood(p.models[v]!, u));
    return (other - own) / countOf(u) > -IMPROVE_MARGIN;
  });
  let moved = 0;
  for (let sweep = 0; sweep < sweeps; sweep++) {
    let movedNow = 0;
    for (let i = 0; i < units.length; i++) {
      const from = labels[i]!;
      if (counts[from]! <= MIN_VOICE_UTTERANCES || !near[i]) continue;
      const u = units[i]!;
      for (let t = 0; t < STATS_LENGTH; t++) minus[t] = pooled[from]![t]! - u[t]!;
      if (countOf(minus) < MIN_VOICE_FRAMES / 2) continue;
      const fromAfter = ownLikelihood(minus);
      let best = -1;
      let bestDelta = 1e-9;
      let bestAfter = 0;
      for (let to = 0; to < k; to++) {
        if (to === from) continue;
        for (let t = 0; t < STATS_LENGTH; t++) plus[t] = pooled[to]![t]! + u[t]!;
        const toAfter = ownLikelihood(plus);
        const delta = fromAfter + toAfter - own[from]! - own[to]!;
        if (delta > bestDelta) {
          bestDelta = delta;
          best = to;
          bestAfter = toAfter;
        }
      }
      if (best < 0) continue;
      for (let t = 0; t < STATS_LENGTH; t++) {
        pooled[from]![t] = pooled[from]![t]! - u[t]!;
        pooled[best]![t] = pooled[best]![t]! + u[t]!;
      }
      own[from] = fromAfter;
      own[best] = bestAfter;
      counts[from]!--;
      counts[best]!++;
      labels[i] = best;
      movedNow++;
    }
    moved += movedNow;
    if (movedNow === 0) break;
  }
  if (moved === 0) return p;
  const again = refine(units, labels, k);
  return again && again.logLikelihood > p.logLikelihood ? again : p;
}

/**
 * Ways to start splitting `members` in two, from their mean frames: at the median along the direction
 * in which they differ most (principal axis), at the median pitch, and 2-means from the first.
 */
function splitStarts(units: Stats[], members: number[]): Int32Array[] {
  const points = members.map((i) => units[i]!.slice(SUM_AT, COUNT_AT).map((x) => x / countOf(units[i]!)));
  const P = D;
  const weights = members.map((i) => Math.sqrt(countOf(units[i]!)));
  const total = weights.reduce((a, b) => a + b, 0);
  const centre = new Float64Array(P);
  points.forEach((p, i) => {
    for (let d = 0; d < P; d++) centre[d] = centre[d]! + (weights[i]! * p[d]!) / total;
  });
  // The principal axis by power iteration, without forming the covariance.
  let axis = new Float64Array(P).fill(1 / Math.sqrt(P));
  for (let it = 0; it < POWER_ITERATIONS; it++) {
    const next = new Float64Array(P);
    points.forEach((p, i) => {
      let dot = 0;
      for (let d = 0; d < P; d++) dot += (p[d]! - centre[d]!) * axis[d]!;
      const w = weights[i]! * dot;
      for (let d = 0; d < P; d++) next[d] = next[d]! + w * (p[d]! - centre[d]!);
    });
    let norm = 0;
    for (let d = 0; d < P; d++) norm += next[d]! * next[d]!;
    norm = Math.sqrt(norm) || 1;
    axis = next.map((x) => x / norm);
  }
  const byMedian = (value: (p: Float64Array, i: number) => number): Int32Array => {
    const values = points.map(value);
    const order = values.map((_, i) => i).sort((x, y) => values[x]! - values[y]!);
    const labels = new Int32Array(points.length);
    let w = 0;
    for (const i of order) {
      labels[i] = w >= total / 2 ? 1 : 0;
      w += weights[i]!;
    }
    return labels;
  };
  const projection = (p: Float64Array) => {
    let s2 = 0;
    for (let d = 0; d < P; d++) s2 += (p[d]! - centre[d]!) * axis[d]!;
    return s2;
  };
  const principal = byMedian(projection);
  return [principal, byMedian((p) => p[V_PITCH]!), twoMeans(points, weights, principal)];
}

function sameLabels(a: Int32Array, b: Int32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Weighted 2-means of `points` from `labels`. */
function twoMeans(points: Float64Array[], weights: number[], initial: Int32Array): Int32Array {
  const labels = initial.slice();
  const P = points[0]?.length ?? 0;
  const distance = (a: Float64Array, b: Float64Array) => {
    let s2 = 0;
    for (let i = 0; i < P; i++) s2 += (a[i]! - b[i]!) ** 2;
    return s2;
  };
  for (let it = 0; it < KMEANS_ITERATIONS; it++) {
    const centres = [0, 1].map((c) => {
      const centre = new Float64Array(P);
      let w = 0;
      points.forEach((p, i) => {
        if (labels[i] !== c) return;
        w += weights[i]!;
        for (let d = 0; d < P; d++) centre[d] = centre[d]! + weights[i]! * p[d]!;
      });
      return w > 0 ? centre.map((x) => x / w) : centre;
    });
    let changed = false;
    points.forEach((p, i) => {
      const l = distance(p, centres[0]!) <= distance(p, centres[1]!) ? 0 : 1;
      if (l !== labels[i]) changed = true;
      labels[i] = l;
    });
    if (!changed) break;
  }
  return labels;
}

/**
 * The voices of the call: split while a split gains at least SPLIT_GAIN nats per frame of the voice split
 * and leaves each voice enough utterances and frames (see the module comment).
 */
function chooseVoices(units: Stats[], times: Float64Array, maxVoices: number): Partition {
  const all = emptyStats();
  for (const u of units) addStats(all, u);
  const one = fit(all);
  let current: Partition = {
    k: 1,
    labels: new Int32Array(units.length),
    models: one ? [one] : [],
    logLikelihood: one ? logLikelihood(one, all) : 0,
  };
  if (!one) return current;
  // One transfer per call at a second voice's price: once a voice has taken over, more pay in full.
  let takenOver = false;
  while (current.k < maxVoices) {
    const k = current.k + 1;
    const share = k > 2 ? MIN_EXTRA_VOICE_SHARE : MIN_VOICE_SHARE;
    const minFrames = Math.max(MIN_VOICE_FRAMES, share * countOf(all));
    let best: Partition | undefined;
    let bestGain = 0;
    for (let c = 0; c < current.k; c++) {
      const members: number[] = [];
      current.labels.forEach((label, i) => {
        if (label === c) members.push(i);
      });
      if (members.length < 2 * MIN_VOICE_UTTERANCES) continue;
      let parentFrames = 0;
      for (const i of members) parentFrames += countOf(units[i]!);
      const starts = splitStarts(units, members);
      for (const [which, halves] of starts.entries()) {
        // A start that another gave before refines to the same candidate, which cannot gain more.
        if (starts.slice(0, which).some((earlier) => sameLabels(earlier, halves))) continue;
        const labels = current.labels.slice();
        members.forEach((i, j) => {
          if (halves[j] === 1) labels[i] = current.k;
        });
        const candidate = refine(units, labels, k);
        if (!candidate) continue;
        const frames = new Float64Array(k);
        const counts = new Int32Array(k);
        candidate.labels.forEach((label, i) => {
          frames[label] = frames[label]! + countOf(units[i]!);
          counts[label]!++;
        });
        // The gain per frame of the voice split: the rest of the call's frames change little.
        const gain = (candidate.logLikelihood - current.logLikelihood) / parentFrames;
        if (counts.some((n) => n < MIN_VOICE_UTTERANCES) || frames.some((n) => n < minFrames)) continue;
        const smaller = Math.min(counts[c]!, counts[current.k]!);
        const least = takeoverInterleaving(candidate.labels, times, c, current.k);
        const takeover = k > 2 && !takenOver && least <= TAKEOVER_INTERLEAVING;
        const price = k > 2 && !takeover ? CONFERENCE_GAIN : SPLIT_GAIN;
        if (gain < price + SMALL_VOICE_GAIN / smaller) continue;
        if (gain > bestGain) {
          bestGain = gain;
          best = candidate;
        }
      }
    }
    if (!best) break;
    if (best.k > 2) takenOver = true;
    current = best;
  }
  return current;
}

/**
 * How nearly a split takes over from a voice: the least share of utterance pairs out of order between
 * either half of the split voice (`split`, and `added`, the new one) and any other voice or each other. A
 * transfer's voice takes over from another (the customer's voice may hold the agents'), and which half of
 * the split voice gets the new index is the start's choice, so both halves are looked at.
 */
export function takeoverInterleaving(
  labels: Int32Array,
  times: ArrayLike<number>,
  split: number,
  added: number,
): number {
  let least = 0.5;
  for (let v = 0; v < added; v++) {
    least = Math.min(least, interleaving(labels, times, v, added));
    if (v !== split) least = Math.min(least, interleaving(labels, times, v, split));
  }
  return least;
}

/**
 * Every how many voiced frames of each utterance one is analysed (see ANALYSED_SECONDS): the call's step,
 * but never so large that an utterance keeps fewer than KEPT_FRAMES of its frames (a short answer or a
 * backchannel would otherwise lose all of them and be given no voice).
 */
export function analysisSteps(spans: readonly UtteranceSpan[]): number[] {
  let utteranceSeconds = 0;
  for (const span of spans) {
    const seconds = span.end - span.start;
    if (Number.isFinite(seconds) && seconds > 0) utteranceSeconds += seconds;
  }
  const step = Math.max(1, Math.ceil(utteranceSeconds / ANALYSED_SECONDS));
  return spans.map((span) => {
    const frames = (span.end - span.start) / VOICED_HOP_SECONDS;
    return Number.isFinite(frames) ? Math.max(1, Math.min(step, Math.floor(frames / KEPT_FRAMES))) : 1;
  });
}

/**
 * Separates the utterances of one track into voices (see the module comment). Never throws: odd input
 * gives 0 or 1 voices and a reason.
 */
export function separateVoices(
  audio: AudioReader,
  spans: readonly UtteranceSpan[],
  options: { maxVoices?: number } = {},
): SeparationResult {
  return timedSeparation(spans, () => {
    const voiced = separate(audio, spans, options);
    if (voiced) return voiced;
    const { cpuMs: _cpuMs, ...byLine } = separateByLine(audio, spans, options);
    const note = 'no voice to follow (tones or noise only): told apart by the line';
    return { ...byLine, reason: byLine.reason ? `${note}; ${byLine.reason}` : note };
  });
}

/**
 * Centres the call's voiced frames on their mean and scales each dimension by its spread over them (in
 * place); returns the spreads. Each dimension's sums run over the frames in order, in a local.
 */
function centreAndScale(frames: readonly VoicedFrames[]): Float64Array {
  const mean = new Float64Array(D);
  const squares = new Float64Array(D);
  let total = 0;
  for (const f of frames) total += f.count;
  for (let d = 0; d < D; d++) {
    let sum = 0;
    for (const f of frames) for (let o = d, x = f.features, end = f.count * D; o < end; o += D) sum += x[o]!;
    const m = sum / total;
    let sq = 0;
    for (const f of frames)
      for (let o = d, x = f.features, end = f.count * D; o < end; o += D) sq += (x[o]! - m) ** 2;
    mean[d] = m;
    squares[d] = sq;
  }
  const scale = squares.map((sq) => Math.sqrt(sq / total) || 1);
  for (const f of frames) {
    const x = f.features;
    for (let o = 0; o < f.count * D; o += D)
      for (let d = 0; d < D; d++) x[o + d] = (x[o + d]! - mean[d]!) / scale[d]!;
  }
  return scale;
}

/** The separation by voice, or undefined when the call holds no voices to follow. */
function separate(
  audio: AudioReader,
  spans: readonly UtteranceSpan[],
  options: { maxVoices?: number },
): Omit<SeparationResult, 'cpuMs'> | undefined {
  const maxVoices = maxVoicesOf(options);
  const nothing = (reason: string) => noVoices(spans, reason);
  const unusable = unseparable(audio, spans);
  if (unusable) return nothing(unusable);
  const analyzer = analyzerFor(Math.round(audio.sampleRate));
  const steps = analysisSteps(spans);
  const frames: VoicedFrames[] = spans.map((span, u) => voicedFrames(audio, span, analyzer, steps[u]));
  const audible = frames.filter((f) => f.audible > 0).length;
  if (audible === 0) return undefined;
  const voicedUtterances = frames.filter((f, u) => f.count * steps[u]! >= VOICED_UTTERANCE_FRAMES).length;
  if (voicedUtterances < VOICED_CALL_SHARE * audible || voicedUtterances < 2) return undefined;

  const scale = centreAndScale(frames);
  varianceFloor = scale.map((sd, d) => ((d === V_PITCH ? MIN_SPREAD_PITCH : MIN_SPREAD_CEPSTRUM) / sd) ** 2);

  const stats = frames.map((f, u) => statsOf(f.features, f.count, steps[u]!));
  const basis = stats.map((_, i) => i).filter((i) => countOf(stats[i]!) >= BASIS_FRAMES);
  const basisStats = basis.map((i) => stats[i]!);
  const counted = chooseVoices(
    basisStats,
    Float64Array.from(basis, (i) => spans[i]!.start),
    maxVoices,
  );
  // The count is decided; single moves with the voices refitted then place the deciding utterances.
  const chosen = counted.k > 1 ? improve(basisStats, counted, IMPROVE_SWEEPS) : counted;
  const k = chosen.models.length;

  const assignments: VoiceAssignment[] = unassigned(spans);
  let unclear = 0;
  let silent = 0;
  for (let u = 0; u < spans.length; u++) {
    const s = stats[u]!;
    if (countOf(s) === 0) {
      silent++;
      continue;
    }
    const scores = chosen.models.map((g) => logLikelihood(g, s));
    let best = 0;
    for (let v = 1; v < k; v++) if (scores[v]! > scores[best]!) best = v;
    let second = -Infinity;
    for (let v = 0; v < k; v++) if (v !== best) second = Math.max(second, scores[v]!);
    const weight = Math.min(1, CONFIDENT_FRAMES / countOf(s));
    const confidence = k > 1 ? 1 / (1 + Math.exp(-weight * (scores[best]! - second))) : 1;
    const accept = confidence >= MIN_CONFIDENCE;
    if (!accept) unclear++;
    assignments[u] = { voice: accept ? best : null, confidence: roundThousandths(confidence), joined: false };
  }

  let joined = 0;
  if (k > 1) joined = markJoined(frames, chosen.models, assignments, steps);

  const voices = numberVoicesAsHeard(assignments, spans, k);

  const notes: string[] = [];
  if (voices === 1) notes.push('one voice: the utterances do not fall into distinct voices');
  if (voices > 2) notes.push(`${voices} voices: more than two people speak (a transfer or a conference)`);
  if (silent > 0) notes.push(`${silent} utterance${silent > 1 ? 's hold' : ' holds'} no voiced sound`);
  if (unclear > 0) notes.push(`${unclear} between voices`);
  return { voices, assignments, joined, ...(notes.length ? { reason: notes.join('; ') } : {}) };
}

/**
 * Marks the utterances in which a run of frames clearly belongs to another voice than the utterance's;
 * the voice holding most frames becomes its voice. Returns how many were marked.
 */
function markJoined(
  frames: VoicedFrames[],
  models: Gaussian[],
  assignments: VoiceAssignment[],
  steps: readonly number[],
): number {
  const k = models.length;

  const scratch = new Float64Array(D);
  let joined = 0;
  frames.forEach((f, u) => {
    const own = assignments[u]!.voice;
    const windowFrames = Math.max(2, Math.ceil(JOIN_WINDOW_FRAMES / steps[u]!));
    if (own === null || f.count < 2 * windowFrames) return;
    const ll = new Float64Array(f.count * k);
    const votes = new Int32Array(k);
    for (let i = 0; i < f.count; i++) {
      let best = 0;
      for (let v = 0; v < k; v++) {
        ll[i * k + v] = frameLogLikelihood(models[v]!, f.features, i * D, scratch);
        if (ll[i * k + v]! > ll[i * k + best]!) best = v;
      }
      votes[best]!++;
    }
    let other = -1;
    for (let v = 0; v < k && other < 0; v++) {
      if (v === own) continue;
      let window = 0;
      for (let i = 0; i < f.count; i++) {
        window += ll[i * k + v]! - ll[i * k + own]!;
        if (i >= windowFrames) window -= ll[(i - windowFrames) * k + v]! - ll[(i - windowFrames) * k + own]!;
        if (i >= windowFrames - 1 && window / windowFrames >= JOIN_MIN_LLR) {
          other = v;
          break;
        }
      }
    }
    if (other < 0) return;
    joined++;
    const majority = votes[other]! > votes[own]! ? other : own;
    assignments[u] = { ...assignments[u]!, voice: majority, joined: true };
  });
  return joined;
}
