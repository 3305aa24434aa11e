/**
 * Call insights of one result (DESIGN.md, data flow: "insights: metrics, categories, scorecard"): the
 * call metrics, the categories and the scorecard of a rule file, and which rule file it was. One
 * function for both paths: `writeResult` scores a new result, `callpipe rescore` scores a stored one
 * again with another rule file, from result.json alone. Pure.
 */
import type { MetricsSettings } from '../../schemas/rules.ts';
import { RULES_FORMAT_VERSION } from '../../schemas/rules.ts';
import type { CallMetrics, CategoryResult, ResultDocument } from '../../schemas/result.ts';
import { callMetrics } from './call-metrics.ts';
import { evaluateCategory, type EvaluationContext, type ScoredCall } from './evaluate-rules.ts';
import type { LoadedRules } from './rules-file.ts';
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
  const metricsOf = (settings: MetricsSettings): CallMetrics =>
    callMetrics(call.utterances, call.audio.durationSeconds, call.speakers, settings);
  const metrics = metricsOf(rules.metrics);
  const memo = new Map<string, CallMetrics>();
  const categories = new Map<string, CategoryResult>();
  const ctx: EvaluationContext = {
    call,
    metrics,
    metricsWith: (t) => {
      const key = `${t.silenceSeconds ?? ''}|${t.overlapSeconds ?? ''}`;
      let m = memo.get(key);
      if (!m) memo.set(key, (m = metricsOf({ ...rules.metrics, ...t })));
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
