/**
 * Scores of a voice separation against the truth: the diarization error rate by its standard definition
 * (NIST md-eval: scored reference speaker time; missed speech, false alarm and speaker confusion under
 * the one-to-one mapping of voices to speakers that maximizes their overlap; no-score collars around
 * every reference boundary; overlapped speech scored), and utterance accuracy under its own best mapping.
 */
import { DTMF_GAP_SECONDS, phraseDurationSeconds } from '../../schemas/synthetic-recording.ts';

export interface Labelled {
  start: number;
  end: number;
  /** Speaker or voice index; null: nobody (not counted). */
  who: number | null;
}

export interface DerParts {
  /** Seconds of reference speaker time scored (a second of two speakers counts twice). */
  scored: number;
  missed: number;
  falseAlarm: number;
  confusion: number;
}

const addDer = (a: DerParts, b: DerParts): DerParts => ({
  scored: a.scored + b.scored,
  missed: a.missed + b.missed,
  falseAlarm: a.falseAlarm + b.falseAlarm,
  confusion: a.confusion + b.confusion,
});

/** The parts of several calls' DERs added up (their seconds, not their rates). */
export const totalDer = (parts: readonly DerParts[]): DerParts =>
  parts.reduce(addDer, { scored: 0, missed: 0, falseAlarm: 0, confusion: 0 });

export const derOf = (p: DerParts) => (p.scored > 0 ? (p.missed + p.falseAlarm + p.confusion) / p.scored : 0);

const STEP = 0.01;

/** Every injective map of `from` labels to `to` labels (or to nothing), as arrays. */
function mappings(from: number, to: number): number[][] {
  const out: number[][] = [];
  const current: number[] = [];
  const used = new Set<number>();
  const walk = () => {
    if (current.length === from) {
      out.push([...current]);
      return;
    }
    for (let t = -1; t < to; t++) {
      if (t >= 0 && used.has(t)) continue;
      current.push(t);
      if (t >= 0) used.add(t);
      walk();
      current.pop();
      used.delete(t);
    }
  };
  walk();
  return out;
}

/** The map of labels `a` → `b` that maximizes the summed `score[a][b]`. */
function bestMapping(score: number[][], bLabels: number): number[] {
  let best: number[] = [];
  let bestScore = -Infinity;
  for (const m of mappings(score.length, bLabels)) {
    const s = m.reduce((sum, b, a) => sum + (b >= 0 ? score[a]![b]! : 0), 0);
    if (s > bestScore) {
      bestScore = s;
      best = m;
    }
  }
  return best;
}

/** DER parts of one call. */
export function diarizationError(
  reference: readonly Labelled[],
  hypothesis: readonly Labelled[],
  collarSeconds = 0.25,
): DerParts {
  const end = Math.max(0, ...reference.map((r) => r.end), ...hypothesis.map((h) => h.end));
  const n = Math.ceil(end / STEP) + 1;
  const ref = new Uint8Array(n);
  const hyp = new Uint8Array(n);
  const scoredStep = new Uint8Array(n).fill(1);
  const index = (t: number) => Math.max(0, Math.min(n, Math.round(t / STEP)));
  for (const r of reference) {
    if (r.who === null) continue;
    for (let i = index(r.start); i < index(r.end); i++) ref[i] = ref[i]! | (1 << r.who);
    for (const b of [r.start, r.end]) scoredStep.fill(0, index(b - collarSeconds), index(b + collarSeconds));
  }
  for (const h of hypothesis) {
    if (h.who === null) continue;
    for (let i = index(h.start); i < index(h.end); i++) hyp[i] = hyp[i]! | (1 << h.who);
  }
  const voices = Math.max(0, ...hypothesis.map((h) => (h.who ?? -1) + 1));
  const speakers = Math.max(0, ...reference.map((r) => (r.who ?? -1) + 1));
  const overlap = Array.from({ length: voices }, () => new Array<number>(speakers).fill(0));
  for (let i = 0; i < n; i++) {
    if (!scoredStep[i]) continue;
    for (let v = 0; v < voices; v++) {
      if (!(hyp[i]! & (1 << v))) continue;
      for (let s = 0; s < speakers; s++) if (ref[i]! & (1 << s)) overlap[v]![s]!++;
    }
  }
  const map = bestMapping(overlap, speakers);
  const parts: DerParts = { scored: 0, missed: 0, falseAlarm: 0, confusion: 0 };
  const bits = (x: number) => {
    let c = 0;
    for (; x; x &= x - 1) c++;
    return c;
  };
  for (let i = 0; i < n; i++) {
    if (!scoredStep[i]) continue;
    const nRef = bits(ref[i]!);
    const nHyp = bits(hyp[i]!);
    let correct = 0;
    for (let v = 0; v < voices; v++)
      if (hyp[i]! & (1 << v) && map[v]! >= 0 && ref[i]! & (1 << map[v]!)) correct++;
    parts.scored += nRef * STEP;
    parts.missed += Math.max(0, nRef - nHyp) * STEP;
    parts.falseAlarm += Math.max(0, nHyp - nRef) * STEP;
    parts.confusion += (Math.min(nRef, nHyp) - correct) * STEP;
  }
  return parts;
}

/** Utterances whose voice maps to their true speaker, under the map that maximizes that count. */
export function utteranceMatches(
  truth: readonly number[],
  voices: readonly (number | null)[],
): {
  assigned: number;
  correct: number;
} {
  const nVoices = Math.max(0, ...voices.map((v) => (v ?? -1) + 1));
  const nSpeakers = Math.max(0, ...truth.map((t) => t + 1));
  const counts = Array.from({ length: nVoices }, () => new Array<number>(nSpeakers).fill(0));
  let assigned = 0;
  voices.forEach((v, i) => {
    if (v === null) return;
    assigned++;
    counts[v]![truth[i]!]!++;
  });
  const map = bestMapping(counts, nSpeakers);
  const correct = map.reduce((sum, s, v) => sum + (s >= 0 ? counts[v]![s]! : 0), 0);
  return { assigned, correct };
}

/**
 * A DTMF phrase as sound: every symbol is a tone then a gap, so its tones end one gap before its slot
 * does, and a recognizer's segment ends with the last tone. The slot's last gap is silence, nobody's speech.
 */
export const dtmfPhraseSpan = (start: number, phraseId: number) => ({
  start,
  end: start + phraseDurationSeconds(phraseId) - DTMF_GAP_SECONDS,
});

/** Seconds of [start, end) that each speaker (0 to `speakers` − 1) holds in `reference`. */
export function secondsHeld(
  span: { start: number; end: number },
  reference: readonly Labelled[],
  speakers: number,
): number[] {
  return Array.from({ length: speakers }, (_, who) =>
    reference
      .filter((r) => r.who === who)
      .reduce((n, r) => n + Math.max(0, Math.min(span.end, r.end) - Math.max(span.start, r.start)), 0),
  );
}

/** The speaker holding most of `held` (secondsHeld); 0 when nobody holds any. */
export const mostHeld = (held: readonly number[]): number => held.indexOf(Math.max(...held));

/** The speaker (0 to `speakers` − 1) holding most of [start, end) in `reference`; 0 when nobody does. */
export function speakerHolding(
  span: { start: number; end: number },
  reference: readonly Labelled[],
  speakers: number,
): number {
  return mostHeld(secondsHeld(span, reference, speakers));
}

/**
 * DER parts of `spans` each labelled with the reference speaker holding most of it: what a separator that
 * names every span's speaker right scores on these spans, so the part of a DER no labelling removes.
 */
export function truthLabelledError(
  reference: readonly Labelled[],
  spans: readonly { start: number; end: number }[],
  speakers: number,
  collarSeconds = 0.25,
): DerParts {
  const labelled = spans.map((s) => ({
    start: s.start,
    end: s.end,
    who: speakerHolding(s, reference, speakers),
  }));
  return diarizationError(reference, labelled, collarSeconds);
}

/** Reference segments opening after this much quiet count as opening in the clear (a recognizer's hangover is 0.2 s). */
const CLEAR_SECONDS = 0.3;

/**
 * Where a recognizer opens its segments against the reference's: for every reference segment opening in
 * the clear (no other one within `CLEAR_SECONDS` before it), the seconds from its start to the start of
 * the first span opening at most 0.1 s before it and before it ends; segments no span opens in are left out.
 */
export function onsetOffsets(
  reference: readonly { start: number; end: number }[],
  spans: readonly { start: number; end: number }[],
): number[] {
  const out: number[] = [];
  const opens = spans.map((s) => s.start).sort((a, b) => a - b);
  for (const r of reference) {
    const crowded = reference.some((o) => o !== r && o.start <= r.start && o.end > r.start - CLEAR_SECONDS);
    if (crowded) continue;
    const first = opens.find((t) => t >= r.start - 0.1);
    if (first !== undefined && first < r.end) out.push(first - r.start);
  }
  return out;
}
