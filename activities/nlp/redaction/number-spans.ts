/**
 * Numbers that identify someone, found in a speaker's stream of digit runs (digit-runs.ts): phone
 * numbers (mobile, landline, toll-free, with or without hyphens, `+81`), card numbers (Luhn), My Number
 * (check digit), postal codes (after `〒`, written `123-4567`, or when a postal code was asked for),
 * bank accounts and customer or contract numbers when the conversation just asked for one, and any
 * other run of seven or more digits said one by one, which in a call is an identifier far more often
 * than not. Quantities (a price, a time, a count: a run followed by its unit) and dates are not numbers
 * of this kind; dates are birth-dates.ts's.
 */
import type { BuiltInKind } from '../../../schemas/redaction.ts';
import {
  cutStreamSpan,
  pieceAt,
  streamContext,
  type DetectionUtterance,
  type Span,
  type SpeakerStream,
  type StreamPiece,
} from './call-streams.ts';
import { digitRuns, digitsOf, followedByUnit, type DigitGroup } from './digit-runs.ts';
import { isCardNumber, isMyNumber, isPhoneNumber } from './number-checks.ts';

/** A run of at least this many digits said one by one is an identifier of some kind. */
const MIN_IDENTIFIER_DIGITS = 7;
/** Longest stretch of groups one number is looked for in. */
const MAX_GROUPS = 8;

/** What the conversation just asked for, the latest mention winning. */
const ASKED_FOR: readonly { words: RegExp; kind: BuiltInKind }[] = [
  { words: /郵便番号|〒/gu, kind: 'postalCode' },
  { words: /口座番号|口座|支店番号/gu, kind: 'bankAccount' },
  {
    words:
      /契約番号|お客様番号|顧客番号|会員番号|証券番号|保険証|免許証|受付番号|管理番号|注文番号|ID|下[0-9０-９一二三四五六七八九]桁|末尾/gu,
    kind: 'idNumber',
  },
];

function askedFor(context: string): BuiltInKind | undefined {
  let best: { at: number; kind: BuiltInKind } | undefined;
  for (const { words, kind } of ASKED_FOR) {
    for (const m of context.matchAll(words)) if (!best || m.index >= best.at) best = { at: m.index, kind };
  }
  return best?.kind;
}

interface Candidate {
  groups: readonly DigitGroup[];
  /** Stream text, for what surrounds the groups. */
  text: string;
  /** The kind the context asks for, if any. */
  asked: BuiltInKind | undefined;
  /** The groups are the whole run: only then can a checksum name it (a part passes one by chance). */
  whole: boolean;
}

/** A number of a specific kind, or undefined. */
function specificKind({ groups, text, asked, whole }: Candidate): BuiltInKind | undefined {
  const digits = digitsOf(groups);
  const spelled = groups.every((g) => !g.positional);
  const first = groups[0]!;
  const last = groups[groups.length - 1]!;
  if (followedByUnit(text, last.end)) return undefined;
  if (whole && spelled && isCardNumber(digits)) return 'cardNumber';
  if (whole && spelled && isMyNumber(digits)) return 'myNumber';
  const plus = /[+＋]\s*$/u.test(text.slice(Math.max(0, first.begin - 3), first.begin));
  if (!first.positional && isPhoneNumber(digits, plus)) return 'phone';
  if (spelled && digits.length === 7) {
    const marked = /〒\s*$/u.test(text.slice(Math.max(0, first.begin - 3), first.begin));
    const written =
      groups.length === 2 &&
      first.digits.length === 3 &&
      /^\s*[-‐−－]\s*$/u.test(text.slice(first.end, last.begin));
    if (marked || written || asked === 'postalCode') return 'postalCode';
  }
  if (spelled && asked === 'bankAccount' && digits.length >= 3 && digits.length <= 8) return 'bankAccount';
  if (spelled && asked === 'idNumber' && digits.length >= 4) return 'idNumber';
  return undefined;
}

/**
 * Spans of every identifying number in one stream, cut back into its utterances. In a run, the longest
 * specific numbers are taken from the left; the groups left over are an identifier when they are seven
 * digits or more said one by one, or when they sit beside a number found in the same run (the rest of
 * it, misheard, or a second number said with it).
 */
export interface NumberOptions {
  /**
   * Only numbers that prove themselves (a phone number's shape, a checksum, `〒`), none that needs the
   * conversation's context and no bare run of digits: for free text such as an error message, where ids,
   * keys and timestamps are digits too. Runs glued to a path, a key or a word are left alone.
   */
  strict?: boolean;
}

/** Characters a number inside an identifier (`E502`, `0123abcd`, `a_123`) touches; in strict mode also paths, keys and versions. */
const GLUED = /[A-Za-z_]/u;
const GLUED_STRICT = /[A-Za-z_/\\.=:-]/u;

export function numberSpans(
  utterances: readonly DetectionUtterance[],
  stream: SpeakerStream,
  options: NumberOptions = {},
): Span[] {
  const glued = options.strict ? GLUED_STRICT : GLUED;
  const spans: Span[] = [];
  const emit = (groups: readonly DigitGroup[], kind: BuiltInKind) => {
    // One part per utterance, from its first group to its last (the separators around stay).
    const parts = new Map<StreamPiece, DigitGroup[]>();
    for (const g of groups) {
      const piece = pieceAt(stream, g.begin);
      parts.set(piece, [...(parts.get(piece) ?? []), g]);
    }
    const all = [...parts.values()];
    all.forEach((part, i) => {
      spans.push(
        ...cutStreamSpan(utterances, stream, {
          begin: part[0]!.begin,
          end: part[part.length - 1]!.end,
          kind,
          source: 'pattern',
          digits: i === all.length - 1 ? digitsOf(groups) : '',
        }),
      );
    });
  };
  for (const run of digitRuns(stream.text)) {
    const { groups } = run;
    const before = stream.text[run.begin - 1];
    const after = stream.text[run.end];
    if ((before && glued.test(before)) || (after && glued.test(after))) continue;
    let rest: DigitGroup[] = [];
    let foundAny = false;
    const flushRest = (beside: boolean) => {
      const last = rest[rest.length - 1];
      const spelled = rest.every((g) => !g.positional);
      const long = digitsOf(rest).length >= MIN_IDENTIFIER_DIGITS;
      if (last && spelled && (beside || long) && !options.strict && !followedByUnit(stream.text, last.end)) {
        emit(rest, 'idNumber');
      }
      rest = [];
    };
    for (let i = 0; i < groups.length;) {
      const asked = options.strict
        ? undefined
        : askedFor(streamContext(utterances, stream, groups[i]!.begin));
      let found: { j: number; kind: BuiltInKind } | undefined;
      for (let j = Math.min(groups.length, i + MAX_GROUPS) - 1; j >= i && !found; j--) {
        const whole = i === 0 && j === groups.length - 1;
        const kind = specificKind({ groups: groups.slice(i, j + 1), text: stream.text, asked, whole });
        if (kind) found = { j, kind };
      }
      if (found) {
        flushRest(true);
        foundAny = true;
        emit(groups.slice(i, found.j + 1), found.kind);
        i = found.j + 1;
      } else {
        rest.push(groups[i]!);
        i++;
      }
    }
    flushRest(foundAny);
  }
  return spans;
}
