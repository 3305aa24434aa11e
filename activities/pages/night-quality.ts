/**
 * The night report's transcript quality (schemas/transcript-quality.ts): the share of the night's calls
 * whose transcript is of low quality and how many need review, over the night and per agent (the
 * manifest's `agent` column), from the calls table. Pure.
 */
import type { TableRow } from '../../schemas/tables.ts';
import { esc } from './html.ts';

interface QualityCount {
  calls: number;
  low: number;
  review: number;
}

const pct = (n: number, of: number) => (of > 0 ? `${((n / of) * 100).toFixed(1)} %` : '—');

/** Calls rated, of low quality and needing review: over the night and per agent ('' without one). */
export function nightQuality(calls: Iterable<TableRow>): {
  all: QualityCount;
  byAgent: Map<string, QualityCount>;
} {
  const all = { calls: 0, low: 0, review: 0 };
  const byAgent = new Map<string, QualityCount>();
  for (const c of calls) {
    if (typeof c.transcript_level !== 'string') continue;
    const agent = typeof c.agent === 'string' ? c.agent : '';
    const one = byAgent.get(agent) ?? { calls: 0, low: 0, review: 0 };
    for (const q of [all, one]) {
      q.calls++;
      if (c.transcript_level === 'low') q.low++;
      if (c.needs_review === true) q.review++;
    }
    byAgent.set(agent, one);
  }
  return { all, byAgent };
}

/** The card; empty when no call of the night was rated. */
export function qualitySection(calls: Iterable<TableRow>): string {
  const { all, byAgent } = nightQuality(calls);
  if (all.calls === 0) return '';
  const agents = [...byAgent.entries()]
    .filter(([agent]) => agent !== '')
    .sort((a, b) => b[1].low / b[1].calls - a[1].low / a[1].calls || a[0].localeCompare(b[0]))
    .map(
      ([agent, q]) =>
        `<tr data-agent="${esc(agent)}"><td>${esc(agent)}</td><td class="num">${q.calls}</td><td class="num">${pct(q.low, q.calls)}</td><td class="num">${q.review}</td></tr>`,
    )
    .join('');
  const table = agents
    ? `<table class="cost"><thead><tr><th>agent</th><th class="num">calls</th><th class="num">low quality</th><th class="num">need review</th></tr></thead><tbody>${agents}</tbody></table>`
    : '';
  return `<section class="card" id="transcript-quality"><h2>Transcript quality</h2><p><b id="low-quality-share">${pct(all.low, all.calls)}</b> of ${all.calls} calls of low quality · <b id="needs-review">${all.review}</b> need review (their scorecards are marked unreliable)</p>${table}</section>`;
}
