/**
 * Separates the utterances of a one-track call into voices by a speaker-embedding model (the GE2E encoder,
 * ge2e-encoder.ts): each utterance's middle 1.6 s of voice (ge2e-features.ts) gives one embedding, and
 * voices are clusters of embeddings by cosine similarity.
 *
 * 1. Utterances with enough voice (BASIS_FRAMES) decide the voices. Starting from one voice, each step
 *    splits the voice whose two halves (spherical 2-means, utterances weighted by their voice) are least
 *    alike, and keeps the split when the halves' mean embeddings are less alike than SPLIT_SIMILARITY and
 *    each half is a voice (MIN_VOICE_UTTERANCES, MIN_VOICE_SHARE): a threshold on how alike two voices
 *    are, not on how much they explain, so the count does not depend on the call's length. After each
 *    split the voices are refined by k-means over every deciding utterance.
 * 2. Every utterance with an embedding is given the most alike voice; its confidence grows with the margin
 *    over the second most alike. Utterances without voiced sound stay unassigned.
 *
 * A call without voices to embed (DTMF-only: too few utterances hold voiced sound) is left to the
 * voice-feature method (voice-separation.ts), which hands it on to the line method.
 */
import {
  maxVoicesOf,
  noVoices,
  numberVoicesAsHeard,
  timedSeparation,
  unassigned,
  unseparable,
  type SeparationResult,
  type VoiceAssignment,
} from './line-separation.ts';
import { embedSequences, GE2E_EMBEDDING, type Ge2eEncoder } from './ge2e-encoder.ts';
import { utteranceMels } from './ge2e-features.ts';
import { analyzerFor, type AudioReader, type UtteranceSpan } from './voice-features.ts';
import { separateVoices } from './voice-separation.ts';

const E = GE2E_EMBEDDING;
/** Mel frames (10 ms) an utterance needs for an embedding at all, and to decide the voices. */
const MIN_FRAMES = 25;
const BASIS_FRAMES = 80;
/** A call whose utterances hold voices: at least this share of them has an embedding. */
const VOICED_CALL_SHARE = 0.5;
/** Two halves whose mean embeddings are less alike than this (cosine) are two voices. */
const SPLIT_SIMILARITY = 0.85;
/** A voice holds at least this many deciding utterances and this share of the deciding voice. */
const MIN_VOICE_UTTERANCES = 3;
const MIN_VOICE_SHARE = 0.04;
const KMEANS_ITERATIONS = 10;
/** Confidence = logistic(CONFIDENCE_SLOPE × (best − second similarity)). */
const CONFIDENCE_SLOPE = 5;
const MIN_CONFIDENCE = 0.6;
/** Utterances embedded per batch: bounds the LSTM's memory (frames × 256 floats per layer). */
const BATCH = 48;

export interface EmbeddingOptions {
  maxVoices?: number;
  /** Each split looked at: the similarity of its halves and whether it was kept (the benchmark's tuning). */
  onSplit?: (similarity: number, kept: boolean) => void;
  /** The utterances' embeddings (undefined: too little voice) and their mel frames (the benchmark's dump). */
  onEmbeddings?: (embeddings: readonly (Float32Array | undefined)[], frames: readonly number[]) => void;
}

/** Embeddings of the utterances (undefined: too little voice), in batches. */
function utteranceEmbeddings(
  encoder: Ge2eEncoder,
  audio: AudioReader,
  spans: readonly UtteranceSpan[],
): { embeddings: (Float32Array | undefined)[]; frames: number[] } {
  const analyzer = analyzerFor(Math.round(audio.sampleRate));
  const inputs = spans.map((span) => utteranceMels(audio, span, analyzer));
  const frames = inputs.map((m) => m?.frames ?? 0);
  const embeddings: (Float32Array | undefined)[] = spans.map(() => undefined);
  const wanted = inputs.flatMap((m, u) => (m && m.frames >= MIN_FRAMES ? [u] : []));
  for (let i = 0; i < wanted.length; i += BATCH) {
    const batch = wanted.slice(i, i + BATCH);
    const out = embedSequences(
      encoder,
      batch.map((u) => inputs[u]!.mels),
    );
    batch.forEach((u, j) => (embeddings[u] = out[j]));
  }
  return { embeddings, frames };
}

function dot(a: Float32Array | Float64Array, b: Float32Array | Float64Array): number {
  let s = 0;
  for (let i = 0; i < E; i++) s += a[i]! * b[i]!;
  return s;
}

/** The unit-length weighted mean of `members`' embeddings. */
function centroid(points: Float32Array[], weights: number[], members: readonly number[]): Float64Array {
  const c = new Float64Array(E);
  for (const m of members) for (let i = 0; i < E; i++) c[i] = c[i]! + weights[m]! * points[m]![i]!;
  const norm = Math.sqrt(dot(c, c)) || 1;
  for (let i = 0; i < E; i++) c[i] = c[i]! / norm;
  return c;
}

/** k-means on the unit sphere from `labels`, in place; returns the centroids. */
function sphericalKMeans(
  points: Float32Array[],
  weights: number[],
  labels: Int32Array,
  k: number,
): Float64Array[] {
  let centroids: Float64Array[] = [];
  for (let it = 0; it < KMEANS_ITERATIONS; it++) {
    centroids = Array.from({ length: k }, (_, v) =>
      centroid(
        points,
        weights,
        points.map((_, i) => i).filter((i) => labels[i] === v),
      ),
    );
    let moved = false;
    points.forEach((p, i) => {
      let best = labels[i]!;
      for (let v = 0; v < k; v++) if (dot(p, centroids[v]!) > dot(p, centroids[best]!)) best = v;
      if (best !== labels[i]) {
        labels[i] = best;
        moved = true;
      }
    });
    if (!moved) break;
  }
  return centroids;
}

/** The best split of `members` in two (2-means seeded by the least typical member and its opposite). */
function splitOf(points: Float32Array[], weights: number[], members: number[]): number[][] {
  const mean = centroid(points, weights, members);
  let a = members[0]!;
  for (const m of members) if (dot(points[m]!, mean) < dot(points[a]!, mean)) a = m;
  let b = members[0]!;
  for (const m of members) if (dot(points[m]!, points[a]!) < dot(points[b]!, points[a]!)) b = m;
  const labels = Int32Array.from(members, (m) =>
    dot(points[m]!, points[a]!) >= dot(points[m]!, points[b]!) ? 0 : 1,
  );
  sphericalKMeans(
    members.map((m) => points[m]!),
    members.map((m) => weights[m]!),
    labels,
    2,
  );
  return [0, 1].map((v) => members.filter((_, i) => labels[i] === v));
}

/**
 * The voices of the deciding utterances (see the module comment): clustered on `centred` (embeddings less
 * the call's mean, unit length: what all the call's utterances share, the line and the language, out), the
 * split judged on `raw` (how alike the halves' voices are, as the encoder measures).
 */
function chooseVoices(
  raw: Float32Array[],
  centred: Float32Array[],
  weights: number[],
  maxVoices: number,
  options: EmbeddingOptions,
): Float64Array[] {
  const all = centred.map((_, i) => i);
  const labels = new Int32Array(centred.length);
  let centroids = [centroid(centred, weights, all)];
  const total = weights.reduce((a, b) => a + b, 0);
  const isVoice = (members: number[]) =>
    members.length >= MIN_VOICE_UTTERANCES &&
    members.reduce((a, m) => a + weights[m]!, 0) >= MIN_VOICE_SHARE * total;
  while (centroids.length < maxVoices) {
    let best: { halves: number[][]; similarity: number } | undefined;
    for (let v = 0; v < centroids.length; v++) {
      const members = all.filter((i) => labels[i] === v);
      if (members.length < 2 * MIN_VOICE_UTTERANCES) continue;
      const halves = splitOf(centred, weights, members);
      if (!halves.every(isVoice)) continue;
      const similarity = dot(centroid(raw, weights, halves[0]!), centroid(raw, weights, halves[1]!));
      if (!best || similarity < best.similarity) best = { halves, similarity };
    }
    if (!best) break;
    const kept = best.similarity < SPLIT_SIMILARITY;
    options.onSplit?.(best.similarity, kept);
    if (!kept) break;
    const k = centroids.length + 1;
    for (const m of best.halves[1]!) labels[m] = k - 1;
    centroids = sphericalKMeans(centred, weights, labels, k);
  }
  return centroids;
}

/** Unit-length `embeddings` less their `weights`-weighted mean. */
function centredOn(embeddings: Float32Array[], weights: number[]): Float32Array[] {
  const mean = new Float64Array(E);
  let total = 0;
  embeddings.forEach((e, i) => {
    total += weights[i]!;
    for (let j = 0; j < E; j++) mean[j] = mean[j]! + weights[i]! * e[j]!;
  });
  return embeddings.map((e) => {
    const c = new Float32Array(E);
    let norm = 0;
    for (let j = 0; j < E; j++) {
      c[j] = e[j]! - mean[j]! / total;
      norm += c[j]! ** 2;
    }
    norm = Math.sqrt(norm) || 1;
    for (let j = 0; j < E; j++) c[j] = c[j]! / norm;
    return c;
  });
}

/**
 * Voices from the utterances' embeddings (undefined: too little voice) and their mel frames: the
 * clustering half of the separation (see the module comment), or undefined when too few utterances have
 * an embedding for the call to hold voices.
 */
export function clusterEmbeddings(
  embeddings: readonly (Float32Array | undefined)[],
  frames: readonly number[],
  spans: readonly UtteranceSpan[],
  options: EmbeddingOptions = {},
): Omit<SeparationResult, 'cpuMs'> | undefined {
  const embedded = embeddings.flatMap((e, u) => (e ? [u] : []));
  if (embedded.length < 2 || embedded.length < VOICED_CALL_SHARE * spans.length) return undefined;
  const centred = centredOn(
    embedded.map((u) => embeddings[u]!),
    embedded.map((u) => frames[u]!),
  );
  const centredOf = new Map(embedded.map((u, i) => [u, centred[i]!]));
  const basis = embedded.filter((u) => frames[u]! >= BASIS_FRAMES);
  const deciding = basis.length >= 2 ? basis : embedded;
  const centroids = chooseVoices(
    deciding.map((u) => embeddings[u]!),
    deciding.map((u) => centredOf.get(u)!),
    deciding.map((u) => frames[u]!),
    maxVoicesOf(options),
    options,
  );
  const k = centroids.length;
  const assignments: VoiceAssignment[] = unassigned(spans);
  let unclear = 0;
  for (const u of embedded) {
    const scores = centroids.map((c) => dot(centredOf.get(u)!, c));
    let best = 0;
    for (let v = 1; v < k; v++) if (scores[v]! > scores[best]!) best = v;
    let second = -Infinity;
    for (let v = 0; v < k; v++) if (v !== best) second = Math.max(second, scores[v]!);
    const confidence = k > 1 ? 1 / (1 + Math.exp(-CONFIDENCE_SLOPE * (scores[best]! - second))) : 1;
    const accept = confidence >= MIN_CONFIDENCE;
    if (!accept) unclear++;
    assignments[u] = {
      voice: accept ? best : null,
      confidence: Math.round(confidence * 1000) / 1000,
      joined: false,
    };
  }
  const voices = numberVoicesAsHeard(assignments, spans, k);
  const notes: string[] = [];
  if (voices === 1) notes.push('one voice: the utterances do not fall into distinct voices');
  if (voices > 2) notes.push(`${voices} voices: more than two people speak (a transfer or a conference)`);
  const silent = spans.length - embedded.length;
  if (silent > 0)
    notes.push(`${silent} utterance${silent > 1 ? 's hold' : ' holds'} too little voiced sound`);
  if (unclear > 0) notes.push(`${unclear} between voices`);
  return { voices, assignments, joined: 0, ...(notes.length ? { reason: notes.join('; ') } : {}) };
}

/** The separation by embeddings, or undefined when the call holds too little voice to embed. */
function separate(
  encoder: Ge2eEncoder,
  audio: AudioReader,
  spans: readonly UtteranceSpan[],
  options: EmbeddingOptions,
): Omit<SeparationResult, 'cpuMs'> | undefined {
  const unusable = unseparable(audio, spans);
  if (unusable) return noVoices(spans, unusable);
  const { embeddings, frames } = utteranceEmbeddings(encoder, audio, spans);
  options.onEmbeddings?.(embeddings, frames);
  return clusterEmbeddings(embeddings, frames, spans, options);
}

/**
 * Separates the utterances of one track into voices by the speaker-embedding model (see the module
 * comment); a call without voices to embed goes to the voice-feature method. Never throws.
 */
export function separateByEmbedding(
  encoder: Ge2eEncoder,
  audio: AudioReader,
  spans: readonly UtteranceSpan[],
  options: EmbeddingOptions = {},
): SeparationResult {
  let handedOn = false;
  const result = timedSeparation(spans, () => {
    const found = separate(encoder, audio, spans, options);
    if (found) return found;
    handedOn = true;
    return noVoices(spans, 'handed on');
  });
  if (!handedOn) return result;
  const features = separateVoices(audio, spans, options);
  return { ...features, cpuMs: features.cpuMs + result.cpuMs };
}
