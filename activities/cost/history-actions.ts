/**
 * Temporal actions of one workflow history, by kind (schemas/cost.ts has the definition and its
 * source), and its event count. Heartbeats leave no event: where the workers' own count is not at hand,
 * they are estimated from each activity's run time and heartbeat timeout (heartbeat-throttle.ts).
 */
import type { temporal } from '@temporalio/proto';
import type { ActionCounts, ActionKind } from '../../schemas/cost.ts';
import { heartbeatIntervalMs } from '../asr/heartbeat-interval.ts';
import { estimatedHeartbeats } from './heartbeat-throttle.ts';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Timestamp = { seconds?: unknown; nanos?: number | null } | null | undefined;

/** The SDK's marker of `patched()`: a workflow's version, not an operation Temporal Cloud bills. */
const PATCH_MARKER = 'core_patch';

const ms = (ts: Timestamp): number => Number(ts?.seconds ?? 0) * 1000 + (ts?.nanos ?? 0) / 1e6;

export interface HistoryActions {
  actions: ActionCounts;
  /** Activity attempts (started and retried) by activity type. */
  activityAttempts: Record<string, number>;
  /** Heartbeats estimated by activity type (not actions until added: the workers may count them). */
  estimatedHeartbeats: Record<string, number>;
  events: number;
}

/**
 * Actions of `events`; with `window`, only those at or after `fromMs` and before `toMs` (a long-lived
 * workflow's share of one run).
 */
export function historyActions(
  events: readonly HistoryEvent[],
  window?: { fromMs: number; toMs: number },
): HistoryActions {
  const actions: ActionCounts = {};
  const activityAttempts: Record<string, number> = {};
  const heartbeats: Record<string, number> = {};
  const add = (kind: ActionKind, n = 1) => {
    if (n > 0) actions[kind] = (actions[kind] ?? 0) + n;
  };
  const scheduled = new Map<string, { type: string; heartbeatTimeoutMs?: number }>();
  const started = new Map<string, number>();
  let counted = 0;
  for (const e of events) {
    const at = ms(e.eventTime);
    if (window && (at < window.fromMs || at >= window.toMs)) continue;
    counted++;
    if (e.workflowExecutionStartedEventAttributes) add('workflowStarted');
    else if (e.activityTaskScheduledEventAttributes) {
      const attrs = e.activityTaskScheduledEventAttributes;
      const type = attrs.activityType?.name ?? '?';
      const timeout = attrs.heartbeatTimeout ? ms(attrs.heartbeatTimeout) : 0;
      scheduled.set(String(e.eventId), { type, ...(timeout > 0 ? { heartbeatTimeoutMs: timeout } : {}) });
    } else if (e.activityTaskStartedEventAttributes) {
      // Written once, when the activity closes, with the attempt that closed it: the earlier attempts
      // were started (and billed) too.
      const attrs = e.activityTaskStartedEventAttributes;
      const asked = scheduled.get(String(attrs.scheduledEventId));
      const attempt = Math.max(1, attrs.attempt ?? 1);
      add('activityStarted');
      add('activityRetried', attempt - 1);
      const type = asked?.type ?? '?';
      activityAttempts[type] = (activityAttempts[type] ?? 0) + attempt;
      started.set(String(attrs.scheduledEventId), at);
    } else if (e.timerStartedEventAttributes) add('timerStarted');
    else if (e.workflowExecutionSignaledEventAttributes) add('signal');
    else if (e.workflowExecutionUpdateAcceptedEventAttributes) add('update');
    else if (e.upsertWorkflowSearchAttributesEventAttributes) add('searchAttributesUpsert');
    else if (e.workflowPropertiesModifiedEventAttributes) add('memoUpsert');
    else if (e.markerRecordedEventAttributes) {
      if (e.markerRecordedEventAttributes.markerName !== PATCH_MARKER) add('marker');
    } else {
      const closed =
        e.activityTaskCompletedEventAttributes ??
        e.activityTaskFailedEventAttributes ??
        e.activityTaskTimedOutEventAttributes ??
        e.activityTaskCanceledEventAttributes;
      if (!closed) continue;
      const key = String(closed.scheduledEventId);
      const asked = scheduled.get(key);
      const from = started.get(key);
      if (!asked || from === undefined) continue;
      const n = estimatedHeartbeats(
        at - from,
        asked.heartbeatTimeoutMs,
        asked.type === 'recognizeSession' ? heartbeatIntervalMs(asked.heartbeatTimeoutMs) : undefined,
      );
      if (n > 0) heartbeats[asked.type] = (heartbeats[asked.type] ?? 0) + n;
    }
  }
  return { actions, activityAttempts, estimatedHeartbeats: heartbeats, events: counted };
}

/** Sums of counts by key. */
export function addCounts<K extends string>(
  into: Partial<Record<K, number>>,
  more: Partial<Record<K, number>>,
): Partial<Record<K, number>> {
  for (const [k, v] of Object.entries(more) as [K, number][]) into[k] = (into[k] ?? 0) + v;
  return into;
}

export function total(counts: Partial<Record<string, number>>): number {
  return Object.values(counts).reduce<number>((a, b) => a + (b ?? 0), 0);
}
