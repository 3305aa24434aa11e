/**
 * The night report (issue 17): one self-contained HTML page per batch, written beside report.json.
 * It shows the processing facts (calls by outcome, audio hours, wall time, requests per audio hour),
 * the distribution of durations and sentiment (uPlot charts, inlined), the failures with their reasons,
 * and every call in a table that sorts and filters by outcome, sentiment and category in the browser,
 * each linked to its call page. The table is paged: the HTML holds the first page of calls (all a reader
 * without scripts sees, beside the summary, which is whole), and every call's cells are compact data that
 * the page's script sorts, filters and shows page by page, so a batch of 100,000 calls stays one page
 * that opens in seconds.
 *
 * Pure: the batch report and the calls' rows from the `calls` table in, the page's text out
 * (activities/pages/page-activities.ts reads them and writes it).
 */
import type { BatchReport } from '../backfill/report.ts';
import type { ReportRow } from '../../schemas/backfill.ts';
import type { TableRow } from '../../schemas/tables.ts';
import { clientScript, uplotScript, uplotStyle } from './assets.ts';
import { BASE_STYLE, duration, esc, jsonData, localTime, named } from './html.ts';
import { visibleControls } from '../../schemas/display-text.ts';
import type { DeliveryFailure } from '../../schemas/events.ts';
import { costSection } from './night-cost.ts';
import { reasonsSection } from './night-reasons.ts';
import { qualitySection } from './night-quality.ts';

export interface NightReportOptions {
  timeZone: string;
  /** Calls whose rows the HTML holds (the rest are data the script pages through): one page by default. */
  htmlRows?: number;
  /** Link from the report to a call's page (relative, so it works wherever the output is mirrored). */
  pageHref(callId: string): string;
  /** Event deliveries given up (docs/events.md) recorded around the batch: listed with the failures. */
  deliveryFailures?: DeliveryFailure[];
  /** The calls of the day before the night (the calls table): the reasons' trend compares with them. */
  previousCalls?: Map<string, TableRow>;
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

/** Calls per page of the calls table; the HTML holds the first page, the page's script the others. */
export const CALLS_PAGE_SIZE = 100;
/** Failures listed in the summary; the others are in the calls table (outcome `failed`) and report.csv. */
export const FAILURES_LISTED = 500;
/** Characters of a summary the table shows; the call page shows it whole. */
const SUMMARY_SHOWN = 80;

/**
 * One call of the table as compact data (an array, in this order; client/night-report.js reads it):
 * text ready to show (bidirectional controls made visible), numbers for sorting. Only display text:
 * the whole record is report.json and report.csv.
 */
export type CallCells = [
  callId: string,
  status: string,
  linked: 0 | 1,
  started: string,
  durationSeconds: number | null,
  durationText: string,
  agent: string,
  sentiment: string,
  customerMean: number | null,
  customer: string,
  categories: string[],
  scoreNormalized: number | null,
  scoreText: string,
  wallSeconds: number | null,
  wallText: string,
  summary: string,
  reason: string,
];

function callCells(r: ReportRow, c: TableRow | undefined, timeZone: string): CallCells {
  const linked = r.status === 'done' || r.status === 'partial' || r.status === 'skipped';
  const summary = [...visibleControls(cellText(c?.summary))];
  const started = c?.call_started_at instanceof Date ? c.call_started_at.toISOString() : '';
  const mean = c?.customer_sentiment_mean;
  const normalized = c?.score_normalized;
  const shown = (v: unknown) => visibleControls(cellText(v));
  return [
    r.callId,
    r.status,
    linked ? 1 : 0,
    started ? localTime(started, timeZone) : '',
    r.durationSeconds ?? null,
    r.durationSeconds !== undefined ? duration(r.durationSeconds) : '',
    shown(c?.agent),
    shown(c?.sentiment_label),
    typeof mean === 'number' ? mean : null,
    shown(c?.customer_sentiment_label),
    ((c?.categories as string[] | null | undefined) ?? []).map(visibleControls),
    typeof normalized === 'number' ? normalized : null,
    c?.score !== null && c?.score !== undefined ? `${cellText(c.score)} / ${cellText(c.score_max)}` : '',
    r.wallSeconds ?? null,
    r.wallSeconds !== undefined ? duration(r.wallSeconds) : '',
    summary.length > SUMMARY_SHOWN ? `${summary.slice(0, SUMMARY_SHOWN).join('')}…` : summary.join(''),
    r.reason ? visibleControls(`${r.stage ? `${r.stage}: ` : ''}${r.reason}`) : '',
  ];
}

/**
 * A row of the table in HTML, for the page's first page (what shows without the script). The script
 * draws the same structure from the same cells (client/night-report.js, `rowOf`).
 */
function callRow(cells: CallCells, pageHref: (callId: string) => string): string {
  const [callId, status, linked, started, dur, durText, agent, sentiment, mean, customer, categories] = cells;
  const [, , , , , , , , , , , normalized, scoreText, wall, wallText, summary, reason] = cells;
  const td = (v: unknown, html: string, cls = '') =>
    `<td data-v="${esc(v ?? '')}"${cls ? ` class="${cls}"` : ''}>${html}</td>`;
  return `<tr data-status="${esc(status)}" data-sentiment="${esc(sentiment)}" data-customer="${esc(customer)}">${[
    td(callId, linked ? `<a href="${esc(pageHref(callId))}">${esc(callId)}</a>` : esc(callId)),
    td(status, `<span class="badge ${esc(status)}">${esc(status)}</span>`),
    td(started, esc(started)),
    td(dur, esc(durText), 'num'),
    td(agent, esc(agent)),
    td(sentiment, esc(sentiment), `label-${esc(sentiment)}`),
    td(mean, esc(customer), `label-${esc(customer)}`),
    td(categories.join(', '), categories.map((k) => `<span class="chip">${esc(k)}</span>`).join('')),
    td(normalized, esc(scoreText), 'num'),
    td(wall, esc(wallText), 'num'),
    `<td class="summary">${esc(summary)}${reason ? `<span class="reason">${esc(reason)}</span>` : ''}</td>`,
  ].join('')}</tr>`;
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
table.cost { margin-top:10px; } table.cost td.num, table.cost th.num { text-align:right; } table.cost tr.total td { font-weight:600; }
.pager { display:flex; gap:8px; align-items:center; margin-top:10px; } .pager button { font:inherit; padding:2px 10px; }
`;

/**
 * The table's data for the page's script: every call's cells, the page size, and the link to a call's
 * page as the text around its id (links that do not follow that shape are listed by row).
 */
function callsData(cells: CallCells[], pageHref: (callId: string) => string) {
  const first = cells.find((c) => c[2] === 1);
  const href = first ? pageHref(first[0]) : '';
  const at = first ? href.lastIndexOf(first[0]) : -1;
  const around: [string, string] =
    at >= 0 ? [href.slice(0, at), href.slice(at + first![0].length)] : ['', ''];
  const hrefs: Record<number, string> = {};
  cells.forEach((c, i) => {
    if (c[2] !== 1) return;
    const h = pageHref(c[0]);
    if (h !== `${around[0]}${c[0]}${around[1]}`) hrefs[i] = h;
  });
  return { pageSize: CALLS_PAGE_SIZE, href: around, hrefs, rows: cells };
}

/** Event deliveries given up: which event of which call, to which sink, why (never a URL). */
function deliveryFailuresHtml(failures: DeliveryFailure[], timeZone: string): string {
  if (!failures.length) return '';
  const listed = failures.slice(0, FAILURES_LISTED);
  return `<h3 id="event-delivery-failures">Event deliveries given up (${failures.length})</h3><table><thead><tr><th>event</th><th>type</th><th>call</th><th>sink</th><th>attempts</th><th>reason</th><th>given up</th></tr></thead><tbody>${listed
    .map(
      (f) =>
        `<tr><td class="muted">${esc(f.eventId)}</td><td>${esc(f.type)}</td><td>${esc(f.callId ?? f.batchId ?? '')}</td><td>${esc(f.sink)}</td><td>${f.attempts}</td><td>${esc(f.reason)}</td><td>${esc(localTime(f.gaveUpAt, timeZone))}</td></tr>`,
    )
    .join(
      '',
    )}</tbody></table><p class="muted">Each event is kept in <code>events/</code> beside the results; <code>callpipe events status</code> lists these.</p>`;
}

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
  const recognized = [...calls.values()].map((c) => c.recognition);
  const byFile = recognized.filter((r) => r === 'file' || r === 'mixed').length;
  const byStream = recognized.filter((r) => r === 'stream').length;
  const fact = (value: string, label: string, id?: string) =>
    `<div class="fact"${id ? ` id="${id}"` : ''}><b>${value}</b><span>${esc(label)}</span></div>`;
  const statuses = ['done', 'partial', 'failed', 'skipped', 'missing', 'cancelled'].filter(
    (s) => facts.byStatus[s],
  );
  const cells = report.rows.map((r) => callCells(r, calls.get(r.callId), options.timeZone));
  const inHtml = Math.min(cells.length, options.htmlRows ?? CALLS_PAGE_SIZE);
  const listed = failures.slice(0, FAILURES_LISTED);
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
${fact(`${byFile} / ${byStream}`, 'calls recognized by file pieces / by streams', 'fact-recognition')}
</div>
${costSection(report.cost)}
${reasonsSection(calls.values(), options.previousCalls?.values())}
${qualitySection(calls.values())}
<div class="grid">
<section class="card"><h2>Durations</h2><div class="chart" id="durations-chart"></div></section>
<section class="card"><h2>Sentiment</h2><div class="chart" id="sentiment-chart"></div></section>
</div>
<section class="card" id="failures"><h2>Failures (${failures.length})</h2>${
    failures.length
      ? `<table><thead><tr><th>call</th><th>status</th><th>stage</th><th>reason</th><th>source</th></tr></thead><tbody>${listed
          .map(
            (r) =>
              `<tr><td>${esc(r.callId)}</td><td><span class="badge ${esc(r.status)}">${esc(r.status)}</span></td><td>${esc(r.stage ?? (r.tablesError ? 'tables' : ''))}</td><td>${esc(r.reason ?? r.tablesError ?? '')}</td><td class="muted">${named(r.source)}</td></tr>`,
          )
          .join('')}</tbody></table>${
          failures.length > listed.length
            ? `<p class="muted" id="failures-more">${failures.length - listed.length} more: outcome <code>failed</code> or <code>missing</code> in the calls below, and report.csv</p>`
            : ''
        }`
      : '<p class="muted">None.</p>'
  }${deliveryFailuresHtml(options.deliveryFailures ?? [], options.timeZone)}</section>
<section class="card"><h2>Calls</h2>
<div class="filters">
<label>outcome <select id="filter-status"><option value="">all</option>${statuses.map((s) => `<option>${s}</option>`).join('')}</select></label>
<label>sentiment <select id="filter-sentiment"><option value="">all</option>${SENTIMENTS.map((s) => `<option>${s}</option>`).join('')}</select></label>
<label>customer <select id="filter-customer"><option value="">all</option>${SENTIMENTS.map((s) => `<option>${s}</option>`).join('')}</select></label>
<label>category <select id="filter-category"><option value="">all</option>${categories.map((c) => `<option>${esc(c)}</option>`).join('')}</select></label>
<label>search <input id="filter-text" type="search" placeholder="call, agent, summary…"></label>
<span class="muted" id="shown"></span>
</div>
<noscript><p class="muted">The first ${inHtml} of ${cells.length} calls; the others show page by page with scripts on, and are all in report.csv.</p></noscript>
<table id="calls"><thead><tr><th data-type="text">call</th><th data-type="text">outcome</th><th data-type="text">started</th><th data-type="num">duration</th><th data-type="text">agent</th><th data-type="text">sentiment</th><th data-type="num">customer</th><th data-type="text">categories</th><th data-type="num">score</th><th data-type="num">wall</th><th data-type="text">summary / reason</th></tr></thead>
<tbody>
${cells
  .slice(0, inHtml)
  .map((c) => callRow(c, options.pageHref))
  .join('\n')}
</tbody></table>
<div class="pager" id="pager" hidden><button type="button" id="page-first">« first</button><button type="button" id="page-prev">‹ previous</button>
<span id="page-at"></span><button type="button" id="page-next">next ›</button><button type="button" id="page-last">last »</button></div></section>
<p class="muted">report.json · report.csv beside this page · ${report.runs} run(s) · analysis tables: one row per call in <code>calls</code></p>
</main>
<script type="application/json" id="charts-data">${jsonData(chartsData(report.rows, calls))}</script>
<script type="application/json" id="calls-data">${jsonData(callsData(cells, options.pageHref))}</script>
<script>${uplotScript()}</script>
<script>${clientScript('common')}</script>
<script>${clientScript('night-report')}</script>
</body></html>
`;
}
