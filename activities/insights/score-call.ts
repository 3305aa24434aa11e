/**
 * Call insights of one result (docs/design.md, data flow: "insights: metrics, categories, scorecard"): the
 * call metrics, the categories and the scorecard of a rule file, and which rule file it was. One
 * function for every path: the insights stage scores a new call (call-insights.ts), `callpipe rescore`
 * scores a stored one again with another rule file,
 * from result.json alone. Pure.
 */
import type { MetricsSettings, TimeWindow } from '../../schemas/rules.ts';
import { RULES_FORMAT_VERSION } from '../../schemas/rules.ts';
import type { CallMetrics, CategoryResult, ResultDocument } from '../../schemas/result.ts';
import { callMetrics } from './call-metrics.ts';
import { evaluateCategory, windowRange, type EvaluationContext, type ScoredCall } from './evaluate-rules.ts';
import type { LoadedRules } from './rule-file.ts';
import { scoreCard } from './scorecard.ts';

export type CallInsights = Required<Pick<ResultDocument, 'metrics' | 'categories' | 'scorecard' | 'rules'>>;

export interface ScoreOptions {
  /** ISO time of the scoring; default now. */
  scoredAt?: string | undefined;
  /** The rescore batch doing it, recorded in `rules.rescoreBatchId`. */
  rescoreBatchId?: string | undefined;
}

export function scoreCall(call: ScoredCall, loaded: LoadedRules, options: ScoreOptions = {}): CallInsights {
  const { rules } = loaded;
  const duration = call.audio.durationSeconds;
  const metricsOf = (settings: MetricsSettings, window?: TimeWindow): CallMetrics => {
    if (!window) return callMetrics(call.utterances, duration, call.speakers, settings);
    // The utterances that start inside the window, whole, with times from its start: the window lasts
    // to its end, or to the end of the last of them when that is later.
    const [from, to] = windowRange(window, duration);
    const inside = call.utterances
      .filter((u) => u.start >= from && u.start <= to)
      .map((u) => ({ ...u, start: u.start - from, end: u.end - from }));
    const end = Math.max(Math.min(to, duration) - from, ...inside.map((u) => u.end));
    return callMetrics(inside, end, call.speakers, settings);
  };
  const metrics = metricsOf(rules.metrics);
  const memo = new Map<string, CallMetrics>();
  const categories = new Map<string, CategoryResult>();
  const ctx: EvaluationContext = {
    call,
    metrics,
    metricsWith: ({ window, ...thresholds }) => {
      const key = JSON.stringify([thresholds.silenceSeconds, thresholds.overlapSeconds, window]);
      let m = memo.get(key);
      if (!m) memo.set(key, (m = metricsOf({ ...rules.metrics, ...thresholds }, window)));
      return m;
    },
    categories,
  };
  for (const category of rules.categories) categories.set(category.name, evaluateCategory(category, ctx));
  return {
    metrics,
    categories: [...categories.values()],
    scorecard: rules.scorecard ? scoreCard(rules.scorecard, ctx) : null,
    rules: {
      name: rules.name,
      version: rules.version,
      format: RULES_FORMAT_VERSION,
      digest: loaded.digest,
      scoredAt: options.scoredAt ?? new Date().toISOString(),
      ...(options.rescoreBatchId ? { rescoreBatchId: options.rescoreBatchId } : {}),
    },
  };
}

/** Names of the matched categories: the `CallpipeCategories` search attribute. */
export function matchedCategories(insights: Pick<CallInsights, 'categories'>): string[] {
  return insights.categories.filter((c) => c.matched).map((c) => c.name);
}
