/**
 * Where a call's time went, beside recognition: the wall time of each stage (result.json's
 * `processing.wallSeconds`), and per activity type its count, its wait for a worker slot (scheduled →
 * started) and its run time (started → ended), from the call's history (activity-intervals.ts).
 */
import type { ResultDocument } from '../../schemas/result.ts';
import type { Interval } from './activity-intervals.ts';

const round = (x: number) => Math.round(x * 10) / 10;

export interface ActivityTimes {
  count: number;
  waitSeconds: number;
  runSeconds: number;
}

/** Per activity type: how many ran, their waits and run times summed, in seconds. */
export function activityTimes(intervals: readonly Interval[]): Record<string, ActivityTimes> {
  const out: Record<string, ActivityTimes> = {};
  for (const a of intervals) {
    const t = (out[a.type] ??= { count: 0, waitSeconds: 0, runSeconds: 0 });
    t.count += 1;
    t.waitSeconds += (a.startMs - a.scheduledMs) / 1000;
    t.runSeconds += (a.endMs - a.startMs) / 1000;
  }
  for (const t of Object.values(out)) {
    t.waitSeconds = round(t.waitSeconds);
    t.runSeconds = round(t.runSeconds);
  }
  return out;
}

/** Wall seconds per stage of a call, in the order it ran them (`total` last). */
export function stageWalls(doc: ResultDocument): Record<string, number> {
  return Object.fromEntries(Object.entries(doc.processing.wallSeconds).map(([k, v]) => [k, round(v)]));
}

/** One line: the stages over a second, then the activities that ran or waited over a second. */
export function breakdownLine(
  stages: Record<string, number>,
  activities: Record<string, ActivityTimes>,
): string {
  const slow = Object.entries(stages)
    .filter(([k, v]) => k !== 'total' && v >= 1)
    .map(([k, v]) => `${k} ${v}`);
  const acts = Object.entries(activities)
    .filter(([, t]) => t.runSeconds >= 1 || t.waitSeconds >= 1)
    .sort((a, b) => b[1].runSeconds - a[1].runSeconds)
    .map(([k, t]) => `${k}×${t.count} run ${t.runSeconds} wait ${t.waitSeconds}`);
  return `stages (s): ${slow.join(', ')}; activities: ${acts.join(', ')}`;
}
