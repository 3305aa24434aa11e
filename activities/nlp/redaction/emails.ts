/**
 * E-mail addresses, written (`yamada@example.co.jp`, full-width `ｙａｍａｄａ＠…`) or as a recognizer
 * writes them spoken (`yamada アットマーク example ドット co ドット jp`, katakana parts included).
 */
import { cutStreamSpan, type DetectionUtterance, type Span, type SpeakerStream } from './call-streams.ts';
import { originalSpan, textView } from './numerals.ts';

const PART = '[A-Za-z0-9_%+\\-\\u30A1-\\u30FA\\u30FC]';
// A match starts where a run of PART does (the lookbehind): tried from every letter of a long run
// without `@`, the local part would rescan the rest of the run each time, quadratic in its length.
const EMAIL = new RegExp(`(?<!${PART})${PART}(?:${PART}|\\.)*@${PART}+(?:\\.${PART}+)+`, 'gu');

export function emailSpans(utterances: readonly DetectionUtterance[], stream: SpeakerStream): Span[] {
  const view = textView(stream.text, { numerals: false, spokenSymbols: true });
  const spans: Span[] = [];
  for (const m of view.text.matchAll(EMAIL)) {
    const { begin, end } = originalSpan(view, m.index, m.index + m[0].length);
    spans.push(...cutStreamSpan(utterances, stream, { begin, end, kind: 'email', source: 'pattern' }));
  }
  return spans;
}
