/**
 * Rough word boundaries and readings for recognition output, without a morphological analyser (none is
 * available offline). Boundaries fall where the script changes (kanji, hiragana, katakana, Latin and
 * digits, punctuation), except that hiragana after kanji stays with it (okurigana and particles), so
 * `お電話ありがとうございます` becomes `お 電話ありがとうございます`. Enough for `baseParam.delimiter`
 * to put spaces where a reader expects some; not a tokenizer.
 */
type Script = 'kanji' | 'hiragana' | 'katakana' | 'latin' | 'punct' | 'space' | 'atom' | 'other';

/**
 * A private-use character stands for a word that must stay whole (a dictionary word's surface, which
 * may hold spaces, Latin letters and punctuation: `ホームWi-Fi`): it is a word of its own.
 */
export const ATOM = /[\uE000-\uF8FF]/u;

function scriptOf(ch: string): Script {
  const c = ch.codePointAt(0)!;
  if (ATOM.test(ch)) return 'atom';
  if (/\s/.test(ch)) return 'space';
  if ((c >= 0x3041 && c <= 0x309f) || ch === 'ー') return 'hiragana';
  if (c >= 0x30a0 && c <= 0x30ff) return 'katakana';
  if ((c >= 0x4e00 && c <= 0x9fff) || ch === '々' || ch === '〆') return 'kanji';
  if (/[A-Za-z0-9Ａ-Ｚａ-ｚ０-９]/.test(ch)) return 'latin';
  if (/[、。，．！？!?,.「」『』（）()［］[\]・…]/.test(ch)) return 'punct';
  return 'other';
}

export function splitWords(text: string): string[] {
  const words: string[] = [];
  let current = '';
  let prev: Script | undefined;
  for (const ch of text) {
    // A lengthening mark belongs to the script before it (インター, えー).
    const s = ch === 'ー' && prev !== undefined && prev !== 'punct' ? prev : scriptOf(ch);
    if (s === 'space') {
      if (current) words.push(current);
      current = '';
      prev = undefined;
      continue;
    }
    const joins =
      prev !== undefined &&
      s !== 'punct' &&
      prev !== 'punct' &&
      s !== 'atom' &&
      prev !== 'atom' &&
      (s === prev || (prev === 'kanji' && s === 'hiragana'));
    if (!joins && current) {
      words.push(current);
      current = '';
    }
    current += ch;
    prev = s;
  }
  if (current) words.push(current);
  return words;
}

/**
 * Full-width katakana for the kana of a text (spec 02: a reading is full-width katakana): hiragana and
 * half-width katakana (with their voiced marks, `ｶﾞ` → `ガ`) are converted; kanji stay as they are (no
 * reading dictionary offline).
 */
export function toKatakana(text: string): string {
  return text
    .replace(/[\uFF61-\uFF9F]+/g, (run) => run.normalize('NFKC'))
    .replace(/[\u3041-\u3096]/g, (ch) => String.fromCharCode(ch.charCodeAt(0) + 0x60));
}
