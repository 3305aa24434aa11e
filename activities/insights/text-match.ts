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

/**
 * Normalized texts of the utterances lately matched: every phrase rule (and role cue) of a file reads
 * every utterance of the call, so a file of many rules would otherwise normalize each text once per rule.
 * Bounded: emptied when full.
 */
const normalized = new Map<string, string>();
const NORMALIZED_CACHE_ENTRIES = 10_000;

export function normalizeForMatch(text: string): string {
  const known = normalized.get(text);
  if (known !== undefined) return known;
  const value = text
    .normalize('NFKC')
    .toLowerCase()
    .replace(KATAKANA, (c) => String.fromCharCode(c.charCodeAt(0) - 0x60))
    .replace(IGNORED, '');
  if (normalized.size >= NORMALIZED_CACHE_ENTRIES) normalized.clear();
  normalized.set(text, value);
  return value;
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
    const normalized = normalizeForMatch(text);
    return this.terms.some((t) => normalized.includes(t));
  }
}
