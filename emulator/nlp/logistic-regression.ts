/**
 * A text classifier that weighs evidence: TF-IDF over character n-grams (sublinear term frequency,
 * smoothed inverse document frequency, each text's vector of length 1) and multinomial logistic
 * regression with an L2 penalty, fitted by a fixed number of full-batch gradient steps from zero weights:
 * deterministic, no randomness. Unlike naive Bayes, an n-gram that both classes use (a register, a
 * politeness form) gets a weight near zero instead of counting as evidence for whichever class used it
 * more often.
 */
import { charNgrams } from './char-ngrams.ts';
import type { LabelledText } from './naive-bayes.ts';

export interface LogisticRegression {
  classes: string[];
  /** Inverse document frequency per known n-gram, with the n-gram's column. */
  idf: Map<string, { column: number; idf: number }>;
  /** Per class, one weight per column and a bias. */
  weights: Float64Array[];
  bias: Float64Array;
}

/** The penalty on the squared weights (per example: the loss is a mean) and the fitting schedule. */
const L2 = 1e-3;
const STEPS = 400;
const STEP_SIZE = 2;

type Sparse = { column: number; value: number }[];

function vectorOf(idf: LogisticRegression['idf'], text: string): Sparse {
  const tf = new Map<string, number>();
  for (const g of charNgrams(text)) tf.set(g, (tf.get(g) ?? 0) + 1);
  const out: Sparse = [];
  for (const [g, count] of tf) {
    const known = idf.get(g);
    if (known) out.push({ column: known.column, value: (1 + Math.log(count)) * known.idf });
  }
  const norm = Math.sqrt(out.reduce((s, x) => s + x.value * x.value, 0));
  return norm > 0 ? out.map((x) => ({ column: x.column, value: x.value / norm })) : out;
}

function probabilities(model: Pick<LogisticRegression, 'weights' | 'bias'>, x: Sparse): number[] {
  const logits = model.weights.map((w, k) => x.reduce((s, f) => s + w[f.column]! * f.value, model.bias[k]!));
  const top = Math.max(...logits);
  const e = logits.map((l) => Math.exp(l - top));
  const total = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / total);
}

export function train(rows: readonly LabelledText[]): LogisticRegression {
  const classes = [...new Set(rows.map((r) => r.class))];
  const documents = new Map<string, number>();
  for (const row of rows)
    for (const g of new Set(charNgrams(row.text))) documents.set(g, (documents.get(g) ?? 0) + 1);
  const idf: LogisticRegression['idf'] = new Map();
  [...documents.keys()]
    .sort()
    .forEach((g, column) =>
      idf.set(g, { column, idf: Math.log((1 + rows.length) / (1 + documents.get(g)!)) + 1 }),
    );
  const xs = rows.map((r) => vectorOf(idf, r.text));
  const ys = rows.map((r) => classes.indexOf(r.class));
  const weights = classes.map(() => new Float64Array(idf.size));
  const bias = new Float64Array(classes.length);
  for (let step = 0; step < STEPS; step++) {
    const gradW = classes.map(() => new Float64Array(idf.size));
    const gradB = new Float64Array(classes.length);
    xs.forEach((x, i) => {
      const p = probabilities({ weights, bias }, x);
      p.forEach((pk, k) => {
        const residual = (pk - (ys[i] === k ? 1 : 0)) / xs.length;
        gradB[k]! += residual;
        for (const f of x) gradW[k]![f.column]! += residual * f.value;
      });
    });
    weights.forEach((w, k) => {
      for (let j = 0; j < w.length; j++) w[j]! -= STEP_SIZE * (gradW[k]![j]! + L2 * w[j]!);
      bias[k]! -= STEP_SIZE * gradB[k]!;
    });
  }
  return { classes, idf, weights, bias };
}

/** Every class with its probability, best first. */
export function classify(model: LogisticRegression, text: string): { class: string; score: number }[] {
  const p = probabilities(model, vectorOf(model.idf, text));
  return model.classes
    .map((name, i) => ({ class: name, score: Math.round(p[i]! * 1e6) / 1e6 }))
    .sort((a, b) => b.score - a.score || a.class.localeCompare(b.class));
}
