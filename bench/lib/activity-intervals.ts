/**
 * When each activity of a workflow ran, read from its history (started → completed, failed or timed
 * out): the measured intervals behind "transcode share of the wall time" and similar figures.
 */
import type { WorkflowHandle } from '@temporalio/client';

/** A history event's protobuf timestamp (seconds may be a Long) in ms. */
function tsToMs(ts: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return Number(ts?.seconds ?? 0) * 1000 + (ts?.nanos ?? 0) / 1e6;
}

export interface Interval {
  type: string;
  /** When the workflow asked for it: `startMs - scheduledMs` is the wait for a worker slot. */
  scheduledMs: number;
  startMs: number;
  endMs: number;
  /** The attempt that ended it (1 for the first): above 1, the activity was retried. */
  attempt: number;
  /** Bytes of its input's payloads and of its result's, as the history stores them (encoded). */
  inputBytes: number;
  resultBytes: number;
}

/** Bytes of a history event's payloads (data and metadata). */
function payloadBytes(
  payloads:
    | { payloads?: { data?: Uint8Array | null; metadata?: Record<string, Uint8Array> | null }[] | null }
    | null
    | undefined,
): number {
  let n = 0;
  for (const p of payloads?.payloads ?? []) {
    n += p.data?.length ?? 0;
    for (const v of Object.values(p.metadata ?? {})) n += v.length;
  }
  return n;
}

export async function activityIntervals(handle: WorkflowHandle): Promise<Interval[]> {
  const history = await handle.fetchHistory();
  const scheduled = new Map<string, { type: string; at: number; inputBytes: number }>();
  const started = new Map<string, { at: number; attempt: number }>();
  const out: Interval[] = [];
  for (const e of history.events ?? []) {
    const id = String(e.eventId);
    const at = tsToMs(e.eventTime);
    if (e.activityTaskScheduledEventAttributes) {
      const attrs = e.activityTaskScheduledEventAttributes;
      scheduled.set(id, {
        type: attrs.activityType?.name ?? '?',
        at,
        inputBytes: payloadBytes(attrs.input),
      });
    } else if (e.activityTaskStartedEventAttributes) {
      const attrs = e.activityTaskStartedEventAttributes;
      started.set(String(attrs.scheduledEventId), { at, attempt: attrs.attempt ?? 1 });
    } else {
      const closed =
        e.activityTaskCompletedEventAttributes ??
        e.activityTaskFailedEventAttributes ??
        e.activityTaskTimedOutEventAttributes;
      if (!closed) continue;
      const key = String(closed.scheduledEventId);
      const start = started.get(key);
      // The started event of a retried activity is written with the final attempt only.
      const asked = scheduled.get(key);
      if (start !== undefined)
        out.push({
          type: asked?.type ?? '?',
          scheduledMs: asked?.at ?? start.at,
          startMs: start.at,
          endMs: at,
          attempt: start.attempt,
          inputBytes: asked?.inputBytes ?? 0,
          resultBytes: payloadBytes(e.activityTaskCompletedEventAttributes?.result),
        });
    }
  }
  return out;
}

/** Length of the union of intervals, ms. */
export function unionMs(intervals: { startMs: number; endMs: number }[]): number {
  const sorted = [...intervals].sort((a, b) => a.startMs - b.startMs);
  let total = 0;
  let end = -Infinity;
  let start = -Infinity;
  for (const i of sorted) {
    if (i.startMs > end) {
      if (end > start) total += end - start;
      start = i.startMs;
      end = i.endMs;
    } else end = Math.max(end, i.endMs);
  }
  if (end > start) total += end - start;
  return total;
}
