/**
 * The insights stage's staged document: what a call's rules made of it (talk time, metrics, categories,
 * scorecard, and which rule file), computed from the redacted timeline and the text steps' outputs, and
 * written once under the call's staging key `insights` (call-keys.ts). The publish stage copies it into
 * result.json as it is, so result.json's insights have one author: the insights stage (or, for a stored
 * result, `callpipe rescore`).
 */
import { z } from 'zod';
import {
  callMetricsSchema,
  categoryResultSchema,
  rulesFactsSchema,
  scorecardResultSchema,
  talkSchema,
} from './result.ts';

/** Raised when the document's shape changes: a publish of another version refuses to read it. */
export const CALL_INSIGHTS_VERSION = 1;

export const callInsightsDocumentSchema = z.object({
  version: z.literal(CALL_INSIGHTS_VERSION),
  callId: z.string().min(1),
  /** result.json's `talk`: who talked how long, silences and cross-talk. */
  talk: talkSchema,
  metrics: callMetricsSchema,
  categories: z.array(categoryResultSchema),
  scorecard: scorecardResultSchema.nullable(),
  rules: rulesFactsSchema,
  // Role evidence (which speaker is the agent, and why) comes next: a `speakers` field here, filled by
  // its own step of the insights activity (activities/insights/insights-activities.ts), and copied by publish.
});
export type CallInsightsDocument = z.infer<typeof callInsightsDocumentSchema>;

/** The insights of a call as result.json holds them (its `talk`, then metrics to rules). */
export type CallInsightsParts = Omit<CallInsightsDocument, 'version' | 'callId'>;
