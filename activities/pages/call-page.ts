/**
 * The call viewer (issue 17): one self-contained HTML page per call, written beside result.json, that
 * opens from S3, a file or `callpipe open <callId>` with no server and no network. It shows the
 * summary and keywords, a timeline of talk, silence, overlap and long silences per speaker, sentiment
 * over the call per speaker (a uPlot chart, inlined), and the transcript by speaker with times and
 * redactions marked; an audio player follows the transcript when the recording is reachable.
 *
 * Pure: a result document in, the page's text out (activities/storage/result-activities.ts writes it).
 */
import type { ResultDocument, ResultUtterance } from '../../schemas/result.ts';
import type { RedactionRecord } from '../../schemas/redaction.ts';
import { callStart, shownSource } from '../tables/rows.ts';
import type { CallIdMode } from '../../schemas/config.ts';
import { clientScript, uplotScript, uplotStyle } from './assets.ts';
import { BASE_STYLE, duration, esc, jsonData, localTime, named } from './html.ts';
import { clock } from '../../schemas/units.ts';
import { lowQuality, type TranscriptQuality } from '../../schemas/transcript-quality.ts';

/** A silence at least this long, nobody talking, is shown as a long silence (a hold, a search, a transfer). */
const LONG_SILENCE_SECONDS = 20;

export interface CallPageOptions {
  /** Time zone the call's times are shown in (`CALLPIPE_TIME_ZONE`). */
  timeZone: string;
  /**
   * Where the page may find the recording, relative to the page (same bucket, served over HTTP or
   * mirrored); `?audio=<url>` in the page's address wins over it.
   */
  audioHref?: string;
  /** The call id rule (config `callIds`): how the page shows the recording's key (tables/rows.ts); default auto. */
  callIds?: CallIdMode;
}

/** The utterance's redactions in text order (records out of the text's bounds are not marked). */
function redactionsOf(u: ResultUtterance): RedactionRecord[] {
  return [...(u.redactions ?? [])].sort((a, b) => a.begin - b.begin);
}

/** The utterance's text with each redaction's mask wrapped in a visible marker naming its kind. */
export function markedText(u: ResultUtterance): string {
  const marks = redactionsOf(u);
  let out = '';
  let at = 0;
  for (const m of marks) {
    if (m.begin < at || m.end > u.text.length || m.end <= m.begin) continue;
    out += esc(u.text.slice(at, m.begin));
    out += `<mark class="redacted" title="redacted: ${esc(m.kind)}" data-kind="${esc(m.kind)}">${esc(u.text.slice(m.begin, m.end))}</mark>`;
    at = m.end;
  }
  return out + esc(u.text.slice(at));
}

const SPEAKER_COLORS: Record<string, string> = { agent: 'var(--agent)', customer: 'var(--customer)' };
const colorOf = (speaker: string) => SPEAKER_COLORS[speaker] ?? 'var(--other)';

/** Intervals where nobody talks and where two or more talk at once, from the utterances' spans. */
export function silencesAndOverlaps(
  utterances: readonly { start: number; end: number }[],
  durationSeconds: number,
): { silences: [number, number][]; overlaps: [number, number][] } {
  const edges = utterances.flatMap((u) => [
    { t: Math.max(0, u.start), d: 1 },
    { t: Math.min(durationSeconds, u.end), d: -1 },
  ]);
  edges.sort((a, b) => a.t - b.t || a.d - b.d);
  const silences: [number, number][] = [];
  const overlaps: [number, number][] = [];
  let depth = 0;
  let last = 0;
  for (const e of edges) {
    if (e.t > last) {
      if (depth === 0) silences.push([last, e.t]);
      if (depth >= 2) overlaps.push([last, e.t]);
    }
    depth += e.d;
    last = Math.max(last, e.t);
  }
  if (durationSeconds > last) silences.push([last, durationSeconds]);
  return { silences, overlaps };
}

function timelineSvg(result: ResultDocument): string {
  const total = Math.max(result.audio.durationSeconds, ...result.utterances.map((u) => u.end), 1);
  const W = 1000;
  const lane = 22;
  const left = 110;
  const x = (t: number) => (left + (t / total) * (W - left - 10)).toFixed(1);
  const w = (a: number, b: number) => Math.max(0.8, ((b - a) / total) * (W - left - 10)).toFixed(1);
  const { silences, overlaps } = silencesAndOverlaps(result.utterances, total);
  // Holds as the insights found them (a hold phrase, then a return); without metrics, long silences.
  const holds = result.metrics
    ? {
        label: 'hold',
        spans: result.metrics.holds.map((h) => [h.start, h.end] as [number, number]),
        title: 'on hold',
      }
    : {
        label: `silence ≥ ${LONG_SILENCE_SECONDS} s`,
        spans: silences.filter(([a, b]) => b - a >= LONG_SILENCE_SECONDS),
        title: 'long silence (hold, search or transfer)',
      };
  const lanes: { label: string; color: string; spans: [number, number][]; title: string }[] = [
    ...result.speakers.map((s) => ({
      label: s,
      color: colorOf(s),
      spans: result.utterances
        .filter((u) => u.speaker === s)
        .map((u) => [u.start, u.end] as [number, number]),
      title: `${s} talking`,
    })),
    { label: 'silence', color: 'var(--silence)', spans: silences, title: 'nobody talking' },
    { label: 'overlap', color: 'var(--overlap)', spans: overlaps, title: 'talking at once' },
    { ...holds, color: 'var(--hold)' },
  ];
  const height = lanes.length * lane + 24;
  const ticks = niceTicks(total);
  const rows = lanes
    .map((l, i) => {
      const y = i * lane + 4;
      const bars = l.spans
        .map(
          ([a, b]) =>
            `<rect x="${x(a)}" y="${y}" width="${w(a, b)}" height="${lane - 8}" fill="${l.color}" data-start="${a.toFixed(2)}"><title>${esc(l.title)} ${clock(a)}–${clock(b)}</title></rect>`,
        )
        .join('');
      return `<text x="0" y="${y + lane - 10}" class="lane">${esc(l.label)}</text><rect x="${left}" y="${y}" width="${W - left - 10}" height="${lane - 8}" fill="#f1f3f7"/>${bars}`;
    })
    .join('');
  const axis = ticks
    .map(
      (t) =>
        `<line x1="${x(t)}" x2="${x(t)}" y1="0" y2="${height - 18}" stroke="#e3e7ee"/><text x="${x(t)}" y="${height - 4}" class="tick">${clock(t)}</text>`,
    )
    .join('');
  return `<svg id="timeline" viewBox="0 0 ${W} ${height}" width="100%" role="img" aria-label="talk, silence and overlap over the call">${axis}${rows}<line id="playhead" x1="${left}" x2="${left}" y1="0" y2="${height - 18}" stroke="#18202e" stroke-width="1.5" visibility="hidden"/></svg>`;
}

function niceTicks(total: number): number[] {
  const steps = [5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];
  const step = steps.find((s) => total / s <= 10) ?? 7200;
  const ticks: number[] = [];
  for (let t = 0; t <= total; t += step) ticks.push(t);
  return ticks;
}

function speakerTable(result: ResultDocument): string {
  const talk = new Map(result.talk.bySpeaker.map((t) => [t.speaker, t]));
  const rows = result.speakers
    .map((s) => {
      const t = talk.get(s);
      const feel = result.sentiment?.bySpeaker[s];
      return `<tr><td><span class="dot" style="background:${colorOf(s)}"></span>${esc(s)}</td><td>${t?.utterances ?? 0}</td><td>${duration(t?.talkSeconds ?? 0)}</td><td>${Math.round((t?.talkShare ?? 0) * 100)} %</td><td>${duration(t?.silenceSeconds ?? 0)}</td><td class="label-${esc(feel?.label ?? '')}">${esc(feel?.label ?? '—')}${feel?.meanValue != null ? ` (${feel.meanValue.toFixed(2)})` : ''}</td></tr>`;
    })
    .join('');
  return `<table class="speakers"><thead><tr><th>speaker</th><th>utterances</th><th>talk</th><th>share</th><th>silent</th><th>sentiment</th></tr></thead><tbody>${rows}</tbody></table>
<p class="muted">Nobody talking: ${duration(result.talk.silenceSeconds)} · talking at once: ${duration(result.talk.overlapSeconds)}</p>
${roleEvidence(result)}`;
}

/** Who each speaker is and why: the decision, inferred speakers marked, the evidence in words. */
function roleEvidence(result: ResultDocument): string {
  const roles = result.speakerRoles;
  if (!roles) return '';
  const marks = [
    ...(roles.inferred ? ['<span class="badge inferred">inferred from voices</span>'] : []),
    ...(roles.swapped ? ['<span class="badge swapped">roles swapped against the channel map</span>'] : []),
    ...(roles.confidence === 'low' ? ['<span class="badge low-confidence">low confidence</span>'] : []),
  ];
  const sep = roles.separation;
  const separation = sep
    ? `<p class="muted">${sep.voices} voice(s) told apart${sep.joined ? ` · ${sep.joined} utterance(s) holding two voices, given to the one holding most` : ''}${sep.unassigned ? ` · ${sep.unassigned} left mixed` : ''}${sep.reason ? ` · ${esc(sep.reason)}` : ''}</p>`
    : '';
  const rows = roles.speakers
    .map(
      (s) =>
        `<li><b style="color:${colorOf(s.speaker)}">${esc(s.speaker)}</b> <span class="muted">(${s.voice !== null ? `voice ${s.voice + 1}` : `track ${s.track}`}${s.configured && s.configured !== s.speaker ? `, configured ${esc(s.configured)}` : ''})</span>: ${esc(s.words)}</li>`,
    )
    .join('');
  return `<div id="roles" data-decision="${esc(roles.decision)}"><p>${marks.join(' ')} ${esc(roles.summary)}</p>${separation}<ul class="evidence">${rows}</ul></div>`;
}

/** The transcript's quality in the header: its level and score, and "needs review" when it does. */
function qualityFact(q: TranscriptQuality): string {
  const review = q.needsReview ? ' <span class="badge needs-review">needs review</span>' : '';
  return `<span id="transcript-quality" data-level="${q.level}" title="${q.lowUtterances} low-quality utterance(s), ${q.checked} checked">transcript ${q.level} ${Math.round(q.score * 100)} %</span>${review}`;
}

/** Categories matched (and not), and the scorecard's answers, each pointing at where it held. */
function insights(result: ResultDocument): string {
  if (!result.categories && !result.scorecard) return '';
  const at = (points: { start: number; utterance: number | null }[]) =>
    points
      .slice(0, 6)
      .map(
        (p) =>
          `<a href="#${p.utterance !== null ? `u${p.utterance}` : 'timeline'}" class="seek-to" data-start="${p.start}">${clock(p.start)}</a>`,
      )
      .join(' ');
  const categories = (result.categories ?? [])
    .map(
      (c) =>
        `<tr class="${c.matched ? 'matched' : 'unmatched'}"><td>${c.matched ? '✔' : '–'}</td><td>${esc(c.name)}</td><td>${at(c.points)}${c.unavailable?.length ? ` <span class="muted">(needs ${esc(c.unavailable.join(', '))})</span>` : ''}</td></tr>`,
    )
    .join('');
  const card = result.scorecard;
  const answers = (card?.answers ?? [])
    .map(
      (a) =>
        `<tr><td class="answer-${a.answer}">${a.answer}</td><td>${esc(a.text)}</td><td>${a.weight}</td><td>${at(a.points)}${a.reason ? ` <span class="muted">${esc(a.reason)}</span>` : ''}</td></tr>`,
    )
    .join('');
  return `<div class="grid"><section class="card" id="categories"><h2>Categories</h2>${categories ? `<table><tbody>${categories}</tbody></table>` : '<span class="muted">none in the rule file</span>'}</section>
<section class="card" id="scorecard"><h2>Scorecard${card ? `: ${esc(card.name)}` : ''}</h2>${card?.unreliable ? '<p class="unreliable"><b>Unreliable</b>: the transcript needs review; these answers were computed from it and are not facts.</p>' : ''}${card ? `<p><b>${card.score} / ${card.max}</b>${card.normalized !== null ? ` (${Math.round(card.normalized * 100)} %)` : ''}</p><table><thead><tr><th>answer</th><th>question</th><th>weight</th><th>where</th></tr></thead><tbody>${answers}</tbody></table>` : '<span class="muted">no scorecard in the rule file</span>'}${result.rules ? `<p class="muted">rules ${esc(result.rules.name)} ${esc(result.rules.version)}</p>` : ''}</section></div>`;
}

/** Why the customer called, by the reasons model: the best classes with their scores, and the model. */
function reasonsBlock(result: ResultDocument): string {
  const r = result.reasons;
  if (!r) return '';
  const classes = r.top
    .map(
      (c, i) =>
        `<span class="chip${i === 0 ? ' best' : ''}" title="score ${c.score.toFixed(2)}">${esc(c.class)} ${Math.round(c.score * 100)} %</span>`,
    )
    .join('');
  const trained = r.trainedAt ? `, trained ${esc(r.trainedAt)}` : '';
  return `<h2 style="margin-top:12px">Reason</h2><div id="reason" data-reason="${esc(r.top[0]?.class ?? '')}">${classes}</div><p class="muted">model ${esc(r.modelId)}${trained}, from the ${r.text === 'summary' ? 'summary' : "customer's words"}</p>`;
}

/**
 * What misrecognition detection suspects in an utterance, beside its text: each suspect span with the
 * suggested corrections (never applied to the text), or that nothing better was offered.
 */
function corrections(u: ResultUtterance): string {
  const m = u.misrecognition;
  if (!m || m.candidates.length === 0) return '';
  const items = m.candidates.map((c) => {
    const best = c.corrections[0];
    return `<span class="correction" title="suspect ${Math.round(c.score * 100)} %">${esc(c.text)} → ${best ? `${esc(best.text)} <span class="muted">${Math.round(best.score * 100)} %</span>` : '<span class="muted">no suggestion</span>'}</span>`;
  });
  return `<div class="corrections">${items.join(' ')}</div>`;
}

function transcript(result: ResultDocument): string {
  const rows = result.utterances
    .map((u, i) => {
      const s = u.sentiment;
      const inferred = result.speakerRoles?.inferred
        ? ` title="inferred from the voice (${Math.round((u.speakerConfidence ?? 0) * 100)} %)${u.joined ? '; two voices in one utterance' : ''}"`
        : '';
      const checkBelow = result.transcriptQuality?.checkBelow;
      const low = checkBelow !== undefined && lowQuality(u, checkBelow);
      const quality = low
        ? ` title="low quality: confidence ${Math.round((u.confidence ?? 1) * 100)} %${u.misrecognition ? `, misrecognition ${Math.round(u.misrecognition.score * 100)} %` : ''}"`
        : '';
      return `<tr class="utt${low ? ' low-quality' : ''}" id="u${i}"${quality} data-start="${u.start}" data-end="${u.end}"><td class="t"><a href="#u${i}" class="seek">${clock(u.start)}</a></td><td class="who${inferred ? ' inferred' : ''}" style="color:${colorOf(u.speaker)}"${inferred}>${esc(u.speaker)}${inferred ? '*' : ''}</td><td class="text">${markedText(u)}${corrections(u)}</td><td class="feel">${s ? `<span class="label-${esc(s.label)}" title="${esc(s.label)} ${s.value.toFixed(2)}">●</span>` : ''}</td></tr>`;
    })
    .join('\n');
  return `<table id="transcript"><tbody>\n${rows}\n</tbody></table>`;
}

/** The data the chart script draws: per speaker, the utterances' midpoints and signed sentiment. */
function chartData(result: ResultDocument) {
  return {
    speakers: result.speakers.map((s) => ({ name: s, color: colorOf(s) })),
    points: result.utterances.flatMap((u) =>
      u.sentiment
        ? [
            [
              Math.round(((u.start + u.end) / 2) * 10) / 10,
              result.speakers.indexOf(u.speaker),
              u.sentiment.value,
            ],
          ]
        : [],
    ),
    duration: result.audio.durationSeconds,
  };
}

const PAGE_STYLE = `
.player { position:sticky; top:0; z-index:5; background:var(--card); border-bottom:1px solid var(--line); padding:8px 24px; display:flex; gap:12px; align-items:center; flex-wrap:wrap; }
.player audio { width:420px; max-width:100%; height:34px; }
.player .note { font-size:12px; }
svg text.lane { font-size:12px; fill:var(--muted); } svg text.tick { font-size:11px; fill:var(--muted); text-anchor:middle; }
svg#timeline rect[data-start] { cursor:pointer; }
.dot { display:inline-block; width:9px; height:9px; border-radius:50%; margin-right:6px; }
#transcript td.t { width:64px; white-space:nowrap; } #transcript td.who { width:90px; font-weight:600; } #transcript td.feel { width:24px; }
#transcript tr.current { background:#fff6d6; }
#transcript a.seek { color:var(--muted); text-decoration:none; } #transcript a.seek:hover { text-decoration:underline; }
#sentiment-chart { min-height:240px; }
.grid { display:grid; grid-template-columns: 1fr 1fr; gap:16px; } @media (max-width: 900px) { .grid { grid-template-columns: 1fr; } }
.grid > section.card { margin-top:0; } .grid + .grid, .grid + section.card, section.card + .grid { margin-top:16px; }
.badge.inferred, .badge.low-confidence { background:#eef0f5; color:var(--muted); } .badge.swapped { background:#fff1d6; color:#8a5a00; }
#roles ul.evidence { margin:4px 0 0; padding-left:18px; font-size:13px; } #transcript td.who.inferred { font-style:italic; }
.chip.best { font-weight:600; }
#transcript tr.low-quality td.text { background:#fff1f0; } .corrections { font-size:12px; margin-top:2px; } .correction { margin-right:10px; color:#8a5a00; }
.badge.needs-review { background:#ffe3e0; color:var(--neg); } p.unreliable { color:var(--neg); }
tr.unmatched { color:var(--muted); } td.answer-yes { color:var(--pos); font-weight:600; } td.answer-no { color:var(--neg); font-weight:600; } td.answer-na { color:var(--neu); }
`;

/** How speech was recognized (streams, file pieces, both) and why, when the result says. */
function recognitionNote(result: ResultDocument): string {
  const r = result.recognition;
  if (!r) return '';
  const pieces = result.sessions.filter((s) => s.recognition === 'file').length;
  const how = { stream: 'streams', file: 'file pieces', mixed: 'file pieces and streams', none: 'nothing' }[
    r.used
  ];
  return ` · <span id="recognition" title="${esc(r.reason)}">recognized by ${how}${pieces ? ` (${pieces} pieces)` : ''}, ${esc(r.requested)} asked</span>`;
}

export function renderCallPage(result: ResultDocument, options: CallPageOptions): string {
  const start = callStart(result, options.timeZone);
  const meta = result.source.metadata ?? {};
  const status = result.stepFailures.length ? 'partial' : 'done';
  const facts = [
    `${esc(localTime(start.at.toISOString(), options.timeZone))} <span class="muted">(${esc(options.timeZone)}, ${esc(start.source)})</span>`,
    esc(duration(result.audio.durationSeconds)),
    `${result.utterances.length} utterances`,
    result.speakers.map(named).join(' · ') +
      (result.speakerRoles?.inferred ? ' <span class="badge inferred">inferred</span>' : '') +
      (result.speakerRoles?.swapped ? ' <span class="badge swapped">swapped</span>' : ''),
    `<span class="badge ${status}">${status}</span>`,
    ...(result.reasons?.top[0] ? [`reason <b>${esc(result.reasons.top[0].class)}</b>`] : []),
    ...(result.transcriptQuality ? [qualityFact(result.transcriptQuality)] : []),
    ...(meta.agent ? [`agent ${named(meta.agent)}`] : []),
    ...(meta.direction ? [named(meta.direction)] : []),
    ...(result.processing.batchId ? [`batch ${named(result.processing.batchId)}`] : []),
  ];
  const overall = result.sentiment?.overall;
  const failed = result.stepFailures.length
    ? `<section class="card"><h2>Steps that failed</h2><ul>${result.stepFailures.map((f) => `<li><b>${esc(f.step)}</b>: ${esc(f.reason)}</li>`).join('')}</ul></section>`
    : '';
  return `<!doctype html>
<html lang="ja"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="callpipe"><meta name="callpipe-call-id" content="${esc(result.callId)}">
<title>${esc(result.callId)} · callpipe call</title>
<style>${BASE_STYLE}${PAGE_STYLE}${uplotStyle()}</style></head>
<body>
<header class="top"><h1>${named(result.callId)}</h1><div class="facts">${facts.map((f) => `<span>${f}</span>`).join('')}</div></header>
<div class="player"><audio id="player" controls preload="metadata" data-src="${esc(options.audioHref ?? '')}"></audio>
<span class="note muted" id="audio-note">Recording: ${named(shownSource(result.source, options.callIds ?? 'auto').uri)}</span>
<label class="note"><input type="file" id="audio-file" accept="audio/*,video/*"> open a local copy</label>
<label class="note"><input type="checkbox" id="follow" checked> follow</label></div>
<main>
${failed}
<div class="grid">
<section class="card" id="summary"><h2>Summary</h2><p id="summary-text">${result.summary ? esc(result.summary.text) || '<span class="muted">(no text)</span>' : '<span class="muted">not summarized</span>'}</p>
${reasonsBlock(result)}
<h2>Keywords</h2><div id="keywords">${(result.keywords ?? []).map((k) => `<span class="chip" title="${k.score.toFixed(2)}">${esc(k.text)}</span>`).join('') || '<span class="muted">none</span>'}</div>
<h2 style="margin-top:12px">Overall sentiment</h2><p>${overall?.label ? `<span class="badge ${esc(overall.label)}">${esc(overall.label)}</span> ${overall.meanValue?.toFixed(2) ?? ''} <span class="muted">over ${overall.utterances} utterances (${overall.positive} positive, ${overall.negative} negative)</span>` : '<span class="muted">not analysed</span>'}</p></section>
<section class="card" id="speakers"><h2>Speakers</h2>${speakerTable(result)}</section>
</div>
${insights(result)}
<section class="card"><h2>Timeline</h2>${timelineSvg(result)}</section>
<section class="card"><h2>Sentiment over the call</h2><div id="sentiment-chart"></div>
<p class="muted">Each point is an utterance: +1 positive, −1 negative (${esc(result.sentiment?.scoring ?? 'not analysed')}).</p></section>
<section class="card"><h2>Transcript</h2>${transcript(result)}</section>
<section class="card muted" id="processing"><h2>Processing</h2>
<p>Written ${esc(localTime(result.writtenAt, options.timeZone))} · ${result.processing.totalRequests} requests · ${result.processing.retries} retries · ${result.processing.restarts} restarts${recognitionNote(result)} · wall ${duration(result.processing.wallSeconds.total ?? 0)} · ${esc(result.audio.codec)} ${result.audio.sampleRate} Hz × ${result.audio.channels} · result.json schema ${result.schemaVersion}
· <a href="result.json">result.json</a> · <a href="transcript.vtt">transcript.vtt</a></p></section>
</main>
<script type="application/json" id="chart-data">${jsonData(chartData(result))}</script>
<script>${uplotScript()}</script>
<script>${clientScript('common')}</script>
<script>${clientScript('call-page')}</script>
</body></html>
`;
}
