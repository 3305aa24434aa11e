/**
 * The backfill workflow with mocked activities on the project's dev server: its sliding window of
 * processRecording children, continue-as-new with small pages, and pause/resume through its updates.
 * The children are the real processRecording, on the same task queue, with mocked activities too.
 */
import { describe, expect, it } from 'vitest';
import { activityInfo } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import {
  backfill,
  backfillProgressQuery,
  pauseUpdate,
  resumeUpdate,
  type BackfillProgress,
} from '../../workflows/backfill.ts';
import {
  backfillInputSchema,
  type BackfillItem,
  type BackfillRequest,
  type ReportRow,
} from '../../schemas/backfill.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../workflows/search-attribute-keys.ts';
import { recordFetchedHistory } from '../helpers/histories.ts';
import {
  useTestEnv,
  mockActivities,
  pick,
  searchAttribute,
  sleep,
  testSpec,
  uniqueQueue,
  waitFor,
  withWorker,
  type ActivityImpl,
  type Mocks,
} from './helpers.ts';

const testEnv = useTestEnv();

/** `count` recordings under one prefix, each a call of its own with a workflow id of its own. */
function recordings(queue: string, count: number): BackfillItem[] {
  return Array.from({ length: count }, (_, i) => {
    const callId = `${queue}-c${i}`;
    return {
      callId,
      workflowId: `process-${callId}`,
      source: { bucket: 'calls', key: `2024/11/22/${callId}.wav`, etag: `etag-${i}`, size: 2_064_044 },
    };
  });
}

/** listBackfillPage over `items`: page n is items [n × pageSize, (n + 1) × pageSize). */
function pagedListing(items: BackfillItem[]): ActivityImpl {
  return async (input) => {
    const page = Number(pick(input, 'cursor', 'page') ?? 0);
    const size = Number(pick(input, 'pageSize'));
    const slice = items.slice(page * size, (page + 1) * size);
    const finished = (page + 1) * size >= items.length;
    return {
      items: slice,
      cursor: { page: page + 1, ...(finished ? {} : { token: `after-${page}` }), finished },
      listed: slice.length,
      filtered: 0,
      skipped: 0,
      missing: 0,
    };
  };
}

function backfillInput(queue: string, request: Partial<BackfillRequest>) {
  return backfillInputSchema.parse({
    batchId: `batch-${queue}`,
    source: { kind: 'prefix', bucket: 'calls', prefix: '2024/11/22/' },
    output: { bucket: 'callpipe', prefix: 'results/' },
    taskQueue: queue,
    spec: testSpec(queue),
    ...request,
  });
}

/**
 * Children in flight as their activities see them: from a child's done-check (its first activity) to
 * its staging clean-up (its last). Recognition of a child takes `recognizeMs(its workflow id)`.
 */
function trackChildren(mocks: Mocks, recognizeMs: (workflowId: string) => number) {
  const inFlight = new Set<string>();
  const tracker = { max: 0 };
  const first = mocks.resultExists.getMockImplementation()!;
  const last = mocks.deleteStaging.getMockImplementation()!;
  const recognize = mocks.recognizeSession.getMockImplementation()!;
  const child = () => activityInfo().workflowExecution?.workflowId ?? '';
  mocks.resultExists.mockImplementation(async (input) => {
    inFlight.add(child());
    tracker.max = Math.max(tracker.max, inFlight.size);
    return first(input);
  });
  mocks.deleteStaging.mockImplementation(async (input) => {
    inFlight.delete(child());
    return last(input);
  });
  mocks.recognizeSession.mockImplementation(async (input) => {
    await sleep(recognizeMs(child()));
    return recognize(input);
  });
  return tracker;
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Most children open at once in one run's history: initiated, not yet closed (or failed to start). */
function maxOpenChildren(events: HistoryEvent[]): number {
  let open = 0;
  let max = 0;
  for (const e of events) {
    if (e.startChildWorkflowExecutionInitiatedEventAttributes) open += 1;
    if (
      e.childWorkflowExecutionCompletedEventAttributes ||
      e.childWorkflowExecutionFailedEventAttributes ||
      e.childWorkflowExecutionCanceledEventAttributes ||
      e.childWorkflowExecutionTimedOutEventAttributes ||
      e.childWorkflowExecutionTerminatedEventAttributes ||
      e.startChildWorkflowExecutionFailedEventAttributes
    ) {
      open -= 1;
    }
    max = Math.max(max, open);
  }
  return max;
}

/**
 * The histories of every run of a chain, first to last, following continue-as-new; with
 * `CALLPIPE_RECORD_HISTORIES=1`, each written as the replay test's `<record>-run-<n>.json` (one run:
 * `<record>.json`).
 */
async function runHistories(
  handle: WorkflowHandle,
  firstRunId: string,
  record?: string,
): Promise<HistoryEvent[][]> {
  const runs: HistoryEvent[][] = [];
  const histories: temporal.api.history.v1.IHistory[] = [];
  let runId: string | undefined = firstRunId;
  while (runId) {
    const history: temporal.api.history.v1.IHistory = await testEnv()
      .client.workflow.getHandle(handle.workflowId, runId)
      .fetchHistory();
    const events: HistoryEvent[] = history.events ?? [];
    runs.push(events);
    histories.push(history);
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  if (record) {
    histories.forEach((h, i) =>
      recordFetchedHistory(h, histories.length === 1 ? `${record}.json` : `${record}-run-${i + 1}.json`),
    );
  }
  return runs;
}

function childrenStarted(events: HistoryEvent[]): string[] {
  return events.flatMap((e) => {
    const id = e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
    return id ? [id] : [];
  });
}

/** Every item's child ran exactly once: one probe and one result write per call, none for others. */
function expectEachProcessedOnce(mocks: Mocks, items: BackfillItem[]): void {
  for (const item of items) {
    expect(mocks.callsOf('probeSource', item.workflowId), item.callId).toHaveLength(1);
    const writes = mocks.callsOf('publishResult', item.workflowId);
    expect(writes, item.callId).toHaveLength(1);
    expect(pick(writes[0]!.input, 'callId')).toBe(item.callId);
  }
  expect(mocks.probeSource).toHaveBeenCalledTimes(items.length);
  expect(mocks.publishResult).toHaveBeenCalledTimes(items.length);
}

describe('backfill with mocked activities: the sliding window', () => {
  it('runs at most `concurrency` children at once, in a sliding window, each call once', async () => {
    const queue = uniqueQueue('window');
    const items = recordings(queue, 6);
    const mocks = mockActivities({ listBackfillPage: pagedListing(items) });
    // The first call is slow: the others pass through the second slot while it runs.
    const tracker = trackChildren(mocks, (id) => (id === items[0]!.workflowId ? 2000 : 100));
    const input = backfillInput(queue, { concurrency: 2, pageSize: 10 });

    await withWorker(testEnv(), queue, mocks.activities, async () => {
      const handle = await testEnv().client.workflow.start(backfill, {
        taskQueue: queue,
        workflowId: `backfill-${queue}`,
        args: [input],
      });
      const sampled: BackfillProgress[] = [];
      let finished = false;
      const sampling = (async () => {
        while (!finished) {
          sampled.push(await handle.query(backfillProgressQuery));
          await sleep(100);
        }
      })();
      const result = await handle.result().finally(() => (finished = true));
      await sampling;

      expect(result).toMatchObject({ status: 'done', listed: 6, started: 6, done: 6, failed: 0, run: 0 });
      expectEachProcessedOnce(mocks, items);
      // Each call wrote its table rows; the days the report names were compacted after the report.
      expect(mocks.writeCallTables).toHaveBeenCalledTimes(items.length);
      expect(result.tables).toEqual({ compacted: ['2026-11-21'], failed: [] });
      const order = mocks.calls.map((c) => c.activity);
      expect(order.indexOf('compactTables')).toBeGreaterThan(order.indexOf('writeBatchReport'));
      // …and the night report written after them, beside report.json.
      expect(order.indexOf('writeNightReport')).toBeGreaterThan(order.indexOf('compactTables'));
      expect(result.reportHtmlKey).toBe(result.reportJsonKey.replace(/report\.json$/, 'report.html'));
      expect(mocks.compactTables.mock.calls[0]![0]).toEqual({
        tables: { bucket: 'callpipe', prefix: 'tables/', timeZone: 'UTC' },
        days: ['2026-11-21'],
      });
      // The window as the workflow saw it: never more than 2 children open in its history, 2 at the
      // start (the window is used, not run one by one).
      const [events, ...more] = await runHistories(handle, handle.firstExecutionRunId, 'backfill-window');
      expect(more).toHaveLength(0);
      expect(childrenStarted(events!).sort()).toEqual(items.map((i) => i.workflowId).sort());
      expect(maxOpenChildren(events!)).toBe(2);
      // Sliding, not batches of two: the third call started while the first was still running.
      const closedFirst = events!.findIndex(
        (e) =>
          e.childWorkflowExecutionCompletedEventAttributes?.workflowExecution?.workflowId ===
          items[0]!.workflowId,
      );
      expect(closedFirst).toBeGreaterThan(0);
      expect(childrenStarted(events!.slice(0, closedFirst))).toContain(items[2]!.workflowId);
      // …as the activities saw it, and as the progress query reported it.
      expect(tracker.max).toBeLessThanOrEqual(2);
      expect(tracker.max).toBeGreaterThanOrEqual(1);
      expect(Math.max(...sampled.map((p) => p.running))).toBeLessThanOrEqual(2);
      expect(await searchAttribute(handle, SEARCH_ATTRIBUTE_KEYS.outcome)).toBe('done');
    });
  });
});

describe('backfill with mocked activities: continue-as-new', () => {
  it('continues as new after each page with small pages, and still processes every call once', async () => {
    const queue = uniqueQueue('can');
    const items = recordings(queue, 6);
    const mocks = mockActivities({ listBackfillPage: pagedListing(items) });
    const input = backfillInput(queue, { concurrency: 2, pageSize: 2, childrenPerRun: 2 });

    await withWorker(testEnv(), queue, mocks.activities, async () => {
      const handle = await testEnv().client.workflow.start(backfill, {
        taskQueue: queue,
        workflowId: `backfill-${queue}`,
        args: [input],
      });
      const result = await handle.result();

      // Three pages of two: runs 0, 1 and 2, the counters carried across.
      expect(result).toMatchObject({ status: 'done', run: 2, pages: 3, listed: 6, started: 6, done: 6 });
      const latest = await handle.describe();
      expect(latest.runId).not.toBe(handle.firstExecutionRunId);
      const runs = await runHistories(handle, handle.firstExecutionRunId, 'backfill-continue-as-new');
      expect(runs).toHaveLength(3);
      expect(runs.at(-1)!.at(-1)?.workflowExecutionCompletedEventAttributes).toBeTruthy();
      for (const events of runs.slice(0, -1)) {
        expect(events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
      }
      // Each run started its own page's children, none twice across the chain.
      expect(runs.map((events) => childrenStarted(events))).toEqual([
        [items[0]!.workflowId, items[1]!.workflowId],
        [items[2]!.workflowId, items[3]!.workflowId],
        [items[4]!.workflowId, items[5]!.workflowId],
      ]);
      expectEachProcessedOnce(mocks, items);
      // Each page listed once, from the cursor the previous run handed on.
      expect(mocks.listBackfillPage.mock.calls.map(([i]) => pick(i, 'cursor', 'page'))).toEqual([0, 1, 2]);
      // One report part per run, then one report for the batch.
      const rows = mocks.writeReportPart.mock.calls.flatMap(([i]) => pick(i, 'rows') as { callId: string }[]);
      expect(mocks.writeReportPart).toHaveBeenCalledTimes(3);
      expect(rows.map((r) => r.callId).sort()).toEqual(items.map((i) => i.callId).sort());
      const report = mocks.writeBatchReport.mock.calls;
      expect(report).toHaveLength(1);
      expect(pick(report[0]![0], 'header', 'runs')).toBe(3);
      expect(pick(report[0]![0], 'header', 'counters', 'done')).toBe(6);
    });
  });
});

describe('backfill with mocked activities: pause and cancel', () => {
  it('pause holds new children (running ones finish), resume goes on', async () => {
    const queue = uniqueQueue('pause');
    const items = recordings(queue, 3);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const mocks = mockActivities({ listBackfillPage: pagedListing(items) });
    const recognize = mocks.recognizeSession.getMockImplementation()!;
    mocks.recognizeSession.mockImplementation(async (input) => {
      await gate;
      return recognize(input);
    });
    const startedChildren = () => new Set(mocks.callsOf('resultExists').map((c) => c.workflowId));
    const input = backfillInput(queue, { concurrency: 1, pageSize: 10, paused: true });

    await withWorker(testEnv(), queue, mocks.activities, async () => {
      const handle = await testEnv().client.workflow.start(backfill, {
        taskQueue: queue,
        workflowId: `backfill-${queue}`,
        args: [input],
      });
      const progress = () => handle.query(backfillProgressQuery);

      // Started paused: the page is listed, no child starts.
      await waitFor('the paused batch to list its page', async () => (await progress()).listed === 3);
      await sleep(500);
      expect(await progress()).toMatchObject({ phase: 'paused', listed: 3, started: 0, running: 0 });
      expect(startedChildren().size).toBe(0);

      // Resume: the first child starts (and holds in recognition until the gate opens).
      const resumed = await handle.executeUpdate(resumeUpdate);
      expect(resumed.phase).not.toBe('paused');
      await waitFor('the first call to recognize', () => mocks.recognizeSession.mock.calls.length === 2);
      expect([...startedChildren()]).toEqual([items[0]!.workflowId]);

      // Pause with a child running: it finishes, no other starts.
      const paused = await handle.executeUpdate(pauseUpdate);
      expect(paused).toMatchObject({ phase: 'paused', running: 1, started: 1 });
      release();
      await waitFor('the running call to finish', async () => (await progress()).done === 1);
      await sleep(700);
      expect(await progress()).toMatchObject({ phase: 'paused', started: 1, done: 1, running: 0 });
      expect([...startedChildren()]).toEqual([items[0]!.workflowId]);

      // Resume again: the rest run and the batch ends.
      await handle.executeUpdate(resumeUpdate);
      const result = await handle.result();
      expect(result).toMatchObject({ status: 'done', listed: 3, started: 3, done: 3, running: 0 });
      expectEachProcessedOnce(mocks, items);
    });
  });

  it('reports a call cancelled on its own as the call cancelled, not the batch', async () => {
    const queue = uniqueQueue('cancel-one');
    const items = recordings(queue, 2);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const mocks = mockActivities({ listBackfillPage: pagedListing(items) });
    const recognize = mocks.recognizeSession.getMockImplementation()!;
    mocks.recognizeSession.mockImplementation(async (input) => {
      await gate;
      return recognize(input);
    });
    const input = backfillInput(queue, { concurrency: 2, pageSize: 10 });

    await withWorker(testEnv(), queue, mocks.activities, async () => {
      const handle = await testEnv().client.workflow.start(backfill, {
        taskQueue: queue,
        workflowId: `backfill-${queue}`,
        args: [input],
      });
      await waitFor(
        'the first call to recognize',
        () => mocks.callsOf('recognizeSession', items[0]!.workflowId).length > 0,
        60_000,
      );
      await testEnv().client.workflow.getHandle(items[0]!.workflowId).cancel();
      release();
      const result = await handle.result();
      expect(result).toMatchObject({ status: 'done', started: 2, done: 1, cancelled: 1 });
      const rows = mocks.callsOf('writeReportPart').flatMap((c) => pick(c.input, 'rows') as ReportRow[]);
      expect(rows.find((r) => r.callId === items[0]!.callId)).toMatchObject({
        status: 'cancelled',
        reason: 'call cancelled (its workflow was cancelled)',
      });
    });
  });
});
