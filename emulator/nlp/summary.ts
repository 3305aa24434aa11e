/**
 * Summarization (spec 03, "Summarization"): extractive, an emulation. Sentences are scored by how many
 * other sentences share their content words (a centrality measure); the best ones are returned in
 * document order, joined without separator, honouring `sent_len` (number of sentences) or `char_len`
 * (characters; at least one sentence, cut to `char_len` when even the best one is longer).
 *
 * `extract-cc` (the call-center model) also discounts greetings and closings, which say little about
 * the call, and favours sentences about the problem (domain words below).
 */
import { contentWords, splitSentences } from './sentences.ts';

const CC_DISCOUNT =
  /お電話ありがとう|ありがとうございました|失礼いたします|失礼します|少々お待ち|お待たせ|よろしくお願い|もしもし/;
const CC_DOMAIN =
  /請求|料金|解約|契約|故障|修理|交換|返品|返金|配送|注文|回線|接続|エラー|ログイン|パスワード|プラン|割引|障害|保証|機種/;

export function summarize(
  document: string,
  mode: 'extract' | 'extract-cc',
  limit: { sentLen?: number; charLen?: number },
): string {
  const sentences = splitSentences(document);
  if (sentences.length === 0) return '';
  const words = sentences.map((s) => new Set(contentWords(s).map((w) => w.word)));
  const df = new Map<string, number>();
  for (const set of words) for (const w of set) df.set(w, (df.get(w) ?? 0) + 1);
  const scored = sentences.map((s, i) => {
    let score = 0;
    for (const w of words[i]!) score += df.get(w)! - 1 + 0.1;
    if (mode === 'extract-cc') {
      if (CC_DISCOUNT.test(s)) score *= 0.3;
      if (CC_DOMAIN.test(s)) score = score * 1.5 + 1;
    }
    return { i, s, score };
  });
  const ranked = [...scored].sort((a, b) => b.score - a.score || a.i - b.i);
  let chosen: typeof scored;
  if (limit.sentLen !== undefined) chosen = ranked.slice(0, limit.sentLen);
  else {
    const max = limit.charLen ?? Infinity;
    chosen = [];
    let total = 0;
    for (const r of ranked) {
      if (total + r.s.length > max) continue;
      chosen.push(r);
      total += r.s.length;
    }
    if (chosen.length === 0) return [...ranked[0]!.s].slice(0, max).join('');
  }
  return chosen
    .sort((a, b) => a.i - b.i)
    .map((c) => c.s)
    .join('');
}
