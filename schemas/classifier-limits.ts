/**
 * Spec 03's limits of text classification (Limits; Classifier model), apart from the training file's
 * reader (classifier-dataset.ts, which needs a CSV parser) so that schemas workflows load (the rule
 * file's) can name them: the workflow sandbox has no Node built-ins.
 */
export const TRAINING_LIMITS = {
  bytes: 10 * 1024 * 1024,
  lines: 10_000,
  classChars: 128,
  textChars: 3_000,
  minClasses: 2,
  minPerClass: 6,
} as const;

/** Spec 03, Classifier model: "An account can keep at most 10 models". */
export const MAX_CLASSIFIER_MODELS = 10;
