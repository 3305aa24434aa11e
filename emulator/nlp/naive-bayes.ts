/**
 * The emulator's text classifier: multinomial naive Bayes over character 1- to 3-grams (Japanese has no
 * spaces to split words at), Laplace smoothing; and its accuracy report, from a stratified 5-fold
 * cross-validation of the training rows, in the report's shape (spec 03, Classifier model). A real, if
 * simple, classifier: the demo's call reasons are told apart by what is said, not looked up.
 */
import type { AccuracyReport, ReportRow } from '../../schemas/service-classifier.ts';

export interface LabelledText {
  class: string;
  text: string;
}

export interface NaiveBayes {
  classes: string[];
  /** Per class: log prior, counts per n-gram, total n-grams. */
  perClass: Map<string, { logPrior: number; counts: Map<string, number>; total: number }>;
  vocabulary: number;
}

const SMOOTHING = 1;

function normalized(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\s、。，．,.!?！？「」『』（）()・〈〉]+/g, ' ')
    .trim();
}

/** Character 1-, 2- and 3-grams of a text (spaces separate, never joined across). */
function ngrams(text: string): string[] {
  const out: string[] = [];
  for (const word of normalized(text).split(' ')) {
    const cs = [...word];
    for (let n = 1; n <= 3; n++)
      for (let i = 0; i + n <= cs.length; i++) out.push(cs.slice(i, i + n).join(''));
  }
  return out;
}

export function train(rows: readonly LabelledText[]): NaiveBayes {
  const perClass: NaiveBayes['perClass'] = new Map();
  const vocabulary = new Set<string>();
  for (const row of rows) {
    let c = perClass.get(row.class);
    if (!c) perClass.set(row.class, (c = { logPrior: 0, counts: new Map(), total: 0 }));
    c.logPrior++;
    for (const g of ngrams(row.text)) {
      c.counts.set(g, (c.counts.get(g) ?? 0) + 1);
      c.total++;
      vocabulary.add(g);
    }
  }
  for (const c of perClass.values()) c.logPrior = Math.log(c.logPrior / rows.length);
  return { classes: [...perClass.keys()], perClass, vocabulary: vocabulary.size };
}

/**
 * Every class with its score, best first. The score is the posterior with the log-likelihood divided by
 * the square root of the text's n-gram count: the plain posterior of a long text is 1.0 for one class and
 * 0 for the rest whatever the evidence, which says nothing about confidence.
 */
export function classify(model: NaiveBayes, text: string): { class: string; score: number }[] {
  const grams = ngrams(text);
  const temper = Math.sqrt(Math.max(1, grams.length));
  const logs = model.classes.map((name) => {
    const c = model.perClass.get(name)!;
    const denominator = Math.log(c.total + SMOOTHING * (model.vocabulary + 1));
    let sum = 0;
    for (const g of grams) sum += Math.log((c.counts.get(g) ?? 0) + SMOOTHING) - denominator;
    return c.logPrior + sum / temper;
  });
  const top = Math.max(...logs);
  const weights = logs.map((l) => Math.exp(l - top));
  const total = weights.reduce((a, b) => a + b, 0);
  return model.classes
    .map((name, i) => ({ class: name, score: Math.round((weights[i]! / total) * 1e6) / 1e6 }))
    .sort((a, b) => b.score - a.score || a.class.localeCompare(b.class));
}

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
export function crossValidatedReport(rows: readonly LabelledText[]): AccuracyReport {
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
    const model = train(folded.filter((f) => f.fold !== fold).map((f) => f.row));
    for (const { row } of folded.filter((f) => f.fold === fold)) {
      const guess = classify(model, row.text)[0]!.class;
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
