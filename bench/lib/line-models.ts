/**
 * The labelled sets of bench/data and the lines each set's final line model is trained on: every line of
 * a positive call labelled with the set's category, of a negative one `other` (a `class,text` training
 * file). They are shipped (activities/insights/line-models/<category>.ja.csv) so that a user trains with
 * `callpipe reasons train` the model the bench measured; bench/insight-rules.ts trains its final models
 * from the shipped files and `--write-line-models` writes them from bench/data.
 */
import { readFileSync } from 'node:fs';
import { trainingCsv } from '../../schemas/classifier-dataset.ts';

export const SETS = ['complaints', 'harassment', 'ng-words'] as const;
export type SetName = (typeof SETS)[number];
export const OTHER = 'other';

export interface LabelledSet {
  category: string;
  speaker: 'agent' | 'customer';
  positives: string[][];
  negatives: string[][];
}

export const path = (set: string, split: string) =>
  new URL(`../data/${set}.${split}.ja.json`, import.meta.url);
export const load = (set: string, split: string) =>
  JSON.parse(readFileSync(path(set, split), 'utf8')) as LabelledSet;

/**
 * The splits that choose a set's cut, when it has any. Complaints: dev, calib, test5 … test12, dev2 and
 * dev3 (twelve writers' calls), each scored by a model that did not train on it. The complaint rules were
 * tuned or narrowed on every one of them (their rules-alone figures are optimistic); the confirmation's
 * cost in recall shows on every one. Harassment and NG words keep calib's halves (their rules were never
 * tuned on calib).
 */
export const CHOOSING: Partial<Record<SetName, readonly string[]>> = {
  complaints: [
    'dev',
    'calib',
    'test5',
    'test6',
    'test7',
    'test8',
    'test9',
    'dev2',
    'dev3',
    'test10',
    'test11',
    'test12',
  ],
};

/** The splits a set's final model is trained on: its choosing splits, or dev + calib. */
export const finalSplits = (set: SetName): readonly string[] => CHOOSING[set] ?? ['dev', 'calib'];

/** A training file of labelled calls: each positive call's lines first, then each negative call's. */
export function linesCsv(category: string, positives: string[][], negatives: string[][]): string {
  return trainingCsv([
    ...positives.flat().map((text) => ({ class: category, text })),
    ...negatives.flat().map((text) => ({ class: OTHER, text })),
  ]);
}

/** The training file of `set`'s final model, from bench/data as it is now. */
export function finalLinesCsv(set: SetName): { category: string; csv: string } {
  const splits = finalSplits(set).map((split) => load(set, split));
  const category = splits[0]!.category;
  const csv = linesCsv(
    category,
    splits.flatMap((s) => s.positives),
    splits.flatMap((s) => s.negatives),
  );
  return { category, csv };
}

/** Where the training file of `category`'s line model is shipped. */
export const shippedLinesPath = (category: string) =>
  new URL(`../../activities/insights/line-models/${category}.ja.csv`, import.meta.url);
