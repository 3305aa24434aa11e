/**
 * The nightly run's day and prefix, from the schedule's action time: pure and deterministic (no clock,
 * no I/O), so workflow code may import it and unit tests check it directly.
 */
import { dayIn } from '../schemas/tables.ts';

export interface CalendarDay {
  yyyy: string;
  mm: string;
  dd: string;
}

/** The calendar day `daysBack` days before the day `at` falls on in `timeZone` (IANA name). */
export function dayBefore(at: Date, timeZone: string, daysBack = 1): CalendarDay {
  const [year, month, date] = dayIn(at, timeZone).split('-').map(Number) as [number, number, number];
  // Calendar arithmetic on a UTC date: no daylight-saving hour can move it across midnight.
  const day = new Date(Date.UTC(year, month - 1, date - daysBack));
  return {
    yyyy: String(day.getUTCFullYear()).padStart(4, '0'),
    mm: String(day.getUTCMonth() + 1).padStart(2, '0'),
    dd: String(day.getUTCDate()).padStart(2, '0'),
  };
}

/** Placeholders of a source template: `{yyyy}`, `{mm}`, `{dd}` and `{date}` (yyyy-mm-dd). */
export function fillTemplate(template: string, day: CalendarDay): string {
  return template
    .replaceAll('{yyyy}', day.yyyy)
    .replaceAll('{mm}', day.mm)
    .replaceAll('{dd}', day.dd)
    .replaceAll('{date}', `${day.yyyy}-${day.mm}-${day.dd}`);
}

/** `s3://bucket/prefix/` → parts; the prefix ends with `/` unless empty. */
export function parsePrefixUrl(url: string): { bucket: string; prefix: string } | undefined {
  const m = /^s3:\/\/([^/{}]+)\/?(.*)$/.exec(url);
  if (!m) return undefined;
  const prefix = m[2]!;
  return { bucket: m[1]!, prefix: prefix && !prefix.endsWith('/') ? `${prefix}/` : prefix };
}

/** Checks a template before it goes into a schedule: an s3:// URL with a day placeholder. */
export function templateProblem(template: string): string | undefined {
  if (!parsePrefixUrl(template)) return `'${template}' is not an s3://bucket/prefix template`;
  if (!/\{(dd|date)\}/.test(template))
    return `'${template}' has no {dd} or {date}: every night would list the same prefix`;
  if (/\{(?!yyyy\}|mm\}|dd\}|date\})[^}]*\}/.test(template))
    return `'${template}' has an unknown placeholder (use {yyyy} {mm} {dd} {date})`;
  return undefined;
}
