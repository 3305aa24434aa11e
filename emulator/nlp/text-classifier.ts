/**
 * The emulator's text classifier (spec 03's classifier endpoints) and its accuracy report, from a
 * stratified 5-fold cross-validation of the training rows, in the report's shape (spec 03, Classifier
 * model). A real, if simple, classifier: the demo's call reasons are told apart by what is said, not
 * looked up. Which learner it runs is decided here; why, in bench/README.md (issue 40).
 */
import type { AccuracyReport, ReportRow } from '../../schemas/service-classifier.ts';
import * as logisticRegression from './logistic-regression.ts';
import * as naiveBayes from './naive-bayes.ts';

/** A learner: a model from labelled texts, and every class's score for a text, best first. */
export interface TextClassifier<M> {
  train(rows: readonly naiveBayes.LabelledText[]): M;
  classify(model: M, text: string): { class: string; score: number }[];
}

const naiveBayesLearner: TextClassifier<naiveBayes.NaiveBayes> = {
  train: naiveBayes.train,
  classify: naiveBayes.classify,
};
const logisticRegressionLearner: TextClassifier<logisticRegression.LogisticRegression> = {
  train: logisticRegression.train,
  classify: logisticRegression.classify,
};

export type LearnerName = 'naive-bayes' | 'logistic-regression';
export const LEARNERS: Record<LearnerName, TextClassifier<unknown>> = {
  'naive-bayes': naiveBayesLearner,
  'logistic-regression': logisticRegressionLearner,
};

/** The learner the emulator's classifier endpoints run. */
export const SERVICE_LEARNER: LearnerName = 'naive-bayes';

const FOLDS = 5;
const round = (x: number) => Math.round(x * 1e4) / 1e4;

function rowOf(tp: number, predicted: number, support: number): ReportRow {
  const precision = predicted === 0 ? 0 : tp / predicted;
  const recall = support === 0 ? 0 : tp / support;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision: round(precision), recall: round(recall), 'f1-score': round(f1), support };
}

function averaged(rows: ReportRow[], weights: number[]): ReportRow {
  const total = weights.reduce((a, b) => a + b, 0);
  const avg = (key: 'precision' | 'recall' | 'f1-score') =>
    round(rows.reduce((s, r, i) => s + r[key] * weights[i]!, 0) / total);
  const support = rows.reduce((s, r) => s + r.support, 0);
  return { precision: avg('precision'), recall: avg('recall'), 'f1-score': avg('f1-score'), support };
}

/**
 * The accuracy report of a model trained on `rows`: each row predicted by a model trained on the other
 * folds (the i-th item of each class falls in fold i mod 5, so every fold holds every class).
 */
export function crossValidatedReport<M>(
  learner: TextClassifier<M>,
  rows: readonly naiveBayes.LabelledText[],
): AccuracyReport {
  const seen = new Map<string, number>();
  const folded = rows.map((row) => {
    const i = seen.get(row.class) ?? 0;
    seen.set(row.class, i + 1);
    return { row, fold: i % FOLDS };
  });
  const classes = [...seen.keys()];
  const tp = new Map<string, number>();
  const predictedCount = new Map<string, number>();
  let correct = 0;
  for (let fold = 0; fold < FOLDS; fold++) {
    const model = learner.train(folded.filter((f) => f.fold !== fold).map((f) => f.row));
    for (const { row } of folded.filter((f) => f.fold === fold)) {
      const guess = learner.classify(model, row.text)[0]!.class;
      predictedCount.set(guess, (predictedCount.get(guess) ?? 0) + 1);
      if (guess === row.class) {
        tp.set(guess, (tp.get(guess) ?? 0) + 1);
        correct++;
      }
    }
  }
  const perClass = classes.map((c) => rowOf(tp.get(c) ?? 0, predictedCount.get(c) ?? 0, seen.get(c)!));
  const report: AccuracyReport = {};
  classes.forEach((c, i) => (report[c] = perClass[i]!));
  report.accuracy = round(correct / rows.length);
  report['macro avg'] = averaged(
    perClass,
    perClass.map(() => 1),
  );
  report['weighted avg'] = averaged(
    perClass,
    perClass.map((r) => r.support),
  );
  return report;
}
