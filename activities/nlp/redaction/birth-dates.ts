/**
 * Dates that are birth dates: a date (`千九百八十五年四月十日`, `昭和六十年四月十日`, `1985/4/10`,
 * `S60.4.10`, `四月十日`, `平成元年生まれ`) said where a birth date was asked for or given (`生年月日`,
 * `誕生日`, `お生まれ` in the last few utterances, or `生まれ` right after it). Any other date (a
 * delivery, a visit, a billing month) stays: it is what the call is about.
 */
import {
  contextBefore,
  cutStreamSpan,
  streamContext,
  type DetectionUtterance,
  type Span,
  type SpeakerStream,
} from './call-streams.ts';
import { originalSpan, textView } from './numerals.ts';

const ERA = '(?:明治|大正|昭和|平成|令和)';
const D = '\\d{1,2}';
const SEP = '\\s*[/／.．\\-－]\\s*';
const DATE = new RegExp(
  [
    `${ERA}\\s*(?:元|${D})\\s*年(?:\\s*${D}\\s*月(?:\\s*${D}\\s*日)?)?`,
    `\\d{2,4}\\s*年\\s*${D}\\s*月(?:\\s*${D}\\s*日)?`,
    `${D}\\s*月\\s*${D}\\s*日`,
    `\\d{4}${SEP}${D}${SEP}${D}`,
    `[MTSHRmtshr]\\s*${D}${SEP}${D}${SEP}${D}`,
    `\\d{2,4}\\s*年`,
  ].join('|'),
  'gu',
);

/** Words that make a date near them a birth date. */
const BIRTH_CONTEXT = /生年月日|誕生日|お生まれ|生まれ|生誕|バースデー/u;
/** Said right after the date: `…年生まれ`, `…日生` (as forms write it). */
const BIRTH_AFTER = /^\s*(?:の)?\s*(?:生まれ|生)/u;
/** A year alone is a birth date only when `生まれ` follows it; with a month it may be asked for. */
const YEAR_ONLY = /^[^月]*年\s*$/u;

function plausible(date: string): boolean {
  const month = /(\d{1,2})\s*月/u.exec(date)?.[1];
  const day = /(\d{1,2})\s*日/u.exec(date)?.[1];
  const slashed = /\d+\s*[/／.．\-－]\s*(\d{1,2})\s*[/／.．\-－]\s*(\d{1,2})/u.exec(date);
  const m = Number(month ?? slashed?.[1] ?? 1);
  const d = Number(day ?? slashed?.[2] ?? 1);
  return m >= 1 && m <= 12 && d >= 1 && d <= 31;
}

/** Birth dates in one stream, cut back into its utterances. */
export function birthDateSpans(utterances: readonly DetectionUtterance[], stream: SpeakerStream): Span[] {
  const view = textView(stream.text);
  const spans: Span[] = [];
  for (const m of view.text.matchAll(DATE)) {
    const date = m[0];
    if (!plausible(date)) continue;
    const { begin, end } = originalSpan(view, m.index, m.index + date.length);
    const after = BIRTH_AFTER.test(stream.text.slice(end, end + 6));
    const asked = BIRTH_CONTEXT.test(streamContext(utterances, stream, begin));
    if (!(after || (asked && !YEAR_ONLY.test(date)))) continue;
    spans.push(...cutStreamSpan(utterances, stream, { begin, end, kind: 'birthDate', source: 'pattern' }));
  }
  return spans;
}

/** Whether a date found at [begin, end) of the utterance at `position` (time order) is a birth date. */
export function isBirthDate(
  utterances: readonly DetectionUtterance[],
  position: number,
  begin: number,
  end: number,
): boolean {
  const text = utterances[position]!.text;
  return (
    BIRTH_AFTER.test(text.slice(end, end + 6)) ||
    BIRTH_CONTEXT.test(contextBefore(utterances, position, begin))
  );
}
