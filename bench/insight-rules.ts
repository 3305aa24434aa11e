/**
 * How well the shipped rule file finds complaints, customer harassment (カスハラ) and agent NG words however
 * they are worded (issue 40). Each labelled set of bench/data (`<set>.dev.ja.json`, the development split
 * the rule file and the emulator's sentiment lexicon are tuned on; `<set>.test.ja.json`, written apart,
 * which chooses nothing) holds calls as one speaker's lines, labelled positive or negative for one
 * category. Every call is scored by the shipped rule file with each line's sentiment and speech acts as
 * the emulator's analyses give them (the service's stand-ins), and the category's recall and precision are
 * printed per split. Exits 1 when a test split is below the target (90 % each).
 *
 *   node scripts/on-node.mjs ts bench/insight-rules.ts [--misses] [--split dev|test]
 */
import { readFileSync } from 'node:fs';
import { defaultRules } from '../activities/insights/rule-file.ts';
import { scoreCall } from '../activities/insights/score-call.ts';
import { toUtteranceSentiment } from '../activities/nlp/sentiment.ts';
import { analyzeSentiment } from '../emulator/nlp/sentiment.ts';
import { classifySentence } from '../emulator/nlp/sentence-type.ts';
import type { ScoredCall } from '../activities/insights/evaluate-rules.ts';

const TARGET = 0.9;
const SETS = ['complaints', 'harassment', 'ng-words'] as const;
const splitArg = process.argv.indexOf('--split');
const SPLITS = splitArg > 0 ? [process.argv[splitArg + 1]!] : ['dev', 'test'];

interface LabelledSet {
  category: string;
  speaker: 'agent' | 'customer';
  positives: string[][];
  negatives: string[][];
}

const load = (set: string, split: string) =>
  JSON.parse(readFileSync(new URL(`./data/${set}.${split}.ja.json`, import.meta.url), 'utf8')) as LabelledSet;

/**
 * A call of the agent's greeting, then each labelled line answered by the other speaker (a neutral
 * acknowledgement): the labelled speaker's lines are the ones the category's rules read.
 */
function callOf(lines: string[], speaker: LabelledSet['speaker']): ScoredCall {
  const other = speaker === 'customer' ? 'agent' : 'customer';
  const reply = speaker === 'customer' ? '承知いたしました。' : 'はい。';
  const turns: [string, string][] = [
    ['agent', 'お電話ありがとうございます。'],
    ...(speaker === 'agent' ? [['customer', 'もしもし、問い合わせです。'] as [string, string]] : []),
    ...lines.flatMap((l): [string, string][] => [
      [speaker, l],
      [other, reply],
    ]),
  ];
  const utterances = turns.map(([who, text], index) => ({
    index,
    speaker: who,
    track: who === 'agent' ? 0 : 1,
    session: 0,
    start: index * 5,
    end: index * 5 + 4,
    text,
    normalizedText: text,
    cleanedText: text,
    fillers: [],
    sentiment: toUtteranceSentiment({ ...analyzeSentiment(text) }),
    dialogActs: classifySentence(text).dialog_act,
  }));
  return {
    audio: { durationSeconds: turns.length * 5 },
    speakers: ['agent', 'customer'],
    utterances,
    talk: { bySpeaker: [], silenceSeconds: 0, overlapSeconds: 0 },
    sentiment: { grain: 'utterance' },
    dialogActs: { grain: 'utterance' },
  } as unknown as ScoredCall;
}

const rules = defaultRules();
const round = (x: number) => Math.round(x * 1000) / 1000;
/** Misses are shown for the development split only: the test split's lines must not steer the tuning. */
const showMisses = process.argv.includes('--misses');

function measure(data: LabelledSet, split: string) {
  const matched = (lines: string[]) =>
    scoreCall(callOf(lines, data.speaker), rules).categories.find((c) => c.name === data.category)?.matched ??
    false;
  const tp = data.positives.filter(matched).length;
  const fp = data.negatives.filter(matched).length;
  return {
    positives: data.positives.length,
    negatives: data.negatives.length,
    recall: round(tp / data.positives.length),
    precision: round(tp + fp > 0 ? tp / (tp + fp) : 0),
    ...(showMisses && split === 'dev'
      ? {
          missed: data.positives.filter((c) => !matched(c)).map((c) => c.join(' ')),
          falsePositives: data.negatives.filter(matched).map((c) => c.join(' ')),
        }
      : {}),
  };
}

const results = SETS.flatMap((set) =>
  SPLITS.map((split) => {
    const data = load(set, split);
    return { set, split, category: data.category, ...measure(data, split) };
  }),
);
console.log(JSON.stringify({ target: TARGET, results }, null, 2));
const below = results.filter((r) => r.split === 'test' && (r.recall < TARGET || r.precision < TARGET));
if (below.length > 0) {
  console.error(
    `below the target (${TARGET * 100} % recall and precision) on the test split: ${below.map((r) => r.set).join(', ')}`,
  );
  process.exitCode = 1;
}
