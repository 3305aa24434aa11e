/**
 * Phrase matching for call insights (hold phrases, phrase rules): a term matches an utterance when its
 * normalized form occurs in the utterance's normalized text; a rule's pattern (a regular expression of the
 * user's, run on RE2 in linear time: schemas/user-pattern.ts) when it matches that normalized text. Normalizing folds what recognition and
 * people vary on without changing what was said: width (NFKC: `ＡＢＣ１` = `ABC1`, half-width `ｶﾅ` = `カナ`),
 * kana (katakana read as hiragana: `アリガトウ` = `ありがとう`), case, and the spaces and punctuation
 * recognition inserts or drops (`お待たせ いたしました。` = `お待たせいたしました`). Pure.
 */

import { compileUserPattern, type UserPattern } from '../../schemas/user-pattern.ts';

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

/**
 * A pattern as the normalized text reads: its katakana folded to hiragana (`ナンド` finds `なんど`, as the
 * text's own are), case ignored. Width is not folded in the pattern itself: NFKC would turn a full-width
 * `（` into a group; the text it runs on has no punctuation left anyway.
 */
function patternOf(source: string): UserPattern {
  return compileUserPattern(
    source.replace(KATAKANA, (c) => String.fromCharCode(c.charCodeAt(0) - 0x60)),
    { caseInsensitive: true },
  );
}

/** Compiled patterns by source: a rule file's patterns are compiled once per worker, not once per call. */
const compiledPatterns = new Map<string, UserPattern>();
const COMPILED_CACHE_ENTRIES = 2_000;

function cachedPattern(source: string): UserPattern {
  let p = compiledPatterns.get(source);
  if (!p) {
    if (compiledPatterns.size >= COMPILED_CACHE_ENTRIES) compiledPatterns.clear();
    compiledPatterns.set(source, (p = patternOf(source)));
  }
  return p;
}

/** A rule's terms and patterns, matched against many texts: what each text holds of them. */
export class RuleTextMatcher {
  private readonly phrases: PhraseMatcher;
  private readonly patterns: { key: string; re: UserPattern }[];
  /** Every term (normalized) and pattern (`/source/`): what `all` needs found. */
  readonly keys: string[];

  constructor(terms: readonly string[], patterns: readonly string[]) {
    this.phrases = new PhraseMatcher(terms);
    this.patterns = patterns.map((source) => ({ key: `/${source}/`, re: cachedPattern(source) }));
    this.keys = [...new Set([...terms.map(normalizeForMatch), ...patterns.map((p) => `/${p}/`)])];
  }

  /** The terms (normalized) and patterns (`/source/`) found in `text`. */
  found(text: string): string[] {
    const normalized = normalizeForMatch(text);
    return [
      ...this.phrases.found(text),
      ...this.patterns.filter((p) => p.re.test(normalized)).map((p) => p.key),
    ];
  }

  matches(text: string): boolean {
    if (this.phrases.matches(text)) return true;
    const normalized = normalizeForMatch(text);
    return this.patterns.some((p) => p.re.test(normalized));
  }
}
