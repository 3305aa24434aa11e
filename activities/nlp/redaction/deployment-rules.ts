/**
 * The deployment's own terms and patterns (configuration `redaction.terms` / `redaction.patterns`):
 * customer or contract number formats, product codes that name a person, a list of names. Terms match
 * literally, ignoring case and width (NFKC); patterns match the text with full-width characters folded
 * and every number written as ASCII digits (`契約番号 C-一二三四五六` reads `契約番号 C-123456`).
 */
import type { RedactionPattern, RedactionTerm } from '../../../schemas/redaction.ts';
import { cutStreamSpan, type DetectionUtterance, type Span, type SpeakerStream } from './call-streams.ts';
import { originalSpan, textView } from './numerals.ts';

/** Compiled once per activity: a pattern of the configuration is checked when it is loaded. */
export function compilePatterns(patterns: readonly RedactionPattern[]): { kind: string; regex: RegExp }[] {
  return patterns.map((p) => ({ kind: p.kind, regex: new RegExp(p.regex, 'gu') }));
}

export function deploymentSpans(
  utterances: readonly DetectionUtterance[],
  stream: SpeakerStream,
  rules: { terms: readonly RedactionTerm[]; patterns: readonly { kind: string; regex: RegExp }[] },
): Span[] {
  const spans: Span[] = [];
  const add = (view: ReturnType<typeof textView>, at: number, length: number, kind: string) => {
    if (length === 0) return;
    const { begin, end } = originalSpan(view, at, at + length);
    spans.push(...cutStreamSpan(utterances, stream, { begin, end, kind, source: 'term' }));
  };
  if (rules.terms.length > 0) {
    const view = textView(stream.text, { numerals: false, lowerCase: true });
    for (const term of rules.terms) {
      const needle = term.text.normalize('NFKC').toLowerCase();
      for (
        let at = view.text.indexOf(needle);
        at !== -1;
        at = view.text.indexOf(needle, at + needle.length)
      ) {
        add(view, at, needle.length, term.kind);
      }
    }
  }
  if (rules.patterns.length > 0) {
    const view = textView(stream.text);
    for (const { kind, regex } of rules.patterns) {
      for (const m of view.text.matchAll(regex)) add(view, m.index, m[0].length, kind);
    }
  }
  return spans;
}
