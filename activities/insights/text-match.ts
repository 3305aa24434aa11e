/**
 * Phrase matching for call insights (hold phrases, phrase rules): a term matches an utterance when its
 * normalized form occurs in the utterance's normalized text. Normalizing folds what recognition and
 * people vary on without changing what was said: width (NFKC: `ＡＢＣ１` = `ABC1`, half-width `ｶﾅ` = `カナ`),
 * kana (katakana read as hiragana: `アリガトウ` = `ありがとう`), case, and the spaces and punctuation
 * recognition inserts or drops (`お待たせ いたしました。` = `お待たせいたしました`). Pure.
 */

/** Spaces and punctuation, ASCII and Japanese, ignored when matching. */
const IGNORED = /[\s\p{P}\p{S}]/gu;
/** Katakana ァ (U+30A1) … ヶ (U+30F6) sit 0x60 above their hiragana. */
const KATAKANA = /[\u30A1-\u30F6]/g;

export function normalizeForMatch(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(KATAKANA, (c) => String.fromCharCode(c.charCodeAt(0) - 0x60))
    .replace(IGNORED, '');
}

/** Characters that carry speech: what speech rate counts (no spaces, no punctuation). */
export function spokenCharacters(text: string): number {
  return [...text.normalize('NFKC').replace(IGNORED, '')].length;
}

/** A set of terms, normalized once, matched against many texts. */
export class PhraseMatcher {
  private readonly terms: string[];

  constructor(terms: readonly string[]) {
    this.terms = terms.map(normalizeForMatch).filter((t) => t !== '');
  }

  /** The terms (normalized) found in `text`. */
  found(text: string): string[] {
    const normalized = normalizeForMatch(text);
    return this.terms.filter((t) => normalized.includes(t));
  }

  matches(text: string): boolean {
    return this.found(text).length > 0;
  }
}
