/**
 * `/nlp/v1/keyword` (spec 01, "Keyword extraction"): content words scored by frequency and position, an
 * emulation. Score = 10 × occurrences × (1 + 0.5 × how early the first occurrence is) × (1 + 0.1 × length,
 * up to 5 characters), five decimals; ordered by descending score (ties: earlier first), at most
 * `max_keyword_num` (default 5).
 */
import { findFillers, normalizeLengthening } from './fillers.ts';
import { contentWords, splitSentences } from './sentences.ts';

export const DEFAULT_MAX_KEYWORDS = 5;

export function extractKeywords(document: string | string[], doSegment: boolean, max: number) {
  // An array is already split; do_segment only matters for a string (spec 01, rule 2).
  const sentences = Array.isArray(document) ? document : doSegment ? splitSentences(document) : [document];
  const text = sentences.map((s) => {
    const n = normalizeLengthening(s);
    let out = '';
    let at = 0;
    for (const f of findFillers(n)) {
      out += n.slice(at, f.begin) + ' '.repeat(f.end - f.begin);
      at = f.end;
    }
    return out + n.slice(at);
  });
  const joined = text.join('\n');
  const words = new Map<string, { count: number; first: number }>();
  for (const { word, index } of contentWords(joined)) {
    const w = words.get(word);
    if (w) w.count++;
    else words.set(word, { count: 1, first: index });
  }
  const length = Math.max(1, joined.length);
  return [...words.entries()]
    .map(([form, w]) => ({
      form,
      score:
        Math.round(
          10 * w.count * (1 + 0.5 * (1 - w.first / length)) * (1 + 0.1 * Math.min(form.length, 5)) * 1e5,
        ) / 1e5,
      first: w.first,
    }))
    .sort((a, b) => b.score - a.score || a.first - b.first)
    .slice(0, max)
    .map(({ form, score }) => ({ form, score }));
}
