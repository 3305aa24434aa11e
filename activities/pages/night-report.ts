/**
 * The night report (issue 17): one self-contained HTML page per batch, written beside report.json.
 * It shows the processing facts (calls by outcome, audio hours, wall time, requests per audio hour),
 * the distribution of durations and sentiment (uPlot charts, inlined), the failures with their reasons,
 * and every call in a table that sorts and filters by outcome, sentiment and category in the browser,
 * each linked to its call page.
 *
 * Pure: the batch report and the calls' rows from the `calls` table in, the page's text out
 * (activities/pages/page-activities.ts reads them and writes it).
 */
import type { BatchReport } from '../backfill/report.ts';
import type { ReportRow } from '../../schemas/backfill.ts';
import type { TableRow } from '../../schemas/tables.ts';
import { clientScript, uplotScript, uplotStyle } from './assets.ts';
import { BASE_STYLE, duration, esc, jsonData, localTime } from './html.ts';

export interface NightReportOptions {
  timeZone: string;
  /** Link from the report to a call's page (relative, so it works wherever the output is mirrored). */
  pageHref(callId: string): string;
}

/** Duration buckets of the histogram, upper bounds in seconds (the last is open). */
const DURATION_BUCKETS = [60, 120, 300, 600, 900, 1800, 3600];
const SENTIMENTS = ['Positive', 'Neutral', 'Negative'] as const;

function bucketLabel(i: number): string {
  const lo = i === 0 ? 0 : DURATION_BUCKETS[i - 1]!;
  const hi = DURATION_BUCKETS[i];
  const m = (s: number) => `${s / 60}`;
  return hi === undefined ? `≥ ${m(lo)} min` : `${m(lo)}–${m(hi)} min`;
}

export interface NightFacts {
  calls: number;
  byStatus: Record<string, number>;
  audioHours: number;
  wallSeconds: number;
  requests: number;
  requestsPerAudioHour: number | null;
}

/** The batch's processing facts, from its rows (the report is the record). */
export function nightFacts(report: Pick<BatchReport, 'rows' | 'startedAt' | 'finishedAt'>): NightFacts {
  const byStatus: Record<string, number> = {};
  for (const r of report.rows) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
  const processed = report.rows.filter((r) => r.status === 'done' || r.status === 'partial');
  const audioSeconds = processed.reduce((n, r) => n + (r.durationSeconds ?? 0), 0);
  const requests = report.rows.reduce((n, r) => n + (r.requests ?? 0), 0);
  const audioHours = audioSeconds / 3600;
  return {
    calls: report.rows.length,
    byStatus,
    audioHours,
    wallSeconds: Math.max(0, (Date.parse(report.finishedAt) - Date.parse(report.startedAt)) / 1000) || 0,
    requests,
    requestsPerAudioHour: audioHours > 0 ? requests / audioHours : null,
  };
}

function chartsData(rows: ReportRow[], calls: Map<string, TableRow>) {
  const durations = DURATION_BUCKETS.map(() => 0).concat(0);
  for (const r of rows) {
    if (r.durationSeconds === undefined || !(r.status === 'done' || r.status === 'partial')) continue;
    const i = DURATION_BUCKETS.findIndex((b) => r.durationSeconds! < b);
    durations[i === -1 ? DURATION_BUCKETS.length : i]! += 1;
  }
  const count = (column: string) =>
    SENTIMENTS.map((label) => [...calls.values()].filter((c) => c[column] === label).length);
  return {
    durations: { labels: durations.map((_, i) => bucketLabel(i)), counts: durations },
    sentiment: {
      labels: [...SENTIMENTS],
      overall: count('sentiment_label'),
      customer: count('customer_sentiment_label'),
    },
  };
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return Array.isArray(value) ? value.join(', ') : String(value);
}

function callRow(r: ReportRow, c: TableRow | undefined, options: NightReportOptions): string {
  const linked = r.status === 'done' || r.status === 'partial' || r.status === 'skipped';
  const categories = (c?.categories as string[] | null | undefined) ?? [];
  const summary = cellText(c?.summary);
  const started = c?.call_started_at instanceof Date ? c.call_started_at.toISOString() : '';
  const cells = [
    `<td data-v="${esc(r.callId)}">${linked ? `<a href="${esc(options.pageHref(r.callId))}">${esc(r.callId)}</a>` : esc(r.callId)}</td>`,
    `<td data-v="${esc(r.status)}"><span class="badge ${esc(r.status)}">${esc(r.status)}</span></td>`,
    `<td data-v="${esc(started)}">${started ? esc(localTime(started, options.timeZone)) : ''}</td>`,
    `<td data-v="${r.durationSeconds ?? ''}" class="num">${r.durationSeconds !== undefined ? esc(duration(r.durationSeconds)) : ''}</td>`,
    `<td data-v="${esc(cellText(c?.agent))}">${esc(cellText(c?.agent))}</td>`,
    `<td data-v="${esc(cellText(c?.sentiment_label))}" class="label-${esc(cellText(c?.sentiment_label))}">${esc(cellText(c?.sentiment_label))}</td>`,
    `<td data-v="${esc(cellText(c?.customer_sentiment_mean))}" class="label-${esc(cellText(c?.customer_sentiment_label))}">${esc(cellText(c?.customer_sentiment_label))}</td>`,
    `<td data-v="${esc(categories.join(', '))}">${categories.map((k) => `<span class="chip">${esc(k)}</span>`).join('')}</td>`,
    `<td data-v="${c?.score_normalized ?? ''}" class="num">${c?.score !== null && c?.score !== undefined ? `${esc(c.score)} / ${esc(c.score_max)}` : ''}</td>`,
    `<td data-v="${r.wallSeconds ?? ''}" class="num">${r.wallSeconds !== undefined ? esc(duration(r.wallSeconds)) : ''}</td>`,
    `<td class="summary" title="${esc(summary)}">${esc([...summary].slice(0, 80).join(''))}${[...summary].length > 80 ? '…' : ''}${r.reason ? `<span class="reason">${esc(r.stage ? `${r.stage}: ` : '')}${esc(r.reason)}</span>` : ''}</td>`,
  ];
  return `<tr data-status="${esc(r.status)}" data-sentiment="${esc(cellText(c?.sentiment_label))}" data-customer="${esc(cellText(c?.customer_sentiment_label))}" data-categories="${esc(JSON.stringify(categories))}">${cells.join('')}</tr>`;
}

const PAGE_STYLE = `
.facts-grid { display:grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap:10px; }
.fact { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:10px 12px; }
.fact b { display:block; font-size:20px; } .fact span { color:var(--muted); font-size:12px; }
.grid { display:grid; grid-template-columns: 1fr 1fr; gap:16px; } @media (max-width: 900px) { .grid { grid-template-columns: 1fr; } }
.grid > section.card { margin-top:16px; }
.filters { display:flex; flex-wrap:wrap; gap:10px; align-items:center; margin-bottom:10px; }
.filters select, .filters input { font:inherit; padding:3px 6px; border:1px solid var(--line); border-radius:5px; }
#calls th { cursor:pointer; user-select:none; } #calls th.sorted-asc::after { content:' ▲'; } #calls th.sorted-desc::after { content:' ▼'; }
#calls td.num { text-align:right; white-space:nowrap; } #calls td.summary { max-width:360px; }
#calls .reason { display:block; color:var(--neg); font-size:12px; }
.chart { min-height:220px; }
`;

export function renderNightReport(
  report: BatchReport,
  calls: Map<string, TableRow>,
  options: NightReportOptions,
): string {
  const facts = nightFacts(report);
  const failures = report.rows.filter(
    (r) => r.status === 'failed' || r.status === 'missing' || r.tablesError,
  );
  const categories = [
    ...new Set([...calls.values()].flatMap((c) => (c.categories as string[] | null | undefined) ?? [])),
  ].sort();
  const roles = [...calls.values()].map((c) => c.roles_decision);
  const swapped = roles.filter((d) => d === 'swapped').length;
  const inferred = [...calls.values()].filter((c) => c.speakers_inferred === true).length;
  const lowConfidence = roles.filter((d) => d === 'low-confidence' || d === 'unknown').length;
  const fact = (value: string, label: string, id?: string) =>
    `<div class="fact"${id ? ` id="${id}"` : ''}><b>${value}</b><span>${esc(label)}</span></div>`;
  const statuses = ['done', 'partial', 'failed', 'skipped', 'missing', 'cancelled'].filter(
    (s) => facts.byStatus[s],
  );
  return `<!doctype html>
<html lang="ja"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="callpipe"><meta name="callpipe-batch-id" content="${esc(report.batchId)}">
<title>${esc(report.batchId)} · callpipe night report</title>
<style>${BASE_STYLE}${PAGE_STYLE}${uplotStyle()}</style></head>
<body>
<header class="top"><h1>${esc(report.batchId)}</h1><div class="facts">
<span>${esc(localTime(report.startedAt, options.timeZone))} → ${esc(localTime(report.finishedAt, options.timeZone))} (${esc(options.timeZone)})</span>
<span>${esc(report.source)}</span><span>→ ${esc(report.output)}</span><span><span class="badge ${esc(report.status)}">${esc(report.status)}</span></span>
</div></header>
<main>
<div class="facts-grid" id="facts">
${fact(String(facts.calls), 'calls', 'fact-calls')}
${statuses.map((s) => fact(String(facts.byStatus[s]), s, `fact-${s}`)).join('\n')}
${fact(facts.audioHours.toFixed(2), 'audio hours', 'fact-audio-hours')}
${fact(esc(duration(facts.wallSeconds)), 'wall time', 'fact-wall')}
${fact(facts.requestsPerAudioHour !== null ? Math.round(facts.requestsPerAudioHour).toLocaleString('en-US') : '—', 'requests per audio hour', 'fact-requests')}
${fact(String(swapped), 'roles swapped against the channel map', 'fact-roles-swapped')}
${fact(String(inferred), 'speakers inferred from voices (mono)', 'fact-speakers-inferred')}
${fact(String(lowConfidence), 'roles of low confidence', 'fact-roles-low-confidence')}
</div>
<div class="grid">
<section class="card"><h2>Durations</h2><div class="chart" id="durations-chart"></div></section>
<section class="card"><h2>Sentiment</h2><div class="chart" id="sentiment-chart"></div></section>
</div>
<section class="card" id="failures"><h2>Failures (${failures.length})</h2>${
    failures.length
      ? `<table><thead><tr><th>call</th><th>status</th><th>stage</th><th>reason</th><th>source</th></tr></thead><tbody>${failures
          .map(
            (r) =>
              `<tr><td>${esc(r.callId)}</td><td><span class="badge ${esc(r.status)}">${esc(r.status)}</span></td><td>${esc(r.stage ?? (r.tablesError ? 'tables' : ''))}</td><td>${esc(r.reason ?? r.tablesError ?? '')}</td><td class="muted">${esc(r.source)}</td></tr>`,
          )
          .join('')}</tbody></table>`
      : '<p class="muted">None.</p>'
  }</section>
<section class="card"><h2>Calls</h2>
<div class="filters">
<label>outcome <select id="filter-status"><option value="">all</option>${statuses.map((s) => `<option>${s}</option>`).join('')}</select></label>
<label>sentiment <select id="filter-sentiment"><option value="">all</option>${SENTIMENTS.map((s) => `<option>${s}</option>`).join('')}</select></label>
<label>customer <select id="filter-customer"><option value="">all</option>${SENTIMENTS.map((s) => `<option>${s}</option>`).join('')}</select></label>
<label>category <select id="filter-category"><option value="">all</option>${categories.map((c) => `<option>${esc(c)}</option>`).join('')}</select></label>
<label>search <input id="filter-text" type="search" placeholder="call, agent, summary…"></label>
<span class="muted" id="shown"></span>
</div>
<table id="calls"><thead><tr><th data-type="text">call</th><th data-type="text">outcome</th><th data-type="text">started</th><th data-type="num">duration</th><th data-type="text">agent</th><th data-type="text">sentiment</th><th data-type="num">customer</th><th data-type="text">categories</th><th data-type="num">score</th><th data-type="num">wall</th><th data-type="text">summary / reason</th></tr></thead>
<tbody>
${report.rows.map((r) => callRow(r, calls.get(r.callId), options)).join('\n')}
</tbody></table></section>
<p class="muted">report.json · report.csv beside this page · ${report.runs} run(s) · analysis tables: one row per call in <code>calls</code></p>
</main>
<script type="application/json" id="charts-data">${jsonData(chartsData(report.rows, calls))}</script>
<script>${uplotScript()}</script>
<script>${clientScript('common')}</script>
<script>${clientScript('night-report')}</script>
</body></html>
`;
}
