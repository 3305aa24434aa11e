/**
 * The text features of the emulator's classifiers: character 1- to 3-grams (Japanese has no spaces to
 * split words at) of the NFKC-normalized, lower-cased text, punctuation read as a word break.
 */
function normalized(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\s、。，．,.!?！？「」『』（）()・〈〉]+/g, ' ')
    .trim();
}

/** Character 1-, 2- and 3-grams of a text (spaces separate, never joined across). */
export function charNgrams(text: string): string[] {
  const out: string[] = [];
  for (const word of normalized(text).split(' ')) {
    const cs = [...word];
    for (let n = 1; n <= 3; n++)
      for (let i = 0; i + n <= cs.length; i++) out.push(cs.slice(i, i + n).join(''));
  }
  return out;
}
