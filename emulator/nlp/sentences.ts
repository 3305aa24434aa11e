/** Sentence splitting for `do_segment` and summarization: after 。！？!? and at line ends. */
export function splitSentences(text: string, alsoOnSpaces = false): string[] {
  const out: string[] = [];
  let current = '';
  for (const ch of text) {
    if (ch === '\n' || ch === '\r' || (alsoOnSpaces && /\s/.test(ch))) {
      if (current.trim()) out.push(current.trim());
      current = '';
      continue;
    }
    current += ch;
    if (/[。！？!?]/.test(ch)) {
      if (current.trim()) out.push(current.trim());
      current = '';
    }
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

/** Content words for keywords and summary scoring: runs of kanji, katakana or Latin letters and digits. */
const CONTENT =
  /[\u4e00-\u9fff々〆]+(?:[き][\u4e00-\u9fff]+)?|[\u30a1-\u30fa\u30fc]{2,}|[A-Za-z][A-Za-z0-9]+/g;
/** Words too common to be keywords (pronouns of the first person, formal nouns, time words). */
const STOP = new Set([
  '私',
  '事',
  '時',
  '方',
  '何',
  '今',
  '前',
  '後',
  '中',
  '上',
  '下',
  '等',
  '様',
  '者',
  '物',
  '所',
  '一',
  '二',
  '三',
]);

export function contentWords(text: string): { word: string; index: number }[] {
  const out: { word: string; index: number }[] = [];
  for (const m of text.matchAll(CONTENT)) {
    if (!STOP.has(m[0])) out.push({ word: m[0], index: m.index });
  }
  return out;
}
