/**
 * Text classification on the wire (spec 03, Text classification and Classifier model): the `result` of
 * learn, classify, list and status. The delete answer carries only `status` and `message`.
 */
import { z } from 'zod';

const CLASSIFIER_MODEL_STATUSES = ['processing', 'completed', 'failed'] as const;
const classifierModelStatusSchema = z.enum(CLASSIFIER_MODEL_STATUSES);

export const learnResultSchema = z.looseObject({ model_id: z.string().min(1) });

export const classifyResultSchema = z.array(
  z.looseObject({ class: z.string(), score: z.number().min(0).max(1) }),
);
export type ClassifyResult = z.infer<typeof classifyResultSchema>;

const classifierModelSummarySchema = z.looseObject({
  model_id: z.string(),
  model_status: classifierModelStatusSchema,
  created_at: z.string(),
});
export const listModelsResultSchema = z.array(classifierModelSummarySchema);
export type ClassifierModelSummary = z.infer<typeof classifierModelSummarySchema>;

/** One row of the accuracy report: a class, or the aggregates `macro avg` and `weighted avg`. */
export const reportRowSchema = z.looseObject({
  precision: z.number(),
  recall: z.number(),
  'f1-score': z.number(),
  support: z.number(),
});
export type ReportRow = z.infer<typeof reportRowSchema>;

/** Per class a row, plus `accuracy` (a number) and the two aggregate rows. */
export const accuracyReportSchema = z.record(z.string(), z.union([z.number(), reportRowSchema]));
export type AccuracyReport = z.infer<typeof accuracyReportSchema>;

export const modelStatusResultSchema = z.looseObject({
  model_status: classifierModelStatusSchema,
  /** Absent or empty while the model is processing. */
  report: accuracyReportSchema.nullish(),
});
export type ModelStatusResult = z.infer<typeof modelStatusResultSchema>;

/** The report's aggregate keys (sklearn's classification_report shape): everything else is a class. */
export const REPORT_AGGREGATES = ['accuracy', 'macro avg', 'weighted avg'] as const;
