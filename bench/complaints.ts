/**
 * How well the shipped complaint rule finds complaints however they are worded (issue 40): each call of
 * bench/data/complaints.ja.json (the customer's lines, labelled complaint or not, written in varied
 * phrasings) is scored by the shipped rule file, its sentiment as the emulator's analysis gives it (the
 * service's stand-in), and the `complaint` category's recall and precision are printed.
 *
 *   node scripts/on-node.mjs ts bench/complaints.ts
 */
import { readFileSync } from 'node:fs';
import { defaultRules } from '../activities/insights/rule-file.ts';
import { scoreCall } from '../activities/insights/score-call.ts';
import { toUtteranceSentiment } from '../activities/nlp/sentiment.ts';
import { analyzeSentiment } from '../emulator/nlp/sentiment.ts';
import type { ScoredCall } from '../activities/insights/evaluate-rules.ts';

const data = JSON.parse(readFileSync(new URL('./data/complaints.ja.json', import.meta.url), 'utf8')) as {
  complaints: string[][];
  others: string[][];
};

/** A call of an agent's greeting, then the customer's lines, each answered by the agent. */
function callOf(lines: string[]): ScoredCall {
  const said = ['お電話ありがとうございます。', ...lines.flatMap((l) => [l, '承知いたしました。'])];
  const utterances = said.map((text, index) => {
    const speaker = index % 2 === 0 ? 'agent' : 'customer';
    return {
      index,
      speaker,
      track: speaker === 'agent' ? 0 : 1,
      session: 0,
      start: index * 5,
      end: index * 5 + 4,
      text,
      normalizedText: text,
      cleanedText: text,
      fillers: [],
      sentiment: toUtteranceSentiment({ ...analyzeSentiment(text) }),
    };
  });
  return {
    audio: { durationSeconds: said.length * 5 },
    speakers: ['agent', 'customer'],
    utterances,
    talk: { bySpeaker: [], silenceSeconds: 0, overlapSeconds: 0 },
    sentiment: null,
  } as unknown as ScoredCall;
}

const rules = defaultRules();
const matched = (lines: string[]) =>
  scoreCall(callOf(lines), rules).categories.find((c) => c.name === 'complaint')?.matched ?? false;
const tp = data.complaints.filter(matched).length;
const fp = data.others.filter(matched).length;
const missed = data.complaints.filter((c) => !matched(c)).map((c) => c.join(' '));
const round = (x: number) => Math.round(x * 1000) / 1000;
console.log(
  JSON.stringify(
    {
      complaints: data.complaints.length,
      others: data.others.length,
      recall: round(tp / data.complaints.length),
      precision: round(tp + fp > 0 ? tp / (tp + fp) : 0),
      falsePositives: data.others.filter(matched).map((c) => c.join(' ')),
      missed,
    },
    null,
    2,
  ),
);
