/**
 * `/nlp/v1/sentiment` (spec 01, "Sentiment analysis"): a polarity lexicon with the spec's emotion labels.
 * An emulation, deterministic: each lexicon word found with an inflection of its kind is an emotional
 * phrase. The phrase (`form`, its notation) is the word with its whole inflection and the auxiliaries
 * that follow it (polite, past, negative, progressive: `好き` + `です`, as recorded; `楽し` + `くなかった` +
 * `です`), and ends where the clause goes on (a particle such as ので, けど) or at punctuation. A
 * negation in it turns a positive word over (emotion `N`) and makes a negative word neutral (no
 * phrase). The sentiment is the sign of the sum of polarities, the score grows with its size (one
 * positive phrase ≈ 0.45, as the recorded 0.47).
 */

/**
 * How a word inflects, by the endings that may follow its stem (the first piece of its inflection):
 * i-adjectives, godan verbs in r and t and k, ichidan verbs (and passives), nouns and na-adjectives
 * (with the copula or する; a `predicate` noun only so, where the bare word is an adverb: `大変うれしい`
 * is not 大変), and fixed words (only the auxiliaries follow).
 */
type Kind = 'adjective' | 'godan-r' | 'godan-t' | 'godan-k' | 'ichidan' | 'noun' | 'predicate' | 'fixed';

interface Entry {
  /** The stem: the word without its inflecting ending (`楽し` of 楽しい, `助か` of 助かる). */
  stem: string;
  kind: Kind;
  emotion: string;
  polarity: 1 | -1;
}

const FIRST: Record<Kind, readonly string[]> = {
  adjective: [
    'かった',
    'くなかった',
    'くない',
    'くありません',
    'くて',
    'く',
    'い',
    'ければ',
    'そう',
    'さ',
    'すぎ',
    'すぎる',
  ],
  'godan-r': ['りました', 'ります', 'りません', 'る', 'った', 'って', 'らない', 'らなかった', 'れば'],
  'godan-t': ['ちました', 'ちます', 'ちません', 'つ', 'った', 'って', 'たない', 'たなかった'],
  'godan-k': ['きました', 'きます', 'きません', 'き', 'く', 'いた', 'いて', 'かない', 'かなかった'],
  ichidan: ['ました', 'ます', 'ません', 'る', 'た', 'て', 'ない', 'なかった', 'れば', 'ず', ''],
  noun: [
    'でした',
    'です',
    'だった',
    'だ',
    'な',
    'に',
    'でない',
    'ではない',
    'ではなかった',
    'ではありません',
    'じゃない',
    'じゃなかった',
    'じゃありません',
    'はありません',
    'はない',
    'がない',
    'がありません',
    'され',
    'しました',
    'します',
    'しません',
    'しない',
    'しなかった',
    'した',
    'して',
    'できました',
    'できます',
    'できません',
    'できない',
    'できなかった',
    '',
  ],
  predicate: ['でした', 'です', 'だった', 'だ', 'な', 'でしたね', 'ですね'],
  fixed: [''],
};

/** What may follow the first piece: polite, past, negative and progressive auxiliaries, sentence ends. */
const AUXILIARIES = [
  'ございました',
  'ございます',
  'ございません',
  'いました',
  'います',
  'いません',
  'いる',
  'いた',
  'おります',
  'おりました',
  'しまいました',
  'しまった',
  'しまう',
  'ませんでした',
  'ました',
  'ます',
  'ません',
  'でした',
  'です',
  'だった',
  'だ',
  'なかった',
  'ない',
  'た',
  'て',
  'ね',
  'よ',
];

/** A negation in the inflection. */
const NEGATION = /な(?:い|かった|く)|ません|ず$|はありません|はない/;
const COMPOUND_NEXT = /[\p{Script=Han}\p{Script=Katakana}ー]/u;
/** What follows a negation asked back: `か`, `？`. */
const RHETORICAL = /^(?:か|？|\?)/;

const LEXICON: Entry[] = [
  { stem: '好き', kind: 'noun', emotion: 'P', polarity: 1 },
  { stem: 'うれし', kind: 'adjective', emotion: '喜ぶ', polarity: 1 },
  { stem: '嬉し', kind: 'adjective', emotion: '喜ぶ', polarity: 1 },
  { stem: '助か', kind: 'godan-r', emotion: '安心,喜ぶ', polarity: 1 },
  { stem: '安心', kind: 'noun', emotion: '安心', polarity: 1 },
  { stem: 'ありがとう', kind: 'fixed', emotion: '喜ぶ', polarity: 1 },
  { stem: '感謝', kind: 'noun', emotion: '喜ぶ,好ましい', polarity: 1 },
  { stem: '満足', kind: 'noun', emotion: '喜ぶ', polarity: 1 },
  { stem: 'よかった', kind: 'fixed', emotion: '安心,喜ぶ', polarity: 1 },
  { stem: '良', kind: 'adjective', emotion: '安心,喜ぶ', polarity: 1 },
  { stem: 'わかりやす', kind: 'adjective', emotion: '好ましい', polarity: 1 },
  { stem: '分かりやす', kind: 'adjective', emotion: '好ましい', polarity: 1 },
  { stem: '丁寧', kind: 'noun', emotion: '好ましい', polarity: 1 },
  { stem: '親切', kind: 'noun', emotion: '好ましい', polarity: 1 },
  { stem: '楽し', kind: 'adjective', emotion: '喜ぶ', polarity: 1 },
  { stem: '素晴らし', kind: 'adjective', emotion: 'P', polarity: 1 },
  { stem: '納得', kind: 'noun', emotion: '安心', polarity: 1 },
  { stem: '直', kind: 'godan-r', emotion: '安心,喜ぶ', polarity: 1 },
  { stem: '困', kind: 'godan-r', emotion: '不安', polarity: -1 },
  { stem: '腹が立', kind: 'godan-t', emotion: '怒る', polarity: -1 },
  { stem: 'いい加減', kind: 'noun', emotion: '怒る', polarity: -1 },
  { stem: '不安', kind: 'noun', emotion: '不安', polarity: -1 },
  { stem: 'がっかり', kind: 'noun', emotion: '悲しい', polarity: -1 },
  { stem: '残念', kind: 'noun', emotion: '悲しい', polarity: -1 },
  { stem: '嫌', kind: 'noun', emotion: '嫌', polarity: -1 },
  { stem: '疲れ', kind: 'ichidan', emotion: 'N', polarity: -1 },
  { stem: '高すぎ', kind: 'ichidan', emotion: '嫌', polarity: -1 },
  { stem: 'わかりにく', kind: 'adjective', emotion: '嫌', polarity: -1 },
  { stem: '分かりにく', kind: 'adjective', emotion: '嫌', polarity: -1 },
  { stem: '壊れ', kind: 'ichidan', emotion: '悲しい', polarity: -1 },
  { stem: '不満', kind: 'noun', emotion: '怒る', polarity: -1 },
  { stem: '迷惑', kind: 'noun', emotion: '嫌', polarity: -1 },
  { stem: '不便', kind: 'noun', emotion: '嫌', polarity: -1 },
  { stem: '待たされ', kind: 'ichidan', emotion: '怒る', polarity: -1 },
  { stem: '使いたくな', kind: 'adjective', emotion: '嫌', polarity: -1 },
  { stem: '解決', kind: 'noun', emotion: '安心', polarity: 1 },
  { stem: '信用', kind: 'noun', emotion: '安心', polarity: 1 },
  { stem: '誠意', kind: 'noun', emotion: '好ましい', polarity: 1 },
  { stem: '納得いかな', kind: 'adjective', emotion: '怒る', polarity: -1 },
  { stem: '納得がいかな', kind: 'adjective', emotion: '怒る', polarity: -1 },
  { stem: '許せな', kind: 'adjective', emotion: '怒る', polarity: -1 },
  { stem: '我慢できな', kind: 'adjective', emotion: '怒る', polarity: -1 },
  { stem: '我慢できません', kind: 'fixed', emotion: '怒る', polarity: -1 },
  { stem: '話にならな', kind: 'adjective', emotion: '怒る', polarity: -1 },
  { stem: '話になりません', kind: 'fixed', emotion: '怒る', polarity: -1 },
  { stem: 'ひど', kind: 'adjective', emotion: '怒る,嫌', polarity: -1 },
  { stem: '悪', kind: 'adjective', emotion: '嫌', polarity: -1 },
  { stem: '最悪', kind: 'noun', emotion: '嫌', polarity: -1 },
  { stem: '不愉快', kind: 'noun', emotion: '怒る,嫌', polarity: -1 },
  { stem: '不快', kind: 'noun', emotion: '嫌', polarity: -1 },
  { stem: '不親切', kind: 'noun', emotion: '嫌', polarity: -1 },
  { stem: 'うんざり', kind: 'noun', emotion: '嫌', polarity: -1 },
  { stem: '失望', kind: 'noun', emotion: '悲しい', polarity: -1 },
  { stem: '限界', kind: 'noun', emotion: '切ない', polarity: -1 },
  { stem: '詐欺', kind: 'noun', emotion: '怒る', polarity: -1 },
  { stem: 'だまされ', kind: 'ichidan', emotion: '怒る', polarity: -1 },
  { stem: '無視', kind: 'noun', emotion: '怒る,嫌', polarity: -1 },
  { stem: '放置', kind: 'noun', emotion: '怒る,嫌', polarity: -1 },
  { stem: '無駄', kind: 'noun', emotion: '嫌', polarity: -1 },
  { stem: 'おかし', kind: 'adjective', emotion: '嫌', polarity: -1 },
  { stem: 'ふざけ', kind: 'ichidan', emotion: '怒る', polarity: -1 },
  { stem: '怒', kind: 'godan-r', emotion: '怒る', polarity: -1 },
  { stem: '遅', kind: 'adjective', emotion: '嫌', polarity: -1 },
  { stem: '無理', kind: 'predicate', emotion: '嫌', polarity: -1 },
  { stem: '意味がな', kind: 'adjective', emotion: '嫌', polarity: -1 },
  { stem: '使い物にならな', kind: 'adjective', emotion: '嫌', polarity: -1 },
  { stem: '使い物になりません', kind: 'fixed', emotion: '嫌', polarity: -1 },
  { stem: '支障', kind: 'noun', emotion: '嫌', polarity: -1 },
  { stem: '損', kind: 'noun', emotion: '嫌', polarity: -1 },
  { stem: '驚', kind: 'godan-k', emotion: '驚く', polarity: 1 },
  { stem: '大変', kind: 'predicate', emotion: '切ない', polarity: -1 },
];

const longestFirst = (pieces: readonly string[]) => [...pieces].sort((a, b) => b.length - a.length);
const FIRST_ORDERED = Object.fromEntries(
  Object.entries(FIRST).map(([k, v]) => [k, longestFirst(v)]),
) as Record<Kind, string[]>;
const AUX_ORDERED = longestFirst(AUXILIARIES);
const STEMS = [...LEXICON].sort((a, b) => b.stem.length - a.stem.length);

/**
 * The inflection after a stem at `at`: its first piece, then auxiliaries as long as they follow, never
 * into another lexicon word; undefined when nothing of the word's kind follows (`直接` is not `直る`).
 */
function inflectionAt(
  sentence: string,
  at: number,
  kind: Kind,
  taken: readonly boolean[],
): string | undefined {
  const fits = (piece: string, pos: number) =>
    sentence.startsWith(piece, pos) && !taken.slice(pos, pos + piece.length).some(Boolean);
  const first = FIRST_ORDERED[kind].find((piece) => fits(piece, at));
  if (first === undefined) return undefined;
  let end = at + first.length;
  for (;;) {
    const aux = AUX_ORDERED.find((piece) => fits(piece, end));
    if (aux === undefined) break;
    end += aux.length;
  }
  return sentence.slice(at, end);
}

export interface SentimentResult {
  sentiment: 'Positive' | 'Negative' | 'Neutral';
  score: number;
  emotional_phrase: { form: string; emotion: string }[];
}

export function analyzeSentiment(sentence: string): SentimentResult {
  const found: { index: number; form: string; emotion: string; polarity: number }[] = [];
  const taken = new Array<boolean>(sentence.length).fill(false);
  // Longest stems first so `わかりにく` is not also counted as a shorter entry.
  for (const entry of STEMS) {
    for (let i = sentence.indexOf(entry.stem); i >= 0; i = sentence.indexOf(entry.stem, i + 1)) {
      if (taken.slice(i, i + entry.stem.length).some(Boolean)) continue;
      const inflection = inflectionAt(sentence, i + entry.stem.length, entry.kind, taken);
      if (inflection === undefined) continue;
      const end = i + entry.stem.length + inflection.length;
      // A bare noun that a kanji or katakana word follows is part of a compound (迷惑メール, 損害), not said of anything.
      if (inflection === '' && entry.kind === 'noun' && COMPOUND_NEXT.test(sentence.charAt(end))) continue;
      for (let k = i; k < end; k++) taken[k] = true;
      // A negation asked back (おかしくないですか, ひどくないですか) is rhetorical: it keeps the word's polarity.
      const negated = NEGATION.test(inflection) && !RHETORICAL.test(sentence.slice(end));
      // A negated negative word (不便ではありません) is no emotion at all.
      if (negated && entry.polarity < 0) continue;
      found.push({
        index: i,
        form: sentence.slice(i, end),
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
