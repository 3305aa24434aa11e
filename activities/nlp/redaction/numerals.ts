/**
 * Numbers as a recognizer writes them, read back as digits: ASCII and full-width digits (`090`, `０９０`),
 * kanji numerals said digit by digit (`〇九〇`, `零`) or as a quantity (`千九百八十五` → 1985), and digits
 * spelled in kana (`ゼロキューゼロ`, `いちにさん`). Every token keeps its place in the original text, so
 * what a detector finds in the digits can be masked in the words.
 *
 * Kana readings are also ordinary words (`サンゴ`, `しごと`), so a katakana word counts only when all of
 * it spells digits, and hiragana only as three readings or more in a row. A stray digit costs nothing:
 * every detector asks for more digits than words like these give.
 */

export interface NumeralToken {
  /** UTF-16 offsets in the text. */
  begin: number;
  end: number;
  /** The ASCII digits it stands for. */
  digits: string;
  /** Read as a quantity (`千九百八十五`, `三十`), not digit by digit. */
  positional: boolean;
}

const KANJI_DIGITS: Readonly<Record<string, number>> = {
  〇: 0,
  零: 0,
  一: 1,
  二: 2,
  三: 3,
  四: 4,
  五: 5,
  六: 6,
  七: 7,
  八: 8,
  九: 9,
};
const KANJI_UNITS: Readonly<Record<string, number>> = { 十: 10, 百: 100, 千: 1000 };
const KANJI_MYRIADS: Readonly<Record<string, number>> = { 万: 10_000, 億: 100_000_000 };

/** Readings of the digits, longest first within each script (a greedy match must prefer `キュウ` to `ク`). */
const KATAKANA_READINGS: readonly (readonly [string, string])[] = [
  ['キュウ', '9'],
  ['キュー', '9'],
  ['ゼロ', '0'],
  ['レイ', '0'],
  ['マル', '0'],
  ['イチ', '1'],
  ['サン', '3'],
  ['ヨン', '4'],
  ['ロク', '6'],
  ['ナナ', '7'],
  ['シチ', '7'],
  ['ハチ', '8'],
  ['ニー', '2'],
  ['ゴー', '5'],
  ['ニ', '2'],
  ['シ', '4'],
  ['ヨ', '4'],
  ['ゴ', '5'],
  ['ク', '9'],
];
const HIRAGANA_READINGS: readonly (readonly [string, string])[] = KATAKANA_READINGS.map(([k, d]) => [
  [...k].map((c) => (c === 'ー' ? c : String.fromCharCode(c.charCodeAt(0) - 0x60))).join(''),
  d,
]);
/**
 * Hiragana digits count only this many in a row, this many of them longer than one character (`に`,
 * `し`, `く`, `ご`, `よ` are particles and word parts far more often than digits): `にさんにち` stays.
 */
const MIN_HIRAGANA_READINGS = 3;
const MIN_LONG_HIRAGANA_READINGS = 2;

const isAsciiDigit = (c: string) => c >= '0' && c <= '9';
const isWideDigit = (c: string) => c >= '０' && c <= '９';
const isKanjiNumeral = (c: string) => c in KANJI_DIGITS || c in KANJI_UNITS || c in KANJI_MYRIADS;
const isKatakana = (c: string) => (c >= '\u30A1' && c <= '\u30FA') || c === 'ー';
const isHiragana = (c: string) => (c >= '\u3041' && c <= '\u3096') || c === 'ー';

/** The value of a kanji number with units (`千九百八十五` → 1985, `二万三千` → 23000). */
export function kanjiValue(text: string): number {
  let total = 0;
  let section = 0;
  let digit: number | undefined;
  for (const c of text) {
    if (c in KANJI_DIGITS) digit = (digit ?? 0) * 10 + KANJI_DIGITS[c]!;
    else if (c in KANJI_UNITS) {
      section += (digit ?? 1) * KANJI_UNITS[c]!;
      digit = undefined;
    } else if (c in KANJI_MYRIADS) {
      total += (section + (digit ?? 0) || 1) * KANJI_MYRIADS[c]!;
      section = 0;
      digit = undefined;
    }
  }
  return total + section + (digit ?? 0);
}

function kanjiToken(text: string, begin: number, end: number): NumeralToken {
  const run = text.slice(begin, end);
  const positional = [...run].some((c) => !(c in KANJI_DIGITS));
  const digits = positional ? String(kanjiValue(run)) : [...run].map((c) => String(KANJI_DIGITS[c])).join('');
  return { begin, end, digits, positional };
}

/** The readings a katakana word decomposes into, all of it, or undefined. `ノ` separates. */
function katakanaTokens(text: string, begin: number, end: number): NumeralToken[] | undefined {
  const tokens: NumeralToken[] = [];
  let i = begin;
  let current: NumeralToken | undefined;
  while (i < end) {
    if (text[i] === 'ノ') {
      current = undefined;
      i++;
      continue;
    }
    const reading = KATAKANA_READINGS.find(([r]) => text.startsWith(r, i) && i + r.length <= end);
    if (!reading) return undefined;
    let next = i + reading[0].length;
    while (next < end && text[next] === 'ー') next++; // lengthened: キューー, ゼロー
    if (current) {
      current.digits += reading[1];
      current.end = next;
    } else {
      current = { begin: i, end: next, digits: reading[1], positional: false };
      tokens.push(current);
    }
    i = next;
  }
  return tokens.length > 0 ? tokens : undefined;
}

/** Runs of at least three hiragana readings inside a hiragana stretch. */
function hiraganaTokens(text: string, begin: number, end: number): NumeralToken[] {
  const tokens: NumeralToken[] = [];
  let i = begin;
  while (i < end) {
    let j = i;
    let digits = '';
    let count = 0;
    let long = 0;
    for (;;) {
      const reading = HIRAGANA_READINGS.find(([r]) => text.startsWith(r, j) && j + r.length <= end);
      if (!reading) break;
      j += reading[0].length;
      while (j < end && text[j] === 'ー') j++;
      digits += reading[1];
      count++;
      if (reading[0].length > 1) long++;
    }
    if (count >= MIN_HIRAGANA_READINGS && long >= MIN_LONG_HIRAGANA_READINGS) {
      tokens.push({ begin: i, end: j, digits, positional: false });
      i = j;
    } else i++;
  }
  return tokens;
}

/** Every number-like token of `text`, in order. */
export function numeralTokens(text: string): NumeralToken[] {
  const tokens: NumeralToken[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    let j = i + 1;
    if (isAsciiDigit(c) || isWideDigit(c)) {
      while (j < text.length && (isAsciiDigit(text[j]!) || isWideDigit(text[j]!))) j++;
      const digits = text.slice(i, j).normalize('NFKC');
      tokens.push({ begin: i, end: j, digits, positional: false });
    } else if (isKanjiNumeral(c)) {
      while (j < text.length && isKanjiNumeral(text[j]!)) j++;
      tokens.push(kanjiToken(text, i, j));
    } else if (isKatakana(c) && c !== 'ー') {
      while (j < text.length && isKatakana(text[j]!)) j++;
      tokens.push(...(katakanaTokens(text, i, j) ?? []));
    } else if (isHiragana(c) && c !== 'ー') {
      while (j < text.length && isHiragana(text[j]!)) j++;
      tokens.push(...hiraganaTokens(text, i, j));
    }
    i = j;
  }
  return tokens;
}

/**
 * A text as detectors read it: NFKC (full-width letters and digits to ASCII), every numeral token
 * written as its ASCII digits, and, for e-mail addresses, the words for `@` `.` `-` `_` as the
 * symbols; with the original offsets of every character, so a match maps back to the words.
 */
export interface TextView {
  text: string;
  /** Original start of each view character. */
  from: number[];
  /** Original end of each view character. */
  to: number[];
}

export interface ViewOptions {
  /** Write numeral tokens as ASCII digits (default true). */
  numerals?: boolean;
  /** `アットマーク` → `@`, `ドット` → `.`, `ハイフン` → `-`, `アンダーバー` → `_`, the spaces around them dropped. */
  spokenSymbols?: boolean;
  lowerCase?: boolean;
}

const SPOKEN_SYMBOLS: readonly (readonly [string, string])[] = [
  ['アットマーク', '@'],
  ['アット', '@'],
  ['ドット', '.'],
  ['ハイフン', '-'],
  ['アンダーバー', '_'],
  ['アンダースコア', '_'],
];

export function textView(text: string, options: ViewOptions = {}): TextView {
  const numerals = options.numerals ?? true;
  const tokens = numerals ? numeralTokens(text) : [];
  const view: TextView = { text: '', from: [], to: [] };
  const push = (s: string, from: number, to: number) => {
    // One entry per UTF-16 unit, as the view's string indexes it.
    for (let k = 0; k < s.length; k++) {
      view.from.push(from);
      view.to.push(to);
    }
    view.text += s;
  };
  let t = 0;
  let i = 0;
  while (i < text.length) {
    const token = tokens[t];
    if (token && token.begin === i) {
      push(token.digits, token.begin, token.end);
      i = token.end;
      t++;
      continue;
    }
    if (options.spokenSymbols) {
      const spoken = SPOKEN_SYMBOLS.find(([word]) => text.startsWith(word, i));
      if (spoken) {
        push(spoken[1], i, i + spoken[0].length);
        i += spoken[0].length;
        continue;
      }
      // Spaces around a spoken symbol are the recognizer's, not the address's: `yamada アット example`.
      if (/\s/u.test(text[i]!)) {
        let j = i;
        while (j < text.length && /\s/u.test(text[j]!)) j++;
        const next = text.slice(j);
        const symbolAfter = /^[@＠.．]/u.test(next) || SPOKEN_SYMBOLS.some(([word]) => next.startsWith(word));
        const symbolBefore =
          /[@.\-_]$/u.test(view.text) && SPOKEN_SYMBOLS.some(([word]) => text.slice(0, i).endsWith(word));
        if (symbolAfter || symbolBefore) {
          i = j;
          continue;
        }
      }
    }
    const code = text.codePointAt(i)!;
    const width = code > 0xffff ? 2 : 1;
    let ch = String.fromCodePoint(code).normalize('NFKC');
    if (options.lowerCase) ch = ch.toLowerCase();
    push(ch, i, i + width);
    i += width;
  }
  return view;
}

/** The original span of view characters [begin, end). */
export function originalSpan(view: TextView, begin: number, end: number): { begin: number; end: number } {
  return { begin: view.from[begin]!, end: view.to[end - 1]! };
}
