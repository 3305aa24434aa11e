/**
 * A call's insights from its staged outputs (docs/design.md, data flow: "insights: metrics, categories,
 * scorecard"): talk time, then the rule file's metrics, categories and scorecard over the call as
 * result.json will hold it (storage/call-content.ts builds it, for both this and publish). Pure: the
 * activity that reads the parts and writes the document is insights-activities.ts.
 */
import type { CallInsightsParts } from '../../schemas/insights.ts';
import { talkTimeBySpeaker } from '../../schemas/talk-time.ts';
import {
  callSpeakers,
  dialogActsSummary,
  resultUtterances,
  sentimentSummary,
  talkDuration,
  type CallTextParts,
} from '../storage/call-content.ts';
import type { ScoredCall } from './evaluate-rules.ts';
import type { LoadedRules } from './rule-file.ts';
import { scoreCall, type ScoreOptions } from './score-call.ts';

export interface InsightsParts extends CallTextParts {
  /** The probe's length of the call (0 when it had none: the timeline's is used for talk time). */
  durationSeconds: number;
}

/** What the rules read of the call: result.json's content without its insights. */
function scoredCallOf(parts: InsightsParts): ScoredCall {
  const speakers = callSpeakers(parts.timeline);
  const duration = talkDuration(parts.durationSeconds, parts.timeline);
  return {
    audio: { durationSeconds: parts.durationSeconds },
    speakers,
    utterances: resultUtterances(parts),
    talk: talkTimeBySpeaker(parts.timeline.utterances, duration, speakers),
    sentiment: sentimentSummary(parts.sentiment),
    // Rules read whether redaction ran and the utterances' records, not the run's copies.
    ...(parts.redaction ? { redaction: { applied: true } } : {}),
    ...(parts.dialogActs ? { dialogActs: dialogActsSummary(parts.dialogActs) } : {}),
  };
}

export function callInsights(
  parts: InsightsParts,
  rules: LoadedRules,
  options: ScoreOptions = {},
): CallInsightsParts {
  const call = scoredCallOf(parts);
  return { talk: call.talk, ...scoreCall(call, rules, options) };
}
