/**
 * The units a per-sentence text step sends, one request each (text-grains.ts): an utterance, a turn, or
 * a speaker's window. A unit's text is its utterances' texts in time order, each ending in a full stop
 * when there are several, so the service reads them as sentences. The one cut both the text steps
 * (activities/nlp/) and the insights' rules on them (activities/insights/) apply. Pure.
 */
import type { TextGrain } from './text-grains.ts';
import type { Utterance } from './transcript.ts';

/** What text comparisons ignore: whitespace, punctuation, and what normalization rewrites (ー, 〜, っ). */
const LOOSE_IGNORED = /[\s、。，．！？!?,.ー〜～…っッ]/gu;

/** The text alignment compares: NFKC, without what the service may normalize or re-punctuate. */
export function looseText(text: string): string {
  return text.normalize('NFKC').replace(LOOSE_IGNORED, '');
}

export interface TextUnit<U extends UnitUtterance = UnitUtterance> {
  /** The unit's utterances, in time order (their indices key the step's progress and output). */
  utterances: U[];
  text: string;
}

/** What cutting a call into units reads of an utterance (a step's CallUtterance, or a stored result's). */
export interface UnitUtterance {
  utterance: Pick<Utterance, 'index' | 'speaker' | 'start' | 'end'>;
  text: string;
}

/** Ends a sentence with a full stop unless it ends with one already. */
function asSentence(text: string): string {
  return /[。．.！!？?]$/u.test(text) ? text : `${text}。`;
}

/** Units of `grain` over a call's utterances (any order; those without text are left out). */
export function textUnits<U extends UnitUtterance>(
  utterances: readonly U[],
  grain: TextGrain,
  windowSeconds: number,
): TextUnit<U>[] {
  const spoken = utterances
    .filter((u) => looseText(u.text) !== '')
    .sort((a, b) => a.utterance.start - b.utterance.start || a.utterance.index - b.utterance.index);
  const groups: U[][] = [];
  if (grain === 'utterance') for (const u of spoken) groups.push([u]);
  else if (grain === 'turn') {
    for (const u of spoken) {
      const turn = groups.at(-1);
      const first = turn?.[0];
      if (
        turn &&
        first &&
        first.utterance.speaker === u.utterance.speaker &&
        u.utterance.end - first.utterance.start <= windowSeconds
      )
        turn.push(u);
      else groups.push([u]);
    }
  } else {
    const windows = new Map<string, U[]>();
    for (const u of spoken) {
      const key = `${u.utterance.speaker}\u0000${Math.floor(u.utterance.start / windowSeconds)}`;
      const w = windows.get(key);
      if (w) w.push(u);
      else {
        const fresh = [u];
        windows.set(key, fresh);
        groups.push(fresh);
      }
    }
  }
  return groups.map((g) => ({
    utterances: g,
    // One utterance goes as it is; several are joined as sentences.
    text: g.length === 1 ? g[0]!.text : g.map((u) => asSentence(u.text)).join(''),
  }));
}
