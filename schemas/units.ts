/**
 * Units and their rounding, in one place. Times in callpipe's documents, tables and reports are seconds
 * with three decimals (to the millisecond): sums and products of float times carry noise below that,
 * and a figure that depends on it would differ from run to run of the same input. Other derived figures
 * (shares, hours, ratios) are rounded to three decimals the same way.
 *
 * Pure, with no imports: workflow code may use it.
 */

/** `value` to three decimals (half up, as `Math.round`). */
export function roundThousandths(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** Seconds rounded to the millisecond, still in seconds. */
export function roundSecondsToMs(seconds: number): number {
  return roundThousandths(seconds);
}

/** Seconds → whole milliseconds. */
export function secondsToMs(seconds: number): number {
  return Math.round(seconds * 1000);
}

/** Milliseconds → seconds, rounded to the millisecond. */
export function msToSeconds(ms: number): number {
  return roundThousandths(ms / 1000);
}

/** Seconds as a decimal string to the millisecond (`12.500`): the form of a time in tool arguments. */
export function secondsText(seconds: number): string {
  return seconds.toFixed(3);
}

/** `m:ss` or `h:mm:ss` of seconds: times on a call's clock, in pages and in words of evidence. */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}
