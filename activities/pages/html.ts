/**
 * Building HTML safely: every text and attribute escaped (bidirectional controls shown as visible
 * escapes: schemas/display-text.ts), users' names and keys isolated from the text around them, data for
 * scripts as JSON that cannot close its tag.
 */
import { visibleControls } from '../../schemas/display-text.ts';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function esc(value: unknown): string {
  return visibleControls(String(value ?? '')).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/**
 * A user's name or key as an element of its own: escaped, and isolated (`<bdi>`) so that right-to-left
 * letters in it cannot reorder the text beside it.
 */
export function named(value: unknown): string {
  return `<bdi>${esc(value)}</bdi>`;
}

/** JSON for a `<script type="application/json">` block: `<` escaped, so no text can end the block. */
export function jsonData(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** A duration in words a supervisor reads at a glance: `4 min 05 s`, `1 h 02 min`. */
export function duration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** One formatter per time zone: a report formats an instant per call. */
const formats = new Map<string, Intl.DateTimeFormat>();
function localFormat(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formats.set(timeZone, format);
  }
  return format;
}

/** An instant as the call center reads it: `2026-03-01 09:12` in `timeZone`. */
export function localTime(iso: string, timeZone: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const parts = localFormat(timeZone).formatToParts(d);
  const p = (t: string) => parts.find((x) => x.type === t)?.value ?? '';
  return `${p('year')}-${p('month')}-${p('day')} ${p('hour')}:${p('minute')}`;
}

/** The pages' shared look: system fonts (Japanese included), no web fonts, print-friendly. */
export const BASE_STYLE = `
:root { --fg:#1d2430; --muted:#5b6577; --line:#e3e7ee; --bg:#f6f8fb; --card:#fff; --agent:#2f6fdb; --customer:#d9822b; --other:#7b5ea7;
  --pos:#2e9e5b; --neg:#d64545; --neu:#8a94a6; --silence:#c9ced8; --overlap:#b04fc7; --hold:#8d6e63; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.5 system-ui,-apple-system,"Segoe UI","Hiragino Sans","Noto Sans JP","Yu Gothic",sans-serif; color:var(--fg); background:var(--bg); }
header.top { background:#18202e; color:#fff; padding:14px 24px; }
header.top h1 { margin:0; font-size:18px; font-weight:600; word-break:break-all; }
header.top .facts { display:flex; flex-wrap:wrap; gap:6px 18px; margin-top:6px; color:#c8d0dd; font-size:13px; }
main { max-width:1200px; margin:0 auto; padding:16px 24px 48px; }
section.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:14px 18px; margin-top:16px; }
section.card h2 { margin:0 0 10px; font-size:15px; font-weight:600; }
.muted { color:var(--muted); }
.chip { display:inline-block; padding:1px 8px; border-radius:10px; background:#eef1f6; margin:2px 4px 2px 0; font-size:12px; }
.label-Positive { color:var(--pos); } .label-Negative { color:var(--neg); } .label-Neutral { color:var(--neu); }
.badge { display:inline-block; padding:0 7px; border-radius:9px; font-size:12px; color:#fff; background:var(--neu); }
.badge.Positive, .badge.done { background:var(--pos); } .badge.Negative, .badge.failed { background:var(--neg); } .badge.partial { background:#c9a227; }
.badge.skipped, .badge.missing, .badge.cancelled { background:#8a94a6; }
table { border-collapse:collapse; width:100%; }
th, td { text-align:left; padding:5px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-weight:600; font-size:12px; color:var(--muted); white-space:nowrap; }
mark.redacted { background:#222; color:#fff; border-radius:3px; padding:0 3px; font-size:12px; }
@media print { header.top { background:none; color:#000; } section.card { break-inside:avoid; } }
`;
