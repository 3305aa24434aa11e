/**
 * The night report's transcript quality (schemas/transcript-quality.ts): the share of the night's calls
 * whose transcript is of low quality and how many need review, over the night, per agent (the manifest's
 * `agent` column) and per line (its `line` column: the phone line, queue or number the call came in on;
 * a bad trunk or a noisy site shows there before it shows in any agent's figures), from the calls table.
 * Pure.
 */
import type { TableRow } from '../../schemas/tables.ts';
import { esc } from './html.ts';

interface QualityCount {
  calls: number;
  low: number;
  review: number;
}

/** The groups the card breaks the night down by: the calls table's column, and its heading. */
const GROUPS = [
  { key: 'agent', heading: 'agent', of: (c: TableRow) => c.agent },
  { key: 'line', heading: 'line', of: (c: TableRow) => (c.metadata as Record<string, string> | null)?.line },
] as const;
type GroupKey = (typeof GROUPS)[number]['key'];

const pct = (n: number, of: number) => (of > 0 ? `${((n / of) * 100).toFixed(1)} %` : '—');

/** Calls rated, of low quality and needing review: over the night, per agent and per line ('' without one). */
export function nightQuality(calls: Iterable<TableRow>): {
  all: QualityCount;
  byAgent: Map<string, QualityCount>;
  byLine: Map<string, QualityCount>;
} {
  const all = { calls: 0, low: 0, review: 0 };
  const by = new Map<GroupKey, Map<string, QualityCount>>(GROUPS.map((g) => [g.key, new Map()]));
  for (const c of calls) {
    if (typeof c.transcript_level !== 'string') continue;
    const counts = [all];
    for (const g of GROUPS) {
      const value = g.of(c);
      const name = typeof value === 'string' ? value : '';
      const groups = by.get(g.key)!;
      const one = groups.get(name) ?? { calls: 0, low: 0, review: 0 };
      groups.set(name, one);
      counts.push(one);
    }
    for (const q of counts) {
      q.calls++;
      if (c.transcript_level === 'low') q.low++;
      if (c.needs_review === true) q.review++;
    }
  }
  return { all, byAgent: by.get('agent')!, byLine: by.get('line')! };
}

/** One group's table, worst share first; empty when no call names one. */
function groupTable(key: GroupKey, heading: string, counts: Map<string, QualityCount>): string {
  const rows = [...counts.entries()]
    .filter(([name]) => name !== '')
    .sort((a, b) => b[1].low / b[1].calls - a[1].low / a[1].calls || a[0].localeCompare(b[0]))
    .map(
      ([name, q]) =>
        `<tr data-${key}="${esc(name)}"><td>${esc(name)}</td><td class="num">${q.calls}</td><td class="num">${pct(q.low, q.calls)}</td><td class="num">${q.review}</td></tr>`,
    )
    .join('');
  return rows
    ? `<table class="cost" id="quality-by-${key}"><thead><tr><th>${heading}</th><th class="num">calls</th><th class="num">low quality</th><th class="num">need review</th></tr></thead><tbody>${rows}</tbody></table>`
    : '';
}

/** The card; empty when no call of the night was rated. */
export function qualitySection(calls: Iterable<TableRow>): string {
  const { all, byAgent, byLine } = nightQuality(calls);
  if (all.calls === 0) return '';
  const tables = groupTable('agent', 'agent', byAgent) + groupTable('line', 'line', byLine);
  return `<section class="card" id="transcript-quality"><h2>Transcript quality</h2><p><b id="low-quality-share">${pct(all.low, all.calls)}</b> of ${all.calls} calls of low quality · <b id="needs-review">${all.review}</b> need review (their scorecards are marked unreliable)</p>${tables}</section>`;
}
