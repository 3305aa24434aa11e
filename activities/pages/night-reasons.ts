/**
 * The night report's call reasons (docs/insights.md, "Call reasons"): the night's top reasons by the
 * calls table's `reason`, each with its calls, share of the classified calls, mean score and the change
 * of its share against the day before the night (the trend). Pure.
 */
import type { TableRow } from '../../schemas/tables.ts';
import { esc } from './html.ts';

/** Reasons listed; the others are summed up in one line. */
const REASONS_LISTED = 10;

export interface ReasonCount {
  reason: string;
  calls: number;
  share: number;
  meanScore: number;
}

/** The reasons of the night's calls, most frequent first (ties by name); unclassified calls apart. */
export function nightReasons(calls: Iterable<TableRow>): { reasons: ReasonCount[]; unclassified: number } {
  const by = new Map<string, { calls: number; score: number }>();
  let unclassified = 0;
  for (const c of calls) {
    if (typeof c.reason !== 'string') {
      unclassified++;
      continue;
    }
    const r = by.get(c.reason) ?? { calls: 0, score: 0 };
    r.calls++;
    r.score += typeof c.reason_score === 'number' ? c.reason_score : 0;
    by.set(c.reason, r);
  }
  const classified = [...by.values()].reduce((n, r) => n + r.calls, 0);
  const reasons = [...by.entries()]
    .map(([reason, r]) => ({
      reason,
      calls: r.calls,
      share: r.calls / classified,
      meanScore: r.score / r.calls,
    }))
    .sort((a, b) => b.calls - a.calls || a.reason.localeCompare(b.reason));
  return { reasons, unclassified };
}

/** The share's change against the day before, in points: `+4.0 pt`, `new`, or `—` without that day. */
function trendText(share: number, before: Map<string, ReasonCount> | undefined, reason: string): string {
  if (!before) return '—';
  const then = before.get(reason);
  if (!then) return 'new';
  const points = (share - then.share) * 100;
  return `${points >= 0 ? '+' : '−'}${Math.abs(points).toFixed(1)} pt`;
}

/** The card; empty when no call of the night was classified. */
export function reasonsSection(calls: Iterable<TableRow>, previous?: Iterable<TableRow>): string {
  const { reasons, unclassified } = nightReasons(calls);
  const earlier = previous ? nightReasons(previous).reasons : [];
  const before = earlier.length > 0 ? new Map(earlier.map((r) => [r.reason, r])) : undefined;
  if (reasons.length === 0) return '';
  const rows = reasons
    .slice(0, REASONS_LISTED)
    .map(
      (r) =>
        `<tr data-reason="${esc(r.reason)}"><td>${esc(r.reason)}</td><td class="num">${r.calls}</td><td class="num">${(r.share * 100).toFixed(1)} %</td><td class="num">${r.meanScore.toFixed(2)}</td><td class="num trend">${trendText(r.share, before, r.reason)}</td></tr>`,
    )
    .join('');
  const more =
    reasons.length > REASONS_LISTED
      ? `<p class="muted">${reasons.length - REASONS_LISTED} more reasons in the calls table (<code>reason</code>)</p>`
      : '';
  const none = unclassified ? `<p class="muted">${unclassified} call(s) not classified</p>` : '';
  return `<section class="card" id="reasons"><h2>Why customers called</h2><table class="cost"><thead><tr><th>reason</th><th class="num">calls</th><th class="num">share</th><th class="num">mean score</th><th class="num">vs the day before</th></tr></thead><tbody>${rows}</tbody></table>${more}${none}</section>`;
}
