/**
 * The numbers of a street address: blocks, lots and houses (`一丁目`, `三番地`, `二番五号`, `1-2-3` after
 * a place). Named-entity extraction finds the place names; the numbers after them are often left out
 * of its entities, and a town with its block number is an address however the entity ends.
 */
import type { Span } from './call-streams.ts';
import { textView } from './numerals.ts';

const N = '\\d+';
const BLOCK = new RegExp(
  [
    `${N}\\s*丁目(?:\\s*${N}\\s*(?:番地?|[-‐−－ー]|の)(?:\\s*${N}\\s*号?)?)?`,
    `${N}\\s*番地(?:\\s*(?:の|[-‐−－ー])\\s*${N}\\s*号?)?`,
    `${N}\\s*番\\s*${N}\\s*号`,
  ].join('|'),
  'gu',
);
/** What may continue an address after a place name: block, lot and house numbers, a building's room. */
const CONTINUATION = new RegExp(`^(?:\\s*${N}\\s*(?:丁目|番地|番|号室?|の|[-‐−－ー])?)+`, 'u');

function viewSpan(m: { index: number; 0: string }, view: ReturnType<typeof textView>) {
  return { begin: view.from[m.index]!, end: view.to[m.index + m[0].length - 1]! };
}

/** The town name written before a block number (`神南` of `神南一丁目`): kanji, at most this many. */
const TOWN_CHARS = 8;
const isTownChar = (c: string | undefined) => !!c && /[\u4E00-\u9FFF々ヶケ]/u.test(c);

/** Block and lot numbers in one utterance's text, with the town name right before them. */
export function addressBlockSpans(utterance: number, text: string): Span[] {
  const view = textView(text);
  return [...view.text.matchAll(BLOCK)].map((m) => {
    const span = viewSpan(m, view);
    let begin = span.begin;
    while (begin > 0 && span.begin - begin < TOWN_CHARS && isTownChar(text[begin - 1])) begin--;
    return { utterance, begin, end: span.end, kind: 'address', source: 'pattern' as const };
  });
}

/** The end of an address span, moved over the numbers that continue it. */
export function extendAddress(text: string, end: number): number {
  const rest = text.slice(end);
  const view = textView(rest);
  const m = CONTINUATION.exec(view.text);
  if (!m || !/\d/u.test(m[0])) return end;
  return end + view.to[m[0].length - 1]!;
}
