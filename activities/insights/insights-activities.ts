/**
 * The insights stage (docs/design.md, data flow): one activity on the media queue that reads the call's
 * redacted timeline and text steps' outputs, computes talk time, metrics, categories and scorecard
 * (call-insights.ts) by the call's rule file, and writes them as ONE staged document
 * (schemas/insights.ts) for publish to copy into result.json. Only small facts go back to the workflow:
 * the document's key and the matched categories (the `CallpipeCategories` search attribute).
 * Idempotent: a repeat writes the document again.
 */
import {
  CALL_INSIGHTS_VERSION,
  callInsightsDocumentSchema,
  type CallInsightsDocument,
} from '../../schemas/insights.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { readStagedOutputs, type StagedOutputKeys } from '../storage/staged-outputs.ts';
import { callInsights } from './call-insights.ts';
import { storedRules } from './rule-file.ts';
import { matchedCategories } from './score-call.ts';

export interface ComputeInsightsInput extends Omit<StagedOutputKeys, 'summaryKey' | 'keywordsKey'> {
  callId: string;
  /** The probe's length of the call, seconds. */
  durationSeconds: number;
  /** A rule file the CLI stored (store's bucket, canonical JSON); default the shipped one. */
  rulesKey?: string | undefined;
  /** Where the document goes: the call's staging key `insights` (schemas/call-keys.ts). */
  outputKey: string;
}

export interface ComputeInsightsOutput {
  insightsKey: string;
  /** Names of the categories the call matched (the `CallpipeCategories` search attribute). */
  categories: string[];
}

export interface InsightsActivityDeps {
  /** Staging storage: the staged outputs, the stored rule files and the document written. */
  store: ObjectStore;
}

export function createInsightsActivities({ store }: InsightsActivityDeps) {
  const rulesOf = storedRules(store);

  /** The rules' view of the call, scored. */
  const score = async (input: ComputeInsightsInput): Promise<CallInsightsDocument> => {
    const [staged, rules] = await Promise.all([readStagedOutputs(store, input), rulesOf(input.rulesKey)]);
    const insights = callInsights({ ...staged, durationSeconds: input.durationSeconds }, rules);
    return callInsightsDocumentSchema.parse({
      version: CALL_INSIGHTS_VERSION,
      callId: input.callId,
      ...insights,
    });
  };

  return {
    /** Scores the call and writes the insights document; returns its key and the matched categories. */
    async computeInsights(input: ComputeInsightsInput): Promise<ComputeInsightsOutput> {
      const document = await score(input);
      // Role evidence (which speaker is the agent, and why) joins here as its own step, before the write.
      await store.put(input.outputKey, `${JSON.stringify(document, null, 2)}\n`, {
        contentType: 'application/json; charset=utf-8',
      });
      return { insightsKey: input.outputKey, categories: matchedCategories(document) };
    },
  };
}

export type InsightsActivities = ReturnType<typeof createInsightsActivities>;
