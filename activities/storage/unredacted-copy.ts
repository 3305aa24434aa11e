/**
 * The unredacted copy of a result (written only when configured, under a prefix of its own:
 * docs/personal-data.md). It is the redacted document with the recognized words put back: each utterance's
 * `text` as recognized, its normalized and cleaned text with each mask replaced by what it hid (those
 * came from filler removal of the redacted text; a mask the service did not pass through unchanged stays
 * masked), filler positions moved to match, and `redactions` giving where each value is. Everything
 * computed from text (summary, sentiment, keywords, insights) is the same as in the redacted document:
 * it was computed on redacted text, and so never holds personal data in either copy.
 */
import type { ResultDocument, ResultUtterance, RedactionOutput } from '../../schemas/result.ts';
import type { Timeline } from '../../schemas/transcript.ts';

interface Replacement {
  mask: string;
  value: string;
}

/** `text` with each mask, in order, replaced by its value; and where a position of `text` moved to. */
export function unmask(
  text: string,
  replacements: readonly Replacement[],
): { text: string; moved: (at: number) => number } {
  let out = '';
  let at = 0;
  const shifts: { from: number; by: number }[] = [];
  for (const { mask, value } of replacements) {
    const found = text.indexOf(mask, at);
    if (found === -1) continue;
    out += text.slice(at, found) + value;
    shifts.push({ from: found + mask.length, by: value.length - mask.length });
    at = found + mask.length;
  }
  out += text.slice(at);
  return {
    text: out,
    moved: (pos) => pos + shifts.filter((s) => s.from <= pos).reduce((n, s) => n + s.by, 0),
  };
}

export function unredactedCopy(
  result: ResultDocument,
  redaction: RedactionOutput,
  recognized: Timeline,
): ResultDocument {
  const records = new Map(redaction.utterances.map((u) => [u.index, u.redactions]));
  const original = new Map(recognized.utterances.map((u) => [u.index, u.text]));
  const utterances: ResultUtterance[] = result.utterances.map((u) => {
    const own = records.get(u.index) ?? [];
    const text = original.get(u.index) ?? u.text;
    if (own.length === 0) return { ...u, text, redactions: [] };
    const replacements = own.map((r) => ({
      mask: u.text.slice(r.begin, r.end),
      value: text.slice(r.originalBegin, r.originalEnd),
    }));
    const normalized = u.normalizedText !== null ? unmask(u.normalizedText, replacements) : undefined;
    return {
      ...u,
      text,
      normalizedText: normalized ? normalized.text : null,
      cleanedText: u.cleanedText !== null ? unmask(u.cleanedText, replacements).text : null,
      fillers: normalized
        ? u.fillers.map((f) => ({ ...f, begin: normalized.moved(f.begin), end: normalized.moved(f.end) }))
        : u.fillers,
      redactions: own.map((r) => ({
        kind: r.kind,
        begin: r.originalBegin,
        end: r.originalEnd,
        source: r.source,
      })),
    };
  });
  return {
    ...result,
    utterances,
    ...(result.redaction ? { redaction: { ...result.redaction, applied: false } } : {}),
  };
}
