/**
 * A batch's cost figures for its report, from what the batch leaves behind: its calls' workflow
 * histories (Temporal actions by kind, heartbeats estimated from each activity's run time, history
 * events per call) and their result documents (service requests by endpoint, audio streamed with
 * restarts), read for every call of a small batch and for an even sample of a large one, scaled to the
 * batch by audio. S3 requests and CPU are per worker process, not per batch: the workers count them on
 * their /metrics endpoint (activities/metrics.ts) and the night benchmark reads them there.
 */
import pLimit from 'p-limit';
import type { Client } from '@temporalio/client';
import type { ObjectStore } from '../storage/object-store.ts';
import type { ReportRow } from '../../schemas/backfill.ts';
import type { CostFigures, Prices } from '../../schemas/cost.ts';
import { addCounts, historyActions, total } from './history-actions.ts';
import { costAmount, type CostAmount } from './amount.ts';

/** Calls whose history and result are read: every call of a batch this small, an even sample beyond. */
const COST_SAMPLE_CALLS = 200;
const READ_CONCURRENCY = 8;

export interface BatchCost {
  figures: CostFigures;
  /** With the deployment's prices (CALLPIPE_PRICES). */
  amount?: CostAmount;
  /** Why a figure is missing, when one is (no Temporal client, nothing read). */
  note?: string;
}

/** `n` rows spread evenly over `rows` (all of them when there are no more). */
export function evenSample<T>(rows: readonly T[], n: number): T[] {
  if (rows.length <= n) return [...rows];
  return Array.from({ length: n }, (_, i) => rows[Math.floor((i * rows.length) / n)]!);
}

interface ResultFacts {
  durationSeconds: number;
  streamedSeconds: number;
  requests: Record<string, number>;
}

async function resultFacts(
  store: ObjectStore,
  bucket: string,
  key: string,
): Promise<ResultFacts | undefined> {
  try {
    const doc = JSON.parse(await store.withBucket(bucket).getText(key)) as {
      audio?: { durationSeconds?: number };
      sessions?: { audioSecondsSent?: number }[];
      processing?: { requests?: Record<string, { requests?: number }> };
    };
    return {
      durationSeconds: doc.audio?.durationSeconds ?? 0,
      streamedSeconds: (doc.sessions ?? []).reduce((n, s) => n + (s.audioSecondsSent ?? 0), 0),
      requests: Object.fromEntries(
        Object.entries(doc.processing?.requests ?? {}).map(([k, v]) => [k, v.requests ?? 0]),
      ),
    };
  } catch {
    // A result gone or unreadable: that call is left out of the sample, not the report.
    return undefined;
  }
}

export async function batchCost(input: {
  store: ObjectStore;
  bucket: string;
  rows: readonly ReportRow[];
  temporal?: Client;
  prices?: Prices;
  heartbeat?: () => void;
}): Promise<BatchCost> {
  const processed = input.rows.filter((r) => r.status === 'done' || r.status === 'partial');
  const audioSeconds = processed.reduce((n, r) => n + (r.durationSeconds ?? 0), 0);
  const started = input.rows.filter((r) => r.workflowId);
  const sample = evenSample(started, COST_SAMPLE_CALLS);
  const limit = pLimit(READ_CONCURRENCY);
  const actions: Record<string, number> = {};
  const events: number[] = [];
  let heartbeats = 0;
  let sampleAudio = 0;
  let sampleStreamed = 0;
  const requests: Record<string, number> = {};
  await Promise.all(
    sample.map((row) =>
      limit(async () => {
        input.heartbeat?.();
        if (input.temporal) {
          try {
            const history = await input.temporal.workflow.getHandle(row.workflowId!).fetchHistory();
            const counted = historyActions(history.events ?? []);
            addCounts(actions, counted.actions);
            heartbeats += total(counted.estimatedHeartbeats);
            events.push(counted.events);
          } catch {
            // Past the namespace's retention: the call counts in the result's figures only.
          }
        }
        if (row.resultKey && (row.status === 'done' || row.status === 'partial')) {
          const facts = await resultFacts(input.store, input.bucket, row.resultKey);
          if (facts) {
            sampleAudio += facts.durationSeconds;
            sampleStreamed += facts.streamedSeconds;
            addCounts(requests, facts.requests);
          }
        }
      }),
    ),
  );
  // Actions scale with calls started, service figures with audio.
  const byCalls = events.length ? started.length / events.length : 0;
  const byAudio = sampleAudio > 0 ? audioSeconds / sampleAudio : 0;
  const scaled = (counts: Record<string, number>, k: number) =>
    Object.fromEntries(Object.entries(counts).map(([key, v]) => [key, Math.round(v * k)]));
  const figures: CostFigures = {
    audioHours: audioSeconds / 3600,
    calls: input.rows.length,
    actions: events.length
      ? { ...scaled(actions, byCalls), activityHeartbeat: Math.round(heartbeats * byCalls) }
      : {},
    historiesRead: events.length,
    ...(events.length
      ? {
          historyEventsPerCall: {
            mean: Math.round((events.reduce((a, b) => a + b, 0) / events.length) * 10) / 10,
            max: Math.max(...events),
          },
          heartbeats: 'estimated' as const,
        }
      : {}),
    ...(sampleAudio > 0
      ? {
          serviceRequests: scaled(requests, byAudio),
          audioSecondsStreamed: Math.round(sampleStreamed * byAudio),
        }
      : {}),
  };
  return {
    figures,
    ...(input.prices ? { amount: costAmount(figures, input.prices) } : {}),
    ...(!input.temporal ? { note: 'no Temporal client: actions not counted' } : {}),
  };
}
