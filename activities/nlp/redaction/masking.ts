/**
 * From spans to redacted text: spans of a kind configured `off` are dropped, an address is carried over
 * the block numbers after it, a name (or an e-mail address, or a term of the deployment) found once is
 * looked for everywhere else in the call (the agent says it back, the extraction missed it in another
 * sentence), overlapping spans become one (the more specific kind names it), and each span is replaced
 * by its kind's mask. What is kept of a redaction is its kind, where its mask is, and which detector
 * found it; in staging also where the value was, for the unredacted copy.
 */
import {
  DEFAULT_MASK_LABELS,
  REDACTION_KINDS,
  type Mask,
  type StagedRedaction,
} from '../../../schemas/redaction.ts';
import { extendAddress } from './addresses.ts';
import type { DetectionUtterance, Span } from './call-streams.ts';
import { numeralTokens } from './numerals.ts';
import { DIGEST_DIGIT_KINDS, personalDigest } from '../../../schemas/personal-digest.ts';

export interface MaskOptions {
  /** Per kind; default: the kind's label. */
  masks?: Readonly<Record<string, Mask>>;
  /** Labels of the deployment's kinds (from its terms and patterns); default `[kind]`. */
  labels?: Readonly<Record<string, string>>;
  /** Key of the values' digests (schemas/personal-digest.ts): each record then carries its value's. */
  digestKey?: Buffer;
}

/** Kinds worth looking for again once found: a value of these is the same wherever it is said. */
const PROPAGATED = new Set(['name', 'email']);
/** Shorter values are not looked for elsewhere: one character is a word, not a name. */
const MIN_PROPAGATED_CHARS = 2;

/** Lower wins: the deployment's kinds, then the built-in ones from the most specific. */
function priority(kind: string): number {
  const i = (REDACTION_KINDS as readonly string[]).indexOf(kind);
  return i === -1 ? -1 : i;
}

function isBuiltIn(kind: string): boolean {
  return (REDACTION_KINDS as readonly string[]).includes(kind);
}

/** Every span to redact in the call, before merging: see the module comment. */
export function finishSpans(
  utterances: readonly DetectionUtterance[],
  spans: readonly Span[],
  options: MaskOptions = {},
  /** Called before each value is looked for again: a deadline (a pattern may find many values). */
  check: () => void = () => undefined,
): Span[] {
  const textOf = new Map(utterances.map((u) => [u.index, u.text]));
  const kept = spans
    .filter((s) => options.masks?.[s.kind]?.style !== 'off')
    .map((s) =>
      s.kind === 'address' ? { ...s, end: extendAddress(textOf.get(s.utterance) ?? '', s.end) } : s,
    );
  const values = new Map<string, Span>();
  for (const s of kept) {
    if (!(PROPAGATED.has(s.kind) || !isBuiltIn(s.kind))) continue;
    const value = (textOf.get(s.utterance) ?? '').slice(s.begin, s.end);
    if (value.trim().length >= MIN_PROPAGATED_CHARS && !values.has(value)) values.set(value, s);
  }
  const found: Span[] = [];
  for (const [value, from] of values) {
    check();
    for (const u of utterances) {
      for (let at = u.text.indexOf(value); at !== -1; at = u.text.indexOf(value, at + value.length)) {
        found.push({
          utterance: u.index,
          begin: at,
          end: at + value.length,
          kind: from.kind,
          source: from.source,
        });
      }
    }
  }
  return [...kept, ...found];
}

/** One utterance's spans, overlapping ones (and same-kind ones only spaces apart) merged. */
function mergeSpans(text: string, spans: readonly Span[]): Span[] {
  const sorted = [...spans].sort((a, b) => a.begin - b.begin || b.end - a.end);
  const out: Span[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    const joins =
      last && (s.begin < last.end || (s.kind === last.kind && text.slice(last.end, s.begin).trim() === ''));
    if (!last || !joins) {
      out.push({ ...s });
      continue;
    }
    const [winner, other] = priority(s.kind) < priority(last.kind) ? [s, last] : [last, s];
    out[out.length - 1] = {
      ...winner,
      begin: last.begin,
      end: Math.max(last.end, s.end),
      ...(winner.digits !== undefined || other.digits !== undefined
        ? { digits: winner.digits ?? other.digits }
        : {}),
    };
  }
  return out;
}

function labelOf(kind: string, options: MaskOptions): string {
  const mask = options.masks?.[kind];
  const configured = mask && mask.style !== 'off' ? mask.label : undefined;
  return (
    configured ??
    (isBuiltIn(kind) ? DEFAULT_MASK_LABELS[kind as keyof typeof DEFAULT_MASK_LABELS] : undefined) ??
    options.labels?.[kind] ??
    `[${kind}]`
  );
}

/** The mask of a span: its label, with the value's last digits when the kind is configured so. */
function maskOf(span: Span, value: string, options: MaskOptions = {}): string {
  const label = labelOf(span.kind, options);
  const mask = options.masks?.[span.kind];
  if (mask?.style !== 'keepLast') return label;
  const digits =
    span.digits ??
    numeralTokens(value)
      .map((t) => t.digits)
      .join('');
  // Showing all of a short value would show the value.
  if (digits.length <= mask.digits) return label;
  const shown = `***${digits.slice(-mask.digits)}`;
  return label.endsWith(']') ? `${label.slice(0, -1)} ${shown}]` : `${label} ${shown}`;
}

/**
 * The keyed digest of a span's value: a number's digits as the numeral reader reads them (spoken
 * numerals included, so 「ゼロキューゼロ…」 and "090…" are one), other kinds their text.
 */
function spanDigest(span: Span, value: string, key: Buffer): string | undefined {
  const normalized = DIGEST_DIGIT_KINDS.has(span.kind)
    ? (span.digits ??
      numeralTokens(value)
        .map((t) => t.digits)
        .join(''))
    : value;
  return personalDigest(key, span.kind, normalized);
}

/** An utterance's text with its spans masked, and the record of each. */
export function maskText(
  text: string,
  spans: readonly Span[],
  options: MaskOptions = {},
): { text: string; redactions: StagedRedaction[] } {
  let out = '';
  let at = 0;
  const redactions: StagedRedaction[] = [];
  for (const span of mergeSpans(text, spans)) {
    out += text.slice(at, span.begin);
    const value = text.slice(span.begin, span.end);
    const mask = maskOf(span, value, options);
    const digest = options.digestKey ? spanDigest(span, value, options.digestKey) : undefined;
    redactions.push({
      kind: span.kind,
      begin: out.length,
      end: out.length + mask.length,
      source: span.source,
      ...(digest ? { digest } : {}),
      originalBegin: span.begin,
      originalEnd: span.end,
    });
    out += mask;
    at = span.end;
  }
  return { text: out + text.slice(at), redactions };
}
