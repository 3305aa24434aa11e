/**
 * How well the shipped rule file finds complaints, customer harassment (カスハラ) and agent NG words however
 * they are worded (issue 40), by its rules alone and with a classifier rule (kind `classifier`) whose
 * line model is trained on the development split. Each labelled set of bench/data
 * (`<set>.dev.ja.json`, the development split the rule file, the emulator's sentiment lexicon and the
 * classifier thresholds are tuned on; `<set>.test.ja.json` and `<set>.test5.ja.json`, written apart,
 * which choose nothing) holds calls as one speaker's lines, labelled positive or negative for one
 * category. Every call is scored by the rule file with each line's sentiment and speech acts as the
 * emulator's analyses give them (the service's stand-ins), and the category's recall and precision are
 * printed per split.
 *
 * Rules + classifier: the lines of the dev split's calls (each line of a positive call labelled with the
 * category, each line of a negative one `other`) are a `class,text` training file, checked as
 * `callpipe reasons train` checks it, and learnt by the emulator's classifier in process (the naive
 * Bayes its classifier endpoints use, emulator/nlp/naive-bayes.ts); each line of the set's speaker is
 * classified (one request per line, as the pipeline sends) and the category gains
 * `{ kind: classifier, class: <category>, speaker, above: ABOVE[set] }`. On the dev split the figure is a
 * 5-fold cross-validation over its calls (each fold scored by a model trained on the other four);
 * on a test split the model is trained on the whole dev split. `--sweep` prints the dev split's
 * cross-validated figures per threshold (how ABOVE was chosen). Exits 1 when the headline split (test5)
 * is below the target (90 % each) with the classifier.
 *
 *   node scripts/on-node.mjs ts bench/insight-rules.ts [--misses] [--sweep] [--split dev|test|test5]
 */
import { existsSync, readFileSync } from 'node:fs';
import { defaultRules, type LoadedRules } from '../activities/insights/rule-file.ts';
import { scoreCall } from '../activities/insights/score-call.ts';
import { toUtteranceSentiment } from '../activities/nlp/sentiment.ts';
import { analyzeSentiment } from '../emulator/nlp/sentiment.ts';
import { classifySentence } from '../emulator/nlp/sentence-type.ts';
import { classify, train, type NaiveBayes } from '../emulator/nlp/naive-bayes.ts';
import { readTrainingCsv, trainingCsv } from '../schemas/classifier-dataset.ts';
import type { Rule } from '../schemas/rules.ts';
import type { ScoredCall } from '../activities/insights/evaluate-rules.ts';

const TARGET = 0.9;
const SETS = ['complaints', 'harassment', 'ng-words'] as const;
type SetName = (typeof SETS)[number];
const HEADLINE = 'test5';
const splitArg = process.argv.indexOf('--split');
const SPLITS = splitArg > 0 ? [process.argv[splitArg + 1]!] : ['dev', 'test', HEADLINE];
/**
 * The classifier rule's threshold per set, chosen on the dev split's cross-validation (`--sweep`): the
 * lowest whose classifier alone keeps a precision of at least 95 %, leaving room under the 90 % target
 * for the rules' own false positives (the rules' dev recall is 100 %, tuned there: it cannot choose).
 */
const ABOVE: Record<SetName, number> = { complaints: 0.8, harassment: 0.6, 'ng-words': 0.5 };
const FOLDS = 5;
const MODEL_ID = 'bench-lines';
const OTHER = 'other';

interface LabelledSet {
  category: string;
  speaker: 'agent' | 'customer';
  positives: string[][];
  negatives: string[][];
}

const path = (set: string, split: string) => new URL(`./data/${set}.${split}.ja.json`, import.meta.url);
const load = (set: string, split: string) =>
  JSON.parse(readFileSync(path(set, split), 'utf8')) as LabelledSet;

/**
 * A call of the agent's greeting, then each labelled line answered by the other speaker (a neutral
 * acknowledgement): the labelled speaker's lines are the ones the category's rules read. With a model,
 * each line of the labelled speaker carries its scores (result.json's `lineClasses`).
 */
function callOf(lines: string[], speaker: LabelledSet['speaker'], model?: NaiveBayes): ScoredCall {
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
  const lineClasses = (who: string, text: string) =>
    model && who === speaker
      ? {
          lineClasses: {
            [MODEL_ID]: Object.fromEntries(classify(model, text).map((c) => [c.class, c.score])),
          },
        }
      : {};
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
    ...lineClasses(who, text),
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

const shipped = defaultRules();

/**
 * The shipped rule file with the set's category also matching on the classifier rule (`alone`: only on
 * it, to see what the model finds by itself).
 */
function withClassifier(data: LabelledSet, above: number, alone = false): LoadedRules {
  const rule: Rule = {
    kind: 'classifier',
    model: MODEL_ID,
    class: data.category,
    above,
    speaker: data.speaker,
    negate: false,
    minCount: 1,
  };
  const categories = shipped.rules.categories.map((c) => {
    if (c.name !== data.category) return c;
    if (c.match === 'all' && c.rules.length > 1)
      throw new Error(`${c.name}: an 'all' category of several rules`);
    return { ...c, match: 'any' as const, rules: alone ? [rule] : [...c.rules, rule] };
  });
  return { rules: { ...shipped.rules, categories }, digest: `${shipped.digest}+classifier` };
}

/** A line model of labelled calls, through the training file's checks (`callpipe reasons train`'s). */
function lineModel(data: LabelledSet, positives: string[][], negatives: string[][]): NaiveBayes {
  const csv = trainingCsv([
    ...positives.flat().map((text) => ({ class: data.category, text })),
    ...negatives.flat().map((text) => ({ class: OTHER, text })),
  ]);
  const { rows, problems } = readTrainingCsv(csv);
  if (problems.length > 0) throw new Error(`training file: ${problems[0]!.message}`);
  return train(rows);
}

const round = (x: number) => Math.round(x * 1000) / 1000;

interface Scored {
  positive: boolean;
  matched: boolean;
  lines: string[];
}

function figures(scored: Scored[], misses: boolean) {
  const tp = scored.filter((s) => s.positive && s.matched).length;
  const fp = scored.filter((s) => !s.positive && s.matched).length;
  const positives = scored.filter((s) => s.positive).length;
  return {
    recall: round(tp / positives),
    precision: round(tp + fp > 0 ? tp / (tp + fp) : 0),
    ...(misses
      ? {
          missed: scored.filter((s) => s.positive && !s.matched).map((s) => s.lines.join(' ')),
          falsePositives: scored.filter((s) => !s.positive && s.matched).map((s) => s.lines.join(' ')),
        }
      : {}),
  };
}

function matched(data: LabelledSet, lines: string[], rules: LoadedRules, model?: NaiveBayes): boolean {
  const call = callOf(lines, data.speaker, model);
  return scoreCall(call, rules).categories.find((c) => c.name === data.category)?.matched ?? false;
}

const labelled = (data: LabelledSet) => [
  ...data.positives.map((lines, i) => ({ lines, positive: true, fold: i % FOLDS })),
  ...data.negatives.map((lines, i) => ({ lines, positive: false, fold: i % FOLDS })),
];

/** Each dev call scored with a model trained on the other folds' calls. */
function crossValidated(dev: LabelledSet, above: number, alone = false): Scored[] {
  const calls = labelled(dev);
  const rules = withClassifier(dev, above, alone);
  return Array.from({ length: FOLDS }, (_, fold) => {
    const rest = calls.filter((c) => c.fold !== fold);
    const model = lineModel(
      dev,
      rest.filter((c) => c.positive).map((c) => c.lines),
      rest.filter((c) => !c.positive).map((c) => c.lines),
    );
    return calls
      .filter((c) => c.fold === fold)
      .map((c) => ({ ...c, matched: matched(dev, c.lines, rules, model) }));
  }).flat();
}

/** Misses are shown for the development split only: a test split's lines must not steer the tuning. */
const showMisses = process.argv.includes('--misses');

function measure(set: SetName, split: string) {
  const dev = load(set, 'dev');
  const data = split === 'dev' ? dev : load(set, split);
  const misses = showMisses && split === 'dev';
  const rulesAlone = labelled(data).map((c) => ({ ...c, matched: matched(data, c.lines, shipped) }));
  let withModel: Scored[];
  if (split === 'dev') withModel = crossValidated(dev, ABOVE[set]);
  else {
    const model = lineModel(dev, dev.positives, dev.negatives);
    const rules = withClassifier(data, ABOVE[set]);
    withModel = labelled(data).map((c) => ({ ...c, matched: matched(data, c.lines, rules, model) }));
  }
  return {
    set,
    split,
    category: data.category,
    positives: data.positives.length,
    negatives: data.negatives.length,
    rules: figures(rulesAlone, misses),
    rulesAndClassifier: { above: ABOVE[set], ...figures(withModel, misses) },
  };
}

if (process.argv.includes('--sweep')) {
  const sweep = SETS.map((set) => ({
    set,
    byThreshold: [0.5, 0.6, 0.7, 0.8, 0.9].map((above) => ({
      above,
      classifierAlone: figures(crossValidated(load(set, 'dev'), above, true), false),
      rulesAndClassifier: figures(crossValidated(load(set, 'dev'), above), false),
    })),
  }));
  console.log(JSON.stringify({ split: 'dev (5-fold cross-validation)', sweep }, null, 2));
} else {
  const results = SETS.flatMap((set) =>
    SPLITS.flatMap((split) => {
      if (existsSync(path(set, split))) return [measure(set, split)];
      console.error(`${set}: no ${split} split (bench/data/${set}.${split}.ja.json)`);
      return [];
    }),
  );
  console.log(JSON.stringify({ target: TARGET, results }, null, 2));
  const below = results.filter(
    (r) =>
      r.split === HEADLINE &&
      (r.rulesAndClassifier.recall < TARGET || r.rulesAndClassifier.precision < TARGET),
  );
  if (below.length > 0) {
    console.error(
      `below the target (${TARGET * 100} % recall and precision) on the ${HEADLINE} split with the classifier: ${below.map((r) => r.set).join(', ')}`,
    );
    process.exitCode = 1;
  }
}
