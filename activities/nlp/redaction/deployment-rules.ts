/**
 * The deployment's own terms and patterns (configuration `redaction.terms` / `redaction.patterns`):
 * customer or contract number formats, product codes that name a person, a list of names. Terms match
 * literally, ignoring case and width (NFKC); patterns match the text with full-width characters folded
 * and every number written as ASCII digits (`契約番号 C-一二三四五六` reads `契約番号 C-123456`).
 * Patterns run on the linear-time engine of schemas/user-pattern.ts, never on JavaScript's backtracking
 * one: a pattern can make a call slower, never stop the worker.
 */
import type { RedactionPattern, RedactionTerm } from '../../../schemas/redaction.ts';
import { compileUserPattern, type UserPattern } from '../../../schemas/user-pattern.ts';
import { cutStreamSpan, type DetectionUtterance, type Span, type SpeakerStream } from './call-streams.ts';
import { originalSpan, textView } from './numerals.ts';

export interface CompiledPattern {
  kind: string;
  pattern: UserPattern;
}

/** Compiled once per activity: a pattern of the configuration was checked when it was loaded. */
export function compilePatterns(patterns: readonly RedactionPattern[]): CompiledPattern[] {
  return patterns.map((p) => ({ kind: p.kind, pattern: compileUserPattern(p.regex) }));
}

/** Terms searched between two checks of the step's deadline. */
const TERMS_PER_UNIT = 500;

/**
 * The spans of one stream, in units of work (a slice of the terms, one pattern): the caller may check a
 * deadline and let the event loop run between them (../redact.ts).
 */
export function* deploymentSpanUnits(
  utterances: readonly DetectionUtterance[],
  stream: SpeakerStream,
  rules: { terms: readonly RedactionTerm[]; patterns: readonly CompiledPattern[] },
): Generator<Span[]> {
  const found = (view: ReturnType<typeof textView>, at: number, length: number, kind: string): Span[] => {
    if (length === 0) return [];
    const { begin, end } = originalSpan(view, at, at + length);
    return cutStreamSpan(utterances, stream, { begin, end, kind, source: 'term' });
  };
  if (rules.terms.length > 0) {
    const view = textView(stream.text, { numerals: false, lowerCase: true });
    for (let from = 0; from < rules.terms.length; from += TERMS_PER_UNIT) {
      const spans: Span[] = [];
      for (const term of rules.terms.slice(from, from + TERMS_PER_UNIT)) {
        const needle = term.text.normalize('NFKC').toLowerCase();
        for (
          let at = view.text.indexOf(needle);
          at !== -1;
          at = view.text.indexOf(needle, at + needle.length)
        ) {
          spans.push(...found(view, at, needle.length, term.kind));
        }
      }
      yield spans;
    }
  }
  if (rules.patterns.length > 0) {
    const view = textView(stream.text);
    for (const { kind, pattern } of rules.patterns) {
      const spans: Span[] = [];
      for (const m of pattern.matches(view.text)) spans.push(...found(view, m.index, m.length, kind));
      yield spans;
    }
  }
}

export function deploymentSpans(
  utterances: readonly DetectionUtterance[],
  stream: SpeakerStream,
  rules: { terms: readonly RedactionTerm[]; patterns: readonly CompiledPattern[] },
): Span[] {
  return [...deploymentSpanUnits(utterances, stream, rules)].flat();
}
