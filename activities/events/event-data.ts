/**
 * The data of call events, from what the call's outputs already hold (result.json, the staged insights
 * document, error.json) and nothing else: keys, the outcome, the length, categories and alerts, the
 * scorecard's totals and the sentiment summary. Pure.
 */
import type { CallEventData } from '../../schemas/events.ts';
import type { RulesFile } from '../../schemas/rules.ts';
import type {
  CategoryResult,
  ErrorDocument,
  ResultDocument,
  ScorecardResult,
  SentimentAggregate,
  SentimentSummary,
} from '../../schemas/result.ts';

/** The matched categories the rule file marks as alerts, most severe first (then in the file's order). */
export function alertsOf(categories: CategoryResult[], rules: RulesFile): CallEventData['alerts'] {
  const rank = { critical: 0, warning: 1, info: 2 } as const;
  const matched = new Set(categories.filter((c) => c.matched).map((c) => c.name));
  return rules.categories
    .filter((c) => c.alert && matched.has(c.name))
    .map((c) => ({ category: c.name, severity: c.alert!.severity }))
    .sort((a, b) => rank[a.severity] - rank[b.severity]);
}

function aggregate(a: SentimentAggregate) {
  return { label: a.label, meanValue: a.meanValue, utterances: a.utterances };
}

function sentimentOf(s: SentimentSummary | null | undefined): CallEventData['sentiment'] {
  if (!s) return null;
  return {
    overall: aggregate(s.overall),
    bySpeaker: Object.fromEntries(Object.entries(s.bySpeaker).map(([k, v]) => [k, aggregate(v)])),
  };
}

function scorecardOf(s: ScorecardResult | null | undefined): CallEventData['scorecard'] {
  return s ? { name: s.name, score: s.score, max: s.max, normalized: s.normalized } : null;
}

export interface RunIdentity {
  workflowId: string;
  runId: string;
  batchId?: string | undefined;
}

/** A done or partial call, from its result.json. */
export function completedCallData(
  doc: ResultDocument,
  keys: { bucket: string; resultKey: string; pageKey: string },
  rules: RulesFile,
  run: RunIdentity,
): CallEventData {
  const categories = doc.categories ?? [];
  return {
    callId: doc.callId,
    ...(run.batchId ? { batchId: run.batchId } : {}),
    outcome: doc.stepFailures.length ? 'partial' : 'done',
    bucket: keys.bucket,
    resultKey: keys.resultKey,
    pageKey: keys.pageKey,
    durationSeconds: doc.audio.durationSeconds ?? null,
    categories: categories.filter((c) => c.matched).map((c) => c.name),
    alerts: alertsOf(categories, rules),
    scorecard: scorecardOf(doc.scorecard),
    sentiment: sentimentOf(doc.sentiment),
    ...(doc.rules
      ? { rules: { name: doc.rules.name, version: doc.rules.version, digest: doc.rules.digest } }
      : {}),
    workflowId: run.workflowId,
    runId: run.runId,
  };
}

/**
 * An alert, as soon as the call's insights exist (before result.json is published): the insights
 * document's categories and scorecard, the sentiment the text step staged; result.json's keys are where
 * the call's outputs will be.
 */
export function alertCallData(
  insights: {
    callId: string;
    categories: CategoryResult[];
    scorecard: ScorecardResult | null;
    rules: { name: string; version: string; digest: string };
  },
  sentiment: SentimentSummary | null,
  durationSeconds: number,
  keys: { bucket: string; resultKey: string; pageKey: string },
  rules: RulesFile,
  run: RunIdentity,
): CallEventData {
  return {
    callId: insights.callId,
    ...(run.batchId ? { batchId: run.batchId } : {}),
    outcome: 'done',
    bucket: keys.bucket,
    resultKey: keys.resultKey,
    pageKey: keys.pageKey,
    durationSeconds,
    categories: insights.categories.filter((c) => c.matched).map((c) => c.name),
    alerts: alertsOf(insights.categories, rules),
    scorecard: scorecardOf(insights.scorecard),
    sentiment: sentimentOf(sentiment),
    rules: { name: insights.rules.name, version: insights.rules.version, digest: insights.rules.digest },
    workflowId: run.workflowId,
    runId: run.runId,
  };
}

/** A failed call, from its error.json. */
export function failedCallData(
  doc: ErrorDocument,
  keys: { bucket: string; errorKey: string },
  durationSeconds: number | undefined,
  run: RunIdentity,
): CallEventData {
  return {
    callId: doc.callId,
    ...(run.batchId ? { batchId: run.batchId } : {}),
    outcome: 'failed',
    bucket: keys.bucket,
    errorKey: keys.errorKey,
    stage: doc.stage,
    reason: doc.reason,
    durationSeconds: durationSeconds ?? null,
    categories: [],
    alerts: [],
    scorecard: null,
    sentiment: null,
    workflowId: run.workflowId,
    runId: run.runId,
  };
}
