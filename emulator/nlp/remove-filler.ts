/**
 * `/nlp/beta/remove_filler` (spec 01, "Filler removal"): lexicon-based, deterministic (see fillers.ts).
 *
 * Positions are within `normalized_sentence`. A filler directly followed by `、` and another filler takes
 * the comma with it; the last filler of a run leaves its comma in place. That is what the live service
 * answered for `えーーっと、あの、何時に待ち合わせですっけ。` (golden): `えーっと、` (0–5), `あの` (5–7),
 * fixed `、何時に待ち合わせですっけ。`.
 */
import { findFillers, normalizeLengthening } from './fillers.ts';
import { splitSentences } from './sentences.ts';

export interface FillerResult {
  fillers: { begin_pos: number; end_pos: number; form: string }[];
  normalized_sentence: string;
  fixed_sentence: string;
}

export function removeFillerFrom(sentence: string): FillerResult {
  const normalized = normalizeLengthening(sentence);
  const spans = findFillers(normalized);
  const fillers = spans.map((span, i) => {
    const next = spans[i + 1];
    const end = normalized[span.end] === '、' && next?.begin === span.end + 1 ? span.end + 1 : span.end;
    return { begin_pos: span.begin, end_pos: end, form: normalized.slice(span.begin, end) };
  });
  let fixed = '';
  let at = 0;
  for (const f of fillers) {
    fixed += normalized.slice(at, f.begin_pos);
    at = f.end_pos;
  }
  fixed += normalized.slice(at);
  return { fillers, normalized_sentence: normalized, fixed_sentence: fixed };
}

/** `do_segment` true: one result per sentence (text without punctuation is split at spaces too). */
export function removeFiller(text: string, doSegment: boolean): FillerResult[] {
  const sentences = doSegment ? splitSentences(text, true) : [text];
  return (sentences.length > 0 ? sentences : ['']).map(removeFillerFrom);
}
