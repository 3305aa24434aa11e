/** What a start request asks recognition for, and how its text comes back. */

/** Models that take `baseParam.punctuation` (spec 02, Start parameters, behaviour 2). */
const PUNCTUATION_MODELS = new Set(['ja-gen_tf-16', 'ja-gen_tf-08', 'ja-mdl1_nrw-08', 'ja-mdl2_nrw-08']);

/**
 * What we ask recognition for: fillers kept (in brackets, which we drop: the text analysis step decides
 * what a filler is and records them), punctuation where the model offers it (sentences for the summary),
 * and no spaces between Japanese words (spec 02 recommends spaces for English only).
 */
export function recognitionOptionsFor(model: string) {
  const japanese = model.startsWith('ja-');
  return {
    filler: japanese,
    punctuation: PUNCTUATION_MODELS.has(model),
    delimiter: !japanese,
  };
}

/** `[えー]` → `えー`: the raw text keeps what was said. */
export function unbracketFillers(text: string): string {
  return text.replace(/\[([^\]]*)\]/g, '$1');
}
