/**
 * Digits said one group after another, as people give a number on the phone: `ゼロ九ゼロの一二三四の
 * 五六七八`, `090-1234-5678`, `〇九〇、えー、一二三四…`. Numeral tokens (numerals.ts) join into one run
 * when nothing but separators lies between them: spaces, hyphens and dashes (and the long-vowel mark
 * used as one), `の`, `、`, the word `ハイフン`, and the fillers people say while they look a number up.
 * A run across two utterances is the caller's business: it passes their texts joined by a line break.
 */
import { numeralTokens, type NumeralToken } from './numerals.ts';

export interface DigitGroup {
  digits: string;
  begin: number;
  end: number;
  /** Said as a quantity (`千二百三十四`), not digit by digit. */
  positional: boolean;
}

export interface DigitRun {
  begin: number;
  end: number;
  groups: DigitGroup[];
}

/**
 * What may stand between two groups of one number. Not `.` or `/`: those make decimals and dates, and
 * a date's digits are not an identifier.
 */
const SEPARATOR =
  /^(?:[\s\-‐‑‒–—―−ーｰ－~〜・,，、]|の|ノ|ハイフン|はいふん|ダッシュ|えー*っ?と|えっと|えー+|あのー*|あー+|んー+|まあ)*$/u;
/** A gap longer than this between two groups is a pause in the conversation, not in the number. */
const MAX_SEPARATOR_CHARS = 12;

function separates(text: string): boolean {
  return text.length <= MAX_SEPARATOR_CHARS && SEPARATOR.test(text);
}

/** Every run of numeral tokens joined by separators, in order. */
export function digitRuns(text: string, tokens: NumeralToken[] = numeralTokens(text)): DigitRun[] {
  const runs: DigitRun[] = [];
  let current: DigitRun | undefined;
  for (const token of tokens) {
    const group: DigitGroup = {
      digits: token.digits,
      begin: token.begin,
      end: token.end,
      positional: token.positional,
    };
    if (current && separates(text.slice(current.end, token.begin))) {
      current.groups.push(group);
      current.end = token.end;
    } else {
      current = { begin: token.begin, end: token.end, groups: [group] };
      runs.push(current);
    }
  }
  return runs;
}

export function digitsOf(groups: readonly DigitGroup[]): string {
  return groups.map((g) => g.digits).join('');
}

/**
 * Counters and units that make the number before them a quantity (a price, a time, a count): such a
 * run is not an identifier, however many digits it has.
 */
const UNIT_AFTER =
  /^\s*(?:円|万|億|年|月|日|時|分|秒|歳|才|件|個|回|人|名|台|枚|本|倍|割|%|％|度|階|週|ヶ月|か月|カ月|キロ|メートル|グラム|ギガ|ポイント|点|GB|MB)/u;

export function followedByUnit(text: string, end: number): boolean {
  return UNIT_AFTER.test(text.slice(end, end + 8));
}
