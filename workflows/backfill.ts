/**
 * backfill: every recording under an S3 prefix or listed in a CSV manifest, processed once.
 *
 * One run lists pages through an activity (filters and the done-check happen there, in bulk, so a done
 * call starts no child), starts one `processRecording` child per recording inside a sliding window of
 * `concurrency` children, and
 * after `childrenPerRun` children (or when the server suggests it) drains its window, writes its report
 * part and continues as new with the cursor and counters. Children use `ParentClosePolicy.ABANDON`: a
 * terminated or reset batch never kills calls halfway. Report rows go to S3 (one part per page for
 * skipped/missing calls, one per run for started ones) and are merged by an activity at the end, so
 * the workflow's state stays a cursor and a few counters however big the batch.
 *
 * Control: updates `pause` (no new children; running ones finish), `resume`, `cancel` (no new children,
 * running ones are cancelled, the report is written); cancelling the workflow itself does the same.
 * Query: `progress`.
 */
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ChildWorkflowFailure,
  ParentClosePolicy,
  condition,
  continueAsNew,
  defineQuery,
  defineUpdate,
  executeChild,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { BackfillActivities } from '../activities/backfill/activities.ts';
import type { TableActivities } from '../activities/tables/activities.ts';
import type { PageActivities } from '../activities/pages/activities.ts';
import type {
  BackfillCounters,
  BackfillCursor,
  BackfillInput,
  BackfillItem,
  ReportRow,
  StoredBackfillInput,
} from '../schemas/backfill.ts';
import {
  DEFAULT_QUEUES,
  processRecording,
  type ProcessRecordingInput,
  type ProcessRecordingResult,
} from './process-recording.ts';
import { batchPartsPrefix, batchReportPrefix, locationUrl, tablesLocationOf } from '../schemas/call-keys.ts';
import { reasonOf } from './failure-reason.ts';
import { SEARCH_ATTRIBUTE_KEYS } from './search-attribute-keys.ts';
import { prepareManifestOnce } from './manifest-pages.ts';
import { roundThousandths } from '../schemas/units.ts';

export type BackfillPhase =
  'listing' | 'running' | 'paused' | 'draining' | 'reporting' | 'done' | 'cancelled';

/** What one run hands the next (continue-as-new): a cursor and counters, never rows or items. */
export interface BackfillCarry {
  cursor: BackfillCursor;
  counters: BackfillCounters;
  /** Index of this run in the chain (0 for the first). */
  run: number;
  startedAt: string;
  paused: boolean;
  manifest?: { pagesPrefix: string; pages: number };
  /** Largest history (events) a finished run of this batch had, for the benchmark and the report. */
  maxHistoryEvents: number;
}

export interface BackfillProgress extends BackfillCounters {
  batchId: string;
  phase: BackfillPhase;
  running: number;
  audioHours: number;
  run: number;
  pages: number;
  listingFinished: boolean;
  maxHistoryEvents: number;
}

export interface BackfillResult extends BackfillProgress {
  status: 'done' | 'cancelled';
  reportJsonKey: string;
  reportCsvKey: string;
  /** The night report (report.html), when it could be written. */
  reportHtmlKey?: string;
  /** Days whose table partitions were compacted at the end, and the ones that could not be. */
  tables?: { compacted: string[]; failed: { dt: string; reason: string }[] };
}

/** Patch id: a batch compacts the table partitions its calls wrote, after its report (issue 17). */
export const BATCH_TABLES = 'batch-tables';
/** Patch id: a batch writes its night report (report.html) after compacting its days (issue 17). */
export const NIGHT_REPORT = 'night-report';
/** Days compacted at once at the end of a batch (each an activity on the media queue). */
const COMPACTIONS_AT_ONCE = 4;

export const backfillProgressQuery = defineQuery<BackfillProgress>('progress');
export const pauseUpdate = defineUpdate<BackfillProgress>('pause');
export const resumeUpdate = defineUpdate<BackfillProgress>('resume');
export const cancelUpdate = defineUpdate<BackfillProgress>('cancel');

function emptyCounters(): BackfillCounters {
  return {
    listed: 0,
    filtered: 0,
    skipped: 0,
    missing: 0,
    started: 0,
    done: 0,
    partial: 0,
    failed: 0,
    cancelled: 0,
    audioSeconds: 0,
  };
}

/**
 * The input with `concurrency` read as `backfillInputSchema` reads it (`window` is its 0.1 name, still in
 * the histories of running batches and in schedules' actions); what a continue-as-new carries on.
 */
export function currentBackfillInput({ window, concurrency, ...input }: StoredBackfillInput): BackfillInput {
  const resolved = concurrency ?? window;
  if (resolved === undefined) {
    throw ApplicationFailure.nonRetryable(
      'backfill input has no concurrency: parse it with backfillInputSchema',
    );
  }
  return { ...input, concurrency: resolved };
}

export async function backfill(stored: StoredBackfillInput, carry?: BackfillCarry): Promise<BackfillResult> {
  const input = currentBackfillInput(stored);
  const info = workflowInfo();
  const state: BackfillCarry = carry
    ? // A carry from before a counter existed (`partial`) starts that counter at 0.
      { ...carry, counters: { ...emptyCounters(), ...carry.counters } }
    : {
        cursor: { page: 0, finished: false },
        counters: emptyCounters(),
        run: 0,
        startedAt: new Date(info.startTime).toISOString(),
        paused: input.paused ?? false,
        maxHistoryEvents: 0,
      };
  const counters = state.counters;
  const reportPrefix = batchReportPrefix(input.output, input.batchId);
  // One execution chain's parts: a later execution of the same batch writes its own.
  const partsPrefix = batchPartsPrefix(reportPrefix, info.firstExecutionRunId);
  const activities = proxyActivities<BackfillActivities>({
    taskQueue: input.taskQueue ?? info.taskQueue,
    startToCloseTimeout: '10 minutes',
    retry: { maximumAttempts: 10, initialInterval: '1 second', nonRetryableErrorTypes: ['ManifestError'] },
  });

  let phase: BackfillPhase = 'listing';
  let cancelRequested = false;
  let workflowCancelled = false;
  const running = new Set<string>();
  const rows: ReportRow[] = [];

  const progress = (): BackfillProgress => ({
    batchId: input.batchId,
    ...counters,
    phase: state.paused && phase === 'running' ? 'paused' : phase,
    running: running.size,
    audioHours: roundThousandths(counters.audioSeconds / 3600),
    run: state.run,
    pages: state.cursor.page,
    listingFinished: state.cursor.finished,
    maxHistoryEvents: state.maxHistoryEvents,
  });
  const showDetails = () =>
    setCurrentDetails(
      `**${progress().phase}** · listed ${counters.listed} · skipped ${counters.skipped} · running ${running.size}` +
        ` · done ${counters.done}${counters.partial ? ` · partial ${counters.partial}` : ''}` +
        ` · failed ${counters.failed} · run ${state.run}`,
    );
  setHandler(backfillProgressQuery, progress);
  setHandler(pauseUpdate, () => {
    state.paused = true;
    showDetails();
    return progress();
  });
  setHandler(resumeUpdate, () => {
    state.paused = false;
    showDetails();
    return progress();
  });
  setHandler(cancelUpdate, () => {
    cancelRequested = true;
    return progress();
  });
  // Cancelling the workflow itself (Web UI, `temporal workflow cancel`) is a cancel too: the work below
  // runs in a non-cancellable scope so the window can be cancelled and the report still written.
  CancellationScope.current().cancelRequested.catch(() => {
    cancelRequested = true;
    workflowCancelled = true;
  });
  upsertSearchAttributes([{ key: SEARCH_ATTRIBUTE_KEYS.batchId, value: input.batchId }]);

  const result = await CancellationScope.nonCancellable(async () => {
    await prepareManifestOnce(activities.prepareManifest, input, state, partsPrefix);

    const children = new CancellationScope();
    const rowOf = (
      item: BackfillItem,
      startedMs: number,
    ): Pick<ReportRow, 'callId' | 'source' | 'workflowId' | 'wallSeconds'> => ({
      callId: item.callId,
      source: `s3://${item.source.bucket}/${item.source.key}`,
      workflowId: item.workflowId,
      wallSeconds: (Date.now() - startedMs) / 1000,
    });
    const finished = (item: BackfillItem, startedMs: number, r: ProcessRecordingResult) => {
      if (r.status === 'done' || r.status === 'partial') {
        counters[r.status] += 1;
        counters.audioSeconds += r.durationSeconds ?? 0;
      } else if (r.status === 'failed') counters.failed += 1;
      else counters.skipped += 1;
      rows.push({
        ...rowOf(item, startedMs),
        status: r.status,
        ...(r.reason ? { reason: r.reason } : {}),
        ...(r.stage ? { stage: r.stage } : {}),
        ...(r.durationSeconds !== undefined ? { durationSeconds: r.durationSeconds } : {}),
        ...(r.sessions !== undefined ? { sessions: r.sessions } : {}),
        ...(r.requests !== undefined ? { requests: r.requests } : {}),
        ...(r.resultKey ? { resultKey: r.resultKey } : {}),
        ...(r.tables && 'dt' in r.tables ? { dt: r.tables.dt } : {}),
        ...(r.tables && 'error' in r.tables ? { tablesError: r.tables.error } : {}),
      });
    };
    const broken = (item: BackfillItem, startedMs: number, err: unknown) => {
      const row = rowOf(item, startedMs);
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        // Someone else (`callpipe process`, an abandoned child of a cancelled run) is on this call.
        counters.skipped += 1;
        rows.push({ ...row, status: 'skipped', reason: 'already being processed by a running workflow' });
      } else if (isCancellation(err) || (err instanceof ChildWorkflowFailure && isCancellation(err.cause))) {
        counters.cancelled += 1;
        rows.push({ ...row, status: 'cancelled', reason: 'batch cancelled' });
      } else {
        counters.failed += 1;
        rows.push({ ...row, status: 'failed', reason: reasonOf(err) });
      }
    };
    const start = (item: BackfillItem) => {
      const startedMs = Date.now();
      running.add(item.workflowId);
      counters.started += 1;
      const plan: ProcessRecordingInput['plan'] = {
        ...(input.child.maxSessionSeconds ? { maxSessionSeconds: input.child.maxSessionSeconds } : {}),
        ...(input.child.planStrategy ? { strategy: input.child.planStrategy } : {}),
        ...(input.child.planBudget ? { budget: input.child.planBudget } : {}),
        ...(input.child.minSessionSeconds ? { minSessionSeconds: input.child.minSessionSeconds } : {}),
        ...(item.speakers ? { channels: { speakers: item.speakers } } : {}),
      };
      const childInput: ProcessRecordingInput = {
        callId: item.callId,
        source: item.source,
        output: input.output,
        stagingPrefix: input.child.stagingPrefix,
        ...(input.child.keepStaging ? { cleanupStaging: false } : {}),
        batchId: input.batchId,
        redo: input.redo,
        ...(item.metadata ? { metadata: item.metadata } : {}),
        plan,
        ...(input.child.pacingSpeed ? { pacingSpeed: input.child.pacingSpeed } : {}),
        ...(input.child.queues ? { queues: input.child.queues } : {}),
        ...(input.child.rulesKey ? { rulesKey: input.child.rulesKey } : {}),
        ...(input.child.wordsKey ? { wordsKey: input.child.wordsKey } : {}),
        ...(input.child.tables ? { tables: input.child.tables } : {}),
        ...(input.child.text ? { text: input.child.text } : {}),
        ...(input.child.redaction ? { redaction: input.child.redaction } : {}),
      };
      void children
        .run(() =>
          executeChild(processRecording, {
            workflowId: item.workflowId,
            args: [childInput],
            taskQueue: input.taskQueue ?? info.taskQueue,
            // The call outlives this run (continue-as-new) and a terminated batch.
            parentClosePolicy: ParentClosePolicy.ABANDON,
            typedSearchAttributes: [
              { key: SEARCH_ATTRIBUTE_KEYS.callId, value: item.callId },
              { key: SEARCH_ATTRIBUTE_KEYS.batchId, value: input.batchId },
            ],
            staticSummary: `call ${item.callId} of batch ${input.batchId}`,
          }),
        )
        .then(
          (r) => finished(item, startedMs, r),
          (err: unknown) => broken(item, startedMs, err),
        )
        .finally(() => {
          running.delete(item.workflowId);
          showDetails();
        });
    };

    let startedThisRun = 0;
    let continueRun = false;
    while (!cancelRequested && !state.cursor.finished) {
      if (startedThisRun >= input.childrenPerRun || workflowInfo().continueAsNewSuggested) {
        continueRun = true;
        break;
      }
      // No pause wait here: a paused batch lists its next page (so progress shows what is ahead) and
      // holds before the first child of it.
      phase = 'listing';
      const page = await activities.listBackfillPage({
        source: input.source,
        output: input.output,
        filters: input.filters,
        cursor: state.cursor,
        pageSize: input.pageSize,
        redo: input.redo,
        partsPrefix,
        manifest: state.manifest,
      });
      state.cursor = page.cursor;
      counters.listed += page.listed;
      counters.filtered += page.filtered;
      counters.skipped += page.skipped;
      counters.missing += page.missing;
      phase = 'running';
      showDetails();
      for (const [i, item] of page.items.entries()) {
        await condition(() => cancelRequested || (!state.paused && running.size < input.concurrency));
        if (cancelRequested) {
          // Listed but never started: in the report as cancelled.
          for (const rest of page.items.slice(i)) {
            counters.cancelled += 1;
            rows.push({
              callId: rest.callId,
              source: `s3://${rest.source.bucket}/${rest.source.key}`,
              status: 'cancelled',
              reason: 'batch cancelled before the call started',
            });
          }
          break;
        }
        start(item);
        startedThisRun += 1;
      }
    }

    phase = 'draining';
    if (cancelRequested) children.cancel();
    showDetails();
    await condition(() => running.size === 0);
    if (rows.length > 0) {
      await activities.writeReportPart({
        bucket: input.output.bucket,
        key: `${partsPrefix}run-${String(state.run).padStart(5, '0')}.json`,
        rows,
      });
    }
    state.maxHistoryEvents = Math.max(state.maxHistoryEvents, workflowInfo().historyLength);
    if (continueRun && !cancelRequested) return undefined;

    phase = 'reporting';
    showDetails();
    const report = await activities.writeBatchReport({
      output: input.output,
      reportPrefix,
      partsPrefix,
      header: {
        batchId: input.batchId,
        source:
          input.source.kind === 'prefix'
            ? `s3://${input.source.bucket}/${input.source.prefix}`
            : `s3://${input.source.bucket}/${input.source.key}`,
        output: locationUrl(input.output),
        startedAt: state.startedAt,
        status: cancelRequested ? 'cancelled' : 'done',
        runs: state.run + 1,
        counters,
        audioHours: progress().audioHours,
      },
    });
    const tables = patched(BATCH_TABLES) ? await compactBatchDays(input, report.days ?? []) : undefined;
    const reportHtmlKey = patched(NIGHT_REPORT)
      ? await writeNightReport(input, reportPrefix, report.days ?? [])
      : undefined;
    const status = cancelRequested ? 'cancelled' : 'done';
    phase = status;
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTE_KEYS.outcome, value: status }]);
    showDetails();
    log.info('backfill finished', { batchId: input.batchId, ...counters, runs: state.run + 1 });
    return {
      ...progress(),
      status,
      reportJsonKey: report.jsonKey,
      reportCsvKey: report.csvKey,
      ...(tables ? { tables } : {}),
      ...(reportHtmlKey ? { reportHtmlKey } : {}),
    } satisfies BackfillResult;
  });

  if (!result) {
    return continueAsNew<typeof backfill>(input, { ...state, run: state.run + 1 });
  }
  // Cancelled from outside: end as cancelled (the report is written) so the Web UI shows it so.
  if (workflowCancelled) throw new CancelledFailure('backfill cancelled');
  return result;
}

/**
 * Compacts the table partitions the batch's calls wrote (activities/tables/), a few days at a time on
 * the media queue. A day that cannot be compacted stays as it is (correct, in more files) and is
 * reported; the next batch that touches it compacts it.
 */
async function compactBatchDays(
  input: BackfillInput,
  days: string[],
): Promise<NonNullable<BackfillResult['tables']>> {
  const tables = proxyActivities<TableActivities>({
    taskQueue: input.child.queues?.media ?? DEFAULT_QUEUES.media,
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: '2 minutes',
    retry: { maximumAttempts: 5, initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  const location = tablesLocationOf(input.output, input.child.tables);
  const result: NonNullable<BackfillResult['tables']> = { compacted: [], failed: [] };
  for (let i = 0; i < days.length; i += COMPACTIONS_AT_ONCE) {
    const batch = days.slice(i, i + COMPACTIONS_AT_ONCE);
    await Promise.all(
      batch.map((dt) =>
        tables.compactTables
          .executeWithOptions({ summary: `compact the tables of ${dt}` }, [{ tables: location, days: [dt] }])
          .then(
            () => void result.compacted.push(dt),
            (err: unknown) => void result.failed.push({ dt, reason: reasonOf(err) }),
          ),
      ),
    );
  }
  result.compacted.sort();
  result.failed.sort((a, b) => a.dt.localeCompare(b.dt));
  return result;
}

/** The night report beside report.json; a batch whose report cannot be rendered still ends, with a log line. */
async function writeNightReport(
  input: BackfillInput,
  reportPrefix: string,
  days: string[],
): Promise<string | undefined> {
  const pages = proxyActivities<PageActivities>({
    taskQueue: input.taskQueue ?? workflowInfo().taskQueue,
    startToCloseTimeout: '10 minutes',
    retry: { maximumAttempts: 5, initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  try {
    const written = await pages.writeNightReport.executeWithOptions({ summary: 'write the night report' }, [
      {
        output: input.output,
        batchId: input.batchId,
        reportPrefix,
        tables: tablesLocationOf(input.output, input.child.tables),
        days,
      },
    ]);
    return written.key;
  } catch (err) {
    if (isCancellation(err)) throw err;
    log.warn('night report not written', { batchId: input.batchId, reason: reasonOf(err) });
    return undefined;
  }
}
