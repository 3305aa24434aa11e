/**
 * Whether what stays with a voice from one utterance to the next tells the closest same-sex pairs apart
 * (issue 36, thirteenth round; bench/README.md): per utterance, a vocal-tract warp factor α (as VTLN
 * estimates it in speech recognition) and the median pitch, on the development split only. Offline: no
 * separator change, no verdict.
 *
 *   node scripts/on-node.mjs ts bench/speakers-warp.ts                      # every speech call of dev
 *   node scripts/on-node.mjs ts bench/speakers-warp.ts --only two-21,two-22
 *
 * Each call is staged as the pipeline stages it and its voiced frames found as the separator finds them
 * (voice-features.ts voicedFrames, every frame); each voiced frame's power spectrum is read again through
 * the separator's mel bank with its edges warped by α (0.90–1.10 in steps of 0.01, piecewise linear, the
 * top edge fixed), giving mel cepstra c1–c12 per α from the same spectrum. α per utterance, three ways:
 *
 * - envelope: the α under which the utterance's mean cepstrum comes nearest the set's (each dimension
 *   over its spread), the set's mean taken again at the utterances' α, three times;
 * - mixture: the α under which a mixture of 8 diagonal Gaussians fitted to the set's frames likes the
 *   utterance's frames best, the mixture fitted again at the utterances' α, twice (VTLN's training);
 * - cepstral: as `envelope`, the warp applied to the utterance's mean cepstrum as a linear map (the
 *   24-band envelope interpolated at α f), so that no frame is read again (what a cheap version would do).
 *
 * Sets: each two-voice speech call (its two voices), and as one voice each voice of the two-voice calls
 * and transfers alone (the spans only it speaks in) and the one-voice calls; the utterances with 0.75 s of
 * voice or more (those that decide the voices), sets of 8 or more. Printed per set and trait: each voice's
 * mean and spread, the voices' d′ (their means apart over their pooled spread), and the count's test: the
 * best split of the set's utterances by the trait (at least 4 a side; two traits: 2-means on them scaled),
 * its halves' distance in their pooled spread (Mahalanobis) and, for the pairs, the share of utterances it
 * puts right. A rule that counts voices by a trait needs the pairs' split distance above every one-voice
 * set's; the summary says how many one-voice sets reach the closest pairs'.
 */
import { parseArgs } from 'node:util';
import { stagedAudioReader } from '../activities/speakers/speakers-activities.ts';
import { analyzerFor, voicedFrames, VOICED_DIMS, V_PITCH } from '../activities/speakers/voice-features.ts';
import { makeRealFft, powerSpectrum } from '../activities/speakers/real-fft.ts';
import { BASIS_FRAMES } from '../activities/speakers/voice-separation.ts';
import { speakerCorpus, type CorpusCall } from './lib/speaker-corpus.ts';
import { stagedTrack } from './lib/staged-track.ts';

const { values } = parseArgs({ options: { only: { type: 'string' } } });

const RATE = 8000;
const N = 256;
const BINS = N / 2 + 1;
/** The separator's mel bank (voice-features.ts): 24 bands from 150 to 3,700 Hz, cepstra c1..c12. */
const BANDS = 24;
const CEPSTRA = 12;
const LOW_HZ = 150;
const HIGH_HZ = 3700;
const ALPHAS = Array.from({ length: 21 }, (_, i) => 0.9 + i * 0.01);
const UNWARPED = 10;
const MIN_SET = 8;
const MIN_SIDE = 4;
const MIXTURE = 8;

const mel = (hz: number) => 2595 * Math.log10(1 + hz / 700);
const hzOfMel = (m: number) => 700 * (10 ** (m / 2595) - 1);
const edges = Array.from({ length: BANDS + 2 }, (_, i) =>
  hzOfMel(mel(LOW_HZ) + ((mel(HIGH_HZ) - mel(LOW_HZ)) * i) / (BANDS + 1)),
);
/** f → α f up to a cut, then linearly to the top edge, which stays (the band ends where the line does). */
function warp(f: number, alpha: number): number {
  const cut = (0.8 * HIGH_HZ) / Math.max(1, alpha);
  return f <= cut ? alpha * f : alpha * cut + ((HIGH_HZ - alpha * cut) * (f - cut)) / (HIGH_HZ - cut);
}
/** Per α: BANDS rows of BINS triangle weights. */
const banks = ALPHAS.map((alpha) => {
  const e = edges.map((f) => warp(f, alpha));
  const w = new Float64Array(BANDS * BINS);
  for (let m = 0; m < BANDS; m++)
    for (let k = 1; k < BINS; k++) {
      const f = (k * RATE) / N;
      const [lo, mid, hi] = [e[m]!, e[m + 1]!, e[m + 2]!];
      w[m * BINS + k] =
        f > lo && f <= mid ? (f - lo) / (mid - lo) : f > mid && f < hi ? (hi - f) / (hi - mid) : 0;
    }
  return w;
});
const dct = new Float64Array(CEPSTRA * BANDS);
for (let c = 0; c < CEPSTRA; c++)
  for (let m = 0; m < BANDS; m++)
    dct[c * BANDS + m] = Math.cos((Math.PI * (c + 1) * (m + 0.5)) / BANDS) * Math.sqrt(2 / BANDS);
/** Per α: the 12 × 12 map of an envelope's cepstra to those of the envelope read at α f (`cepstral`). */
const cepstralWarps = ALPHAS.map((alpha) => {
  const centres = edges.slice(1, BANDS + 1);
  const interpolate = new Float64Array(BANDS * BANDS);
  for (let m = 0; m < BANDS; m++) {
    const f = warp(centres[m]!, alpha);
    let j = 0;
    while (j < BANDS - 2 && centres[j + 1]! < f) j++;
    const t = Math.max(0, Math.min(1, (f - centres[j]!) / (centres[j + 1]! - centres[j]!)));
    interpolate[m * BANDS + j] = interpolate[m * BANDS + j]! + 1 - t;
    interpolate[m * BANDS + j + 1] = interpolate[m * BANDS + j + 1]! + t;
  }
  const map = new Float64Array(CEPSTRA * CEPSTRA);
  for (let c = 0; c < CEPSTRA; c++)
    for (let d = 0; d < CEPSTRA; d++) {
      let s = 0;
      for (let m = 0; m < BANDS; m++) {
        let e = 0;
        for (let j = 0; j < BANDS; j++) e += interpolate[m * BANDS + j]! * dct[d * BANDS + j]!;
        s += dct[c * BANDS + m]! * e;
      }
      map[c * CEPSTRA + d] = s;
    }
  return map;
});

interface Utterance {
  speaker: number;
  /** only its speaker is heard in the span */
  alone: boolean;
  /** semitones above 100 Hz */
  pitch: number;
  frames: number;
  /** per α: frames × CEPSTRA */
  cepstra: Float64Array[];
}

function utterancesOf(call: CorpusCall, bytes: Uint8Array): Utterance[] {
  const reader = stagedAudioReader([{ start: 0, bytes }]);
  const analyzer = analyzerFor(RATE);
  const fft = makeRealFft(N);
  const window = Float64Array.from(
    { length: N },
    (_, i) => 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (N - 1)),
  );
  const frame = new Float64Array(N);
  const power = new Float64Array(BINS);
  const logMel = new Float64Array(BANDS);
  return call.spans.map((span) => {
    const voiced = voicedFrames(reader, span, analyzer, 1);
    const pitches: number[] = [];
    const cepstra = ALPHAS.map(() => new Float64Array(voiced.count * CEPSTRA));
    for (let i = 0; i < voiced.count; i++) {
      pitches.push(12 * voiced.features[i * VOICED_DIMS + V_PITCH]!);
      const t = voiced.times[i]!;
      const x = reader.read(t - N / RATE / 2, t + N / RATE / 2);
      let mean = 0;
      for (let j = 0; j < N; j++) mean += (x[j] ?? 0) / N;
      for (let j = 0; j < N; j++) frame[j] = ((x[j] ?? 0) - mean) * window[j]!;
      powerSpectrum(fft, frame, power);
      banks.forEach((w, a) => {
        for (let m = 0; m < BANDS; m++) {
          let e = 1e-10;
          for (let k = 1; k < BINS; k++) e += w[m * BINS + k]! * power[k]!;
          logMel[m] = Math.log(e);
        }
        for (let c = 0; c < CEPSTRA; c++) {
          let s = 0;
          for (let m = 0; m < BANDS; m++) s += dct[c * BANDS + m]! * logMel[m]!;
          cepstra[a]![i * CEPSTRA + c] = s;
        }
      });
    }
    pitches.sort((p, q) => p - q);
    return {
      speaker: span.speaker,
      alone: Object.values(span.seconds).filter((s) => s > 0.05).length === 1,
      pitch: pitches[Math.floor(pitches.length / 2)] ?? Number.NaN,
      frames: voiced.count,
      cepstra,
    };
  });
}

/** Each cepstrum's mean and variance over `rows` (CEPSTRA values each). */
function moments(rows: Float64Array[]): { mean: Float64Array; variance: Float64Array } {
  const mean = new Float64Array(CEPSTRA);
  const variance = new Float64Array(CEPSTRA);
  for (const r of rows) for (let c = 0; c < CEPSTRA; c++) mean[c] = mean[c]! + r[c]! / rows.length;
  for (const r of rows)
    for (let c = 0; c < CEPSTRA; c++) variance[c] = variance[c]! + (r[c]! - mean[c]!) ** 2 / rows.length;
  for (let c = 0; c < CEPSTRA; c++) variance[c] = variance[c]! + 1e-6;
  return { mean, variance };
}

/** The utterances' frames, each read at its α; every `every`-th. */
function framesAt(set: Utterance[], at: number[], every = 1): Float64Array[] {
  const rows: Float64Array[] = [];
  set.forEach((u, i) => {
    const x = u.cepstra[at[i]!]!;
    for (let f = 0; f < u.frames; f += every) rows.push(x.subarray(f * CEPSTRA, (f + 1) * CEPSTRA));
  });
  return rows;
}

/** The α index nearest `target` per utterance, from each utterance's mean cepstrum per α. */
function nearestWarps(means: Float64Array[][], target: Float64Array, variance: Float64Array): number[] {
  return means.map((perAlpha) => {
    let best = UNWARPED;
    let bestDistance = Infinity;
    perAlpha.forEach((m, a) => {
      let d = 0;
      for (let c = 0; c < CEPSTRA; c++) d += (m[c]! - target[c]!) ** 2 / variance[c]!;
      if (d < bestDistance) [bestDistance, best] = [d, a];
    });
    return best;
  });
}

/** `envelope` (the frames read at each α) or `cepstral` (the unwarped mean mapped): see the module comment. */
function envelopeWarps(set: Utterance[], cepstral: boolean): number[] {
  const meanOf = (x: Float64Array, frames: number) => {
    const m = new Float64Array(CEPSTRA);
    for (let f = 0; f < frames; f++)
      for (let c = 0; c < CEPSTRA; c++) m[c] = m[c]! + x[f * CEPSTRA + c]! / frames;
    return m;
  };
  const means = set.map((u) => {
    if (!cepstral) return u.cepstra.map((x) => meanOf(x, u.frames));
    const m = meanOf(u.cepstra[UNWARPED]!, u.frames);
    return cepstralWarps.map((map) =>
      Float64Array.from({ length: CEPSTRA }, (_, c) => {
        let s = 0;
        for (let d = 0; d < CEPSTRA; d++) s += map[c * CEPSTRA + d]! * m[d]!;
        return s;
      }),
    );
  });
  const { variance } = moments(
    framesAt(
      set,
      set.map(() => UNWARPED),
    ),
  );
  let at = set.map(() => UNWARPED);
  for (let pass = 0; pass < 3; pass++) {
    const target = new Float64Array(CEPSTRA);
    let frames = 0;
    set.forEach((u, i) => {
      for (let c = 0; c < CEPSTRA; c++) target[c] = target[c]! + means[i]![at[i]!]![c]! * u.frames;
      frames += u.frames;
    });
    for (let c = 0; c < CEPSTRA; c++) target[c] = target[c]! / frames;
    at = nearestWarps(means, target, variance);
  }
  return at.map((a) => ALPHAS[a]!);
}

interface Mixture {
  weights: number[];
  means: Float64Array[];
  variances: Float64Array[];
}

function componentLogs(g: Mixture, x: Float64Array, o: number): number[] {
  return g.weights.map((w, m) => {
    let q = Math.log(w);
    for (let c = 0; c < CEPSTRA; c++)
      q -=
        0.5 *
        (Math.log(2 * Math.PI * g.variances[m]![c]!) +
          (x[o + c]! - g.means[m]![c]!) ** 2 / g.variances[m]![c]!);
    return q;
  });
}

function frameLogLikelihood(g: Mixture, x: Float64Array, o: number): number {
  const logs = componentLogs(g, x, o);
  const top = Math.max(...logs);
  return top + Math.log(logs.reduce((s, q) => s + Math.exp(q - top), 0));
}

/** EM on `rows` (every second frame), from frames spread through them; variances floored at 5 % of the set's. */
function fitMixture(rows: Float64Array[]): Mixture {
  const overall = moments(rows);
  let g: Mixture = {
    weights: Array<number>(MIXTURE).fill(1 / MIXTURE),
    means: Array.from({ length: MIXTURE }, (_, m) =>
      Float64Array.from(rows[Math.floor(((m + 0.5) * rows.length) / MIXTURE)]!),
    ),
    variances: Array.from({ length: MIXTURE }, () => Float64Array.from(overall.variance)),
  };
  for (let pass = 0; pass < 12; pass++) {
    const w = new Float64Array(MIXTURE);
    const s = Array.from({ length: MIXTURE }, () => new Float64Array(CEPSTRA));
    const q = Array.from({ length: MIXTURE }, () => new Float64Array(CEPSTRA));
    for (const r of rows) {
      const logs = componentLogs(g, r, 0);
      const top = Math.max(...logs);
      const p = logs.map((l) => Math.exp(l - top));
      const z = p.reduce((a, b) => a + b, 0);
      p.forEach((pm, m) => {
        w[m] = w[m]! + pm / z;
        for (let c = 0; c < CEPSTRA; c++) {
          s[m]![c] = s[m]![c]! + (pm / z) * r[c]!;
          q[m]![c] = q[m]![c]! + (pm / z) * r[c]! ** 2;
        }
      });
    }
    g = {
      weights: Array.from(w, (x) => Math.max(x, 1e-3) / rows.length),
      means: s.map((sm, m) => sm.map((x) => x / Math.max(w[m]!, 1e-9))),
      variances: q.map((qm, m) =>
        qm.map((x, c) =>
          Math.max(
            x / Math.max(w[m]!, 1e-9) - (s[m]![c]! / Math.max(w[m]!, 1e-9)) ** 2,
            0.05 * overall.variance[c]!,
          ),
        ),
      ),
    };
  }
  return g;
}

function mixtureWarps(set: Utterance[]): number[] {
  let at = set.map(() => UNWARPED);
  for (let pass = 0; pass < 2; pass++) {
    const g = fitMixture(framesAt(set, at, 2));
    at = set.map((u) => {
      let best = UNWARPED;
      let bestLl = -Infinity;
      u.cepstra.forEach((x, a) => {
        let ll = 0;
        for (let f = 0; f < u.frames; f++) ll += frameLogLikelihood(g, x, f * CEPSTRA);
        if (ll > bestLl) [bestLl, best] = [ll, a];
      });
      return best;
    });
  }
  return at.map((a) => ALPHAS[a]!);
}

const mean = (x: number[]) => x.reduce((a, b) => a + b, 0) / Math.max(1, x.length);
const spread = (x: number[]) =>
  Math.sqrt(x.reduce((a, b) => a + (b - mean(x)) ** 2, 0) / Math.max(1, x.length - 1));

/**
 * The halves' distance in their pooled spread (Mahalanobis, 1 or 2 traits), points as rows; each trait's
 * spread at least `floors` (α is read on a grid: a half all on one step has the step's own spread).
 */
function halvesDistance(points: number[][], labels: number[], floors: number[]): number {
  const dims = points[0]!.length;
  const halves = [0, 1].map((l) => points.filter((_, i) => labels[i] === l));
  const centres = halves.map((h) => Array.from({ length: dims }, (_, d) => mean(h.map((p) => p[d]!))));
  const w = Array.from({ length: dims }, () => new Array<number>(dims).fill(0));
  halves.forEach((h, l) => {
    for (const p of h)
      for (let i = 0; i < dims; i++)
        for (let j = 0; j < dims; j++)
          w[i]![j]! += ((p[i]! - centres[l]![i]!) * (p[j]! - centres[l]![j]!)) / points.length;
  });
  for (let i = 0; i < dims; i++) w[i]![i] = Math.max(w[i]![i]!, floors[i]! ** 2);
  const diff = centres[0]!.map((c, d) => c - centres[1]![d]!);
  if (dims === 1) return Math.abs(diff[0]!) / Math.sqrt(w[0]![0]! || 1e-12);
  const [a, b, c] = [w[0]![0]!, w[0]![1]!, w[1]![1]!];
  const det = a * c - b * b || 1e-12;
  return Math.sqrt((c * diff[0]! ** 2 - 2 * b * diff[0]! * diff[1]! + a * diff[1]! ** 2) / det);
}

/** The split of one trait with the most between-halves variance, at least MIN_SIDE a side. */
function bestCut(values: number[]): number[] {
  const order = values.map((_, i) => i).sort((p, q) => values[p]! - values[q]!);
  const all = mean(values);
  let best = -1;
  let cut = MIN_SIDE - 1;
  let sum = 0;
  for (let k = 0; k < values.length - 1; k++) {
    sum += values[order[k]!]!;
    const [n1, n2] = [k + 1, values.length - k - 1];
    if (n1 < MIN_SIDE || n2 < MIN_SIDE) continue;
    const between = n1 * (sum / n1 - all) ** 2 + n2 * ((all * values.length - sum) / n2 - all) ** 2;
    if (between > best) [best, cut] = [between, k];
  }
  const labels = new Array<number>(values.length).fill(0);
  for (let k = cut + 1; k < values.length; k++) labels[order[k]!] = 1;
  return labels;
}

/** A warp factor's grid step's own spread (uniform over one step). */
const GRID_SPREAD = 0.01 / Math.sqrt(12);

/** The count's test on one or two traits (scaled): the best cut of either, then 2-means; its halves' distance. */
function traitSplit(traits: number[][], floors: number[]): { distance: number; labels: number[] } {
  const scaled = traits.map((t) => t.map((x) => (x - mean(t)) / (spread(t) || 1)));
  const scaledFloors = floors.map((f, k) => f / (spread(traits[k]!) || 1));
  const points = scaled[0]!.map((_, i) => scaled.map((t) => t[i]!));
  const cuts = scaled.map(bestCut);
  let labels = cuts.reduce((a, b) =>
    halvesDistance(points, b, scaledFloors) > halvesDistance(points, a, scaledFloors) ? b : a,
  );
  for (let pass = 0; pass < 30 && traits.length > 1; pass++) {
    const centres = [0, 1].map((l) => scaled.map((t) => mean(t.filter((_, i) => labels[i] === l))));
    const next = points.map((p) => {
      const d = centres.map((c) => p.reduce((s, x, k) => s + (x - c[k]!) ** 2, 0));
      return d[0]! <= d[1]! ? 0 : 1;
    });
    const smaller = Math.min(next.filter((l) => l === 0).length, next.filter((l) => l === 1).length);
    if (smaller < MIN_SIDE || next.every((l, i) => l === labels[i])) break;
    labels = next;
  }
  return { distance: halvesDistance(points, labels, scaledFloors), labels };
}

const TRAITS = ['pitch', 'envelope', 'mixture', 'cepstral'] as const;
type Trait = (typeof TRAITS)[number];
const TESTS: Trait[][] = [
  ['pitch'],
  ['envelope'],
  ['mixture'],
  ['cepstral'],
  ['pitch', 'envelope'],
  ['pitch', 'mixture'],
];

interface SetFigures {
  label: string;
  pair: boolean;
  /** per trait: true d′ (pairs) or the voice's spread (one voice) */
  apart: Record<string, number>;
  /** per test: the best split's halves' distance, and for pairs its share right */
  split: Record<string, { distance: number; right: number }>;
}

function measure(label: string, set: Utterance[]): SetFigures {
  const traits: Record<Trait, number[]> = {
    pitch: set.map((u) => u.pitch),
    envelope: envelopeWarps(set, false),
    mixture: mixtureWarps(set),
    cepstral: envelopeWarps(set, true),
  };
  const first = set[0]!.speaker;
  const truth = set.map((u) => (u.speaker === first ? 0 : 1));
  const pair = truth.some((t) => t === 1);
  const apart: Record<string, number> = {};
  const parts = [`${label.padEnd(15)} n ${String(set.length).padStart(3)}`];
  for (const t of TRAITS) {
    const byVoice = [0, 1].map((v) => traits[t].filter((_, i) => truth[i] === v)).filter((x) => x.length);
    apart[t] = pair
      ? Math.abs(mean(byVoice[0]!) - mean(byVoice[1]!)) /
        Math.sqrt((spread(byVoice[0]!) ** 2 + spread(byVoice[1]!) ** 2) / 2)
      : spread(traits[t]);
    const voices = byVoice.map((x) => `${mean(x).toFixed(3)}±${spread(x).toFixed(3)}`).join(' ');
    parts.push(`${t} ${voices}${pair ? ` d′ ${apart[t].toFixed(2)}` : ''}`);
  }
  const split: Record<string, { distance: number; right: number }> = {};
  for (const test of TESTS) {
    const { distance, labels } = traitSplit(
      test.map((t) => traits[t]),
      test.map((t) => (t === 'pitch' ? 0 : GRID_SPREAD)),
    );
    const same = labels.filter((l, i) => l === truth[i]).length / labels.length;
    split[test.join('+')] = { distance, right: Math.max(same, 1 - same) };
    parts.push(
      `split(${test.join('+')}) ${distance.toFixed(2)}${pair ? ` ${(100 * Math.max(same, 1 - same)).toFixed(0)} %` : ''}`,
    );
  }
  console.log(parts.join('  '));
  return { label, pair, apart, split };
}

function setsOf(call: CorpusCall, utterances: Utterance[]): [string, Utterance[]][] {
  const deciding = utterances.filter((u) => u.frames >= BASIS_FRAMES && Number.isFinite(u.pitch));
  const sets: [string, Utterance[]][] = [];
  if (call.kind === 'two-voice') sets.push([`${call.id} both`, deciding]);
  if (call.kind === 'one-voice') sets.push([`${call.id} one`, deciding]);
  else
    for (const s of [...new Set(call.spans.map((x) => x.speaker))].sort())
      sets.push([`${call.id} s${s}`, deciding.filter((u) => u.speaker === s && u.alone)]);
  return sets.filter(([, set]) => set.length >= MIN_SET);
}

function summary(figures: SetFigures[]): void {
  const ones = figures.filter((f) => !f.pair);
  const pairs = figures.filter((f) => f.pair);
  const range = (x: number[]) => `${Math.min(...x).toFixed(3)}–${Math.max(...x).toFixed(3)}`;
  console.log(`\n${ones.length} one-voice sets, ${pairs.length} two-voice calls`);
  for (const t of TRAITS)
    console.log(
      `  ${t.padEnd(9)} one voice's spread ${range(ones.map((f) => f.apart[t]!))}; the pairs' d′ ${range(pairs.map((f) => f.apart[t]!))}`,
    );
  for (const test of TESTS.map((t) => t.join('+'))) {
    const top = ones.map((f) => f.split[test]!.distance).sort((a, b) => b - a);
    const closest = pairs
      .filter((f) => /^two-2[12] /.test(f.label))
      .map((f) => {
        const { distance, right } = f.split[test]!;
        return `${f.label.split(' ')[0]} ${distance.toFixed(2)} (${(100 * right).toFixed(0)} %, ${top.filter((d) => d >= distance).length} one-voice sets as far)`;
      });
    console.log(
      `  split(${test}): one voice up to ${top
        .slice(0, 3)
        .map((d) => d.toFixed(2))
        .join(', ')}; ${closest.join('; ')}`,
    );
  }
}

async function main(): Promise<void> {
  const only = values.only?.split(',').map((id) => id.trim());
  const corpus = (await speakerCorpus({ split: 'dev' })).filter(
    (call) => call.kind !== 'dtmf' && (!only || only.includes(call.id)),
  );
  const figures: SetFigures[] = [];
  for (const call of corpus) {
    const { bytes } = await stagedTrack(call);
    const utterances = utterancesOf(call, bytes);
    for (const [label, set] of setsOf(call, utterances)) figures.push(measure(label, set));
  }
  summary(figures);
}

await main();
