/**
 * Call reasons: why the customer called, as a text classification model (spec 03) trained by
 * `callpipe reasons train` tells it. What of a call is classified, result.json's `reasons`, and the
 * record of a trained model kept beside the results (its accuracy report, when and from what).
 */
import { z } from 'zod';
import { accuracyReportSchema } from './service-classifier.ts';
import { TRAINING_LIMITS } from './classifier-limits.ts';

/**
 * What of a call a model reads: `customer`, the customer's words in time order (the whole call's when
 * no speaker is the customer); `summary`, the call's summary. The customer says why they call, in their
 * own words, near the start; a summary is the agent's and the customer's sentences the summarizer kept.
 */
export const REASON_TEXTS = ['customer', 'summary'] as const;
export type ReasonText = (typeof REASON_TEXTS)[number];
export const DEFAULT_REASON_TEXT: ReasonText = 'customer';

/**
 * Characters of the customer's words read, from the start of the call: the customer says why they call
 * near the start, and the rest of a long call (other topics, small talk) only blurs it. At most 3,000,
 * spec 03's longest training text.
 */
export const DEFAULT_REASON_CHARS = 600;

/** What of a call is read: the same for training lines built from results and for classifying calls. */
const reasonTextChoiceSchema = z.object({
  text: z.enum(REASON_TEXTS),
  chars: z.number().int().min(1).max(TRAINING_LIMITS.textChars),
});
export type ReasonTextChoice = z.infer<typeof reasonTextChoiceSchema>;

/** A call's reasons settings (schemas/call-spec.ts, a rescore's input): the model and what it reads. */
export const reasonsSettingsSchema = reasonTextChoiceSchema.extend({ model: z.string().min(1) });
export type ReasonsSettings = z.infer<typeof reasonsSettingsSchema>;

/** Classes kept in result.json, best first. */
export const REASONS_KEPT = 3;

const reasonClassSchema = z.object({
  class: z.string().min(1),
  score: z.number().min(0).max(1),
});

export const callReasonsSchema = z
  .object({
    top: z.array(reasonClassSchema).describe('the best classes with their scores, best first'),
    modelId: z.string().min(1),
    trainedAt: z.iso
      .datetime({ offset: true })
      .nullable()
      .describe("the model's creation time, as the service lists it"),
    text: z.enum(REASON_TEXTS).describe('what of the call was classified'),
    chars: z
      .number()
      .int()
      .positive()
      .describe("the customer's characters read from the start (CALLPIPE_REASONS_CHARS)"),
    characters: z
      .number()
      .int()
      .nonnegative()
      .describe("characters classified (the customer's first CALLPIPE_REASONS_CHARS, or the summary's)"),
    classifiedAt: z.iso.datetime(),
  })
  .meta({ id: 'CallReasons' });
export type CallReasons = z.infer<typeof callReasonsSchema>;

/** `reasons/<model id>.json` under the output prefix: what `callpipe reasons train` learnt. */
export const reasonModelRecordSchema = z.object({
  modelId: z.string().min(1),
  status: z.enum(['completed', 'failed']),
  trainedAt: z.string().nullable(),
  text: z.enum(REASON_TEXTS).nullable().describe('null: the lines gave their texts (class,text)'),
  chars: z.number().int().positive().nullable(),
  lines: z.number().int().positive(),
  classes: z.record(z.string(), z.number().int().positive()),
  report: accuracyReportSchema,
});
export type ReasonModelRecord = z.infer<typeof reasonModelRecordSchema>;
