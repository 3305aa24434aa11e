/**
 * `/nlp/v1/sentiment` (spec 01, "Sentiment analysis"): a polarity lexicon with the spec's emotion labels.
 * An emulation, deterministic: each lexicon word found is an emotional phrase; its form runs on over the
 * kana that follow it up to punctuation (`好き` + `です` → `好きです`, as recorded); a negation in that
 * tail (ない, ません, なく) turns the polarity over. The sentiment is the sign of the sum of polarities,
 * the score grows with its size (one positive phrase ≈ 0.45, as the recorded 0.47).
 */
interface Entry {
  word: string;
  emotion: string;
  polarity: 1 | -1;
}

const LEXICON: Entry[] = [
  { word: '好き', emotion: 'P', polarity: 1 },
  { word: 'うれしい', emotion: '喜ぶ', polarity: 1 },
  { word: '嬉しい', emotion: '喜ぶ', polarity: 1 },
  { word: '助かり', emotion: '安心,喜ぶ', polarity: 1 },
  { word: '安心', emotion: '安心', polarity: 1 },
  { word: 'ありがとう', emotion: '喜ぶ', polarity: 1 },
  { word: '感謝', emotion: '喜ぶ,好ましい', polarity: 1 },
  { word: '満足', emotion: '喜ぶ', polarity: 1 },
  { word: 'よかった', emotion: '安心,喜ぶ', polarity: 1 },
  { word: '良かった', emotion: '安心,喜ぶ', polarity: 1 },
  { word: 'わかりやすかった', emotion: '好ましい', polarity: 1 },
  { word: 'わかりやすい', emotion: '好ましい', polarity: 1 },
  { word: '丁寧', emotion: '好ましい', polarity: 1 },
  { word: '親切', emotion: '好ましい', polarity: 1 },
  { word: '楽しい', emotion: '喜ぶ', polarity: 1 },
  { word: '素晴らしい', emotion: 'P', polarity: 1 },
  { word: '納得', emotion: '安心', polarity: 1 },
  { word: '直りました', emotion: '安心,喜ぶ', polarity: 1 },
  { word: '困って', emotion: '不安', polarity: -1 },
  { word: '腹が立', emotion: '怒る', polarity: -1 },
  { word: 'いい加減', emotion: '怒る', polarity: -1 },
  { word: '不安', emotion: '不安', polarity: -1 },
  { word: 'がっかり', emotion: '悲しい', polarity: -1 },
  { word: '残念', emotion: '悲しい', polarity: -1 },
  { word: '嫌', emotion: '嫌', polarity: -1 },
  { word: '疲れ', emotion: 'N', polarity: -1 },
  { word: '高すぎ', emotion: '嫌', polarity: -1 },
  { word: 'わかりにくい', emotion: '嫌', polarity: -1 },
  { word: '壊れ', emotion: '悲しい', polarity: -1 },
  { word: '不満', emotion: '怒る', polarity: -1 },
  { word: '迷惑', emotion: '嫌', polarity: -1 },
  { word: '不便', emotion: '嫌', polarity: -1 },
  { word: '待たされ', emotion: '怒る', polarity: -1 },
  { word: '使いたくない', emotion: '嫌', polarity: -1 },
  { word: '驚き', emotion: '驚く', polarity: 1 },
  { word: '大変', emotion: '切ない', polarity: -1 },
];

const NEGATION = /ない|ません|なく|ず$/;

export interface SentimentResult {
  sentiment: 'Positive' | 'Negative' | 'Neutral';
  score: number;
  emotional_phrase: { form: string; emotion: string }[];
}

export function analyzeSentiment(sentence: string): SentimentResult {
  const found: { index: number; form: string; emotion: string; polarity: number }[] = [];
  const taken = new Array<boolean>(sentence.length).fill(false);
  // Longest words first so `わかりやすかった` is not also counted as a shorter entry.
  for (const entry of [...LEXICON].sort((a, b) => b.word.length - a.word.length)) {
    for (let i = sentence.indexOf(entry.word); i >= 0; i = sentence.indexOf(entry.word, i + 1)) {
      if (taken[i]) continue;
      let end = i + entry.word.length;
      while (
        end < sentence.length &&
        end - i < entry.word.length + 6 &&
        /[\u3041-\u3096]/.test(sentence[end]!)
      )
        end++;
      for (let k = i; k < end; k++) taken[k] = true;
      const form = sentence.slice(i, end);
      const tail = form.slice(entry.word.length);
      const negated = entry.polarity > 0 && NEGATION.test(tail);
      found.push({
        index: i,
        form,
        emotion: negated ? 'N' : entry.emotion,
        polarity: negated ? -entry.polarity : entry.polarity,
      });
    }
  }
  found.sort((a, b) => a.index - b.index);
  const sum = found.reduce((s, f) => s + f.polarity, 0);
  const sentiment = sum > 0 ? 'Positive' : sum < 0 ? 'Negative' : 'Neutral';
  const score = sum === 0 ? 0 : Math.round((1 - 0.55 ** Math.abs(sum)) * 1e6) / 1e6;
  return { sentiment, score, emotional_phrase: found.map(({ form, emotion }) => ({ form, emotion })) };
}
