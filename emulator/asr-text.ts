/**
 * How a phrase's text comes out of recognition, following the start options (spec 02, "Behavior of the
 * options"): fillers in square brackets only with `baseParam.filler` (otherwise left out, as a
 * recognizer that does not output fillers would), punctuation only with `baseParam.punctuation`, spaces
 * between words unless `baseParam.delimiter` is false, and a katakana `reading` with `baseParam.reading`.
 * Interim results (type 0) show filler, punctuation and delimiter whatever the options say (rule 5).
 */
import { findFillers, normalizeLengthening } from './nlp/fillers.ts';
import { splitWords, toKatakana } from './text-words.ts';

export interface SurfaceOptions {
  filler: boolean;
  punctuation: boolean;
  delimiter: boolean;
}

const PUNCTUATION = /[、。，．！？!?]/;

export function formatSurface(text: string, options: SurfaceOptions): string {
  const normalized = normalizeLengthening(text);
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
  return words.join(options.delimiter ? ' ' : '');
}

/** The sentence's reading: the kana of the text without fillers' brackets, spaces or punctuation. */
export function formatReading(surface: string): string {
  return toKatakana(surface.replace(/[[\]\s、。，．！？!?]/g, ''));
}
