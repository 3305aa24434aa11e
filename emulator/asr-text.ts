/**
 * How a phrase's text comes out of recognition, following the start options (spec 02, "Behavior of the
 * options"): fillers in square brackets only with `baseParam.filler` (otherwise left out, as a
 * recognizer that does not output fillers would), punctuation only with `baseParam.punctuation`, spaces
 * between words unless `baseParam.delimiter` is false, and a katakana `reading` with `baseParam.reading`.
 * Interim results (type 0) show filler, punctuation and delimiter whatever the options say (rule 5).
 *
 * A dictionary word comes marked `《surface|reading》` (`vocabulary.ts`): its surface is one word, never
 * split at its spaces or script changes, and the sentence's reading has the word's reading.
 */
import { findFillers, normalizeLengthening } from './nlp/fillers.ts';
import { ATOM, splitWords, toKatakana } from './text-words.ts';
import { forEachMark } from './vocabulary.ts';

export interface SurfaceOptions {
  filler: boolean;
  punctuation: boolean;
  delimiter: boolean;
}

const PUNCTUATION = /[、。，．！？!?]/;

export function formatSurface(text: string, options: SurfaceOptions): string {
  // Each marked word becomes one private-use character until the words are split.
  const atoms: string[] = [];
  const plain = forEachMark(text, (surface) => {
    atoms.push(surface);
    return String.fromCharCode(0xe000 + atoms.length - 1);
  });
  const normalized = normalizeLengthening(plain);
  const fillers = findFillers(normalized);
  const pieces: string[] = [];
  let i = 0;
  for (const f of fillers) {
    pieces.push(...splitWords(normalized.slice(i, f.begin)));
    if (options.filler) pieces.push(`[${f.word}]`);
    i = f.end;
    // Without fillers, the comma that followed one has nothing left to separate.
    if (!options.filler && normalized[i] === '、') i++;
  }
  pieces.push(...splitWords(normalized.slice(i)));
  const words = options.punctuation ? pieces : pieces.filter((w) => !PUNCTUATION.test(w));
  return words
    .join(options.delimiter ? ' ' : '')
    .replace(new RegExp(ATOM.source, 'gu'), (ch) => atoms[ch.charCodeAt(0) - 0xe000] ?? ch);
}

/**
 * The sentence's reading of a phrase's text: a dictionary word's reading, the kana of the rest in
 * full-width katakana, without fillers' brackets, spaces or punctuation.
 */
export function formatReading(text: string, options: SurfaceOptions): string {
  const said = formatSurface(
    forEachMark(text, (_, reading) => reading),
    options,
  );
  return toKatakana(said).replace(/[[\]\s、。，．！？!?､｡]/g, '');
}
