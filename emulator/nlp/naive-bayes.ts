/**
 * A text classifier: multinomial naive Bayes over character 1- to 3-grams, Laplace smoothing. The
 * emulator's first classifier, kept to compare (bench/insight-rules.ts); text-classifier.ts says which one
 * the emulator runs.
 */
import { charNgrams as ngrams } from './char-ngrams.ts';

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
