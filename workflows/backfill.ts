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
  CancellationScope,
  CancelledFailure,
  ChildWorkflowFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineUpdate,
  executeChild,
  isCancellation,
  log,
  ParentClosePolicy,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { BackfillActivities } from '../activities/backfill/backfill-activities.ts';
import type { TableActivities } from '../activities/tables/table-activities.ts';
import type { PageActivities } from '../activities/pages/page-activities.ts';
import type {
  BackfillCounters,
  BackfillCursor,
  BackfillInput,
  BackfillItem,
  ReportRow,
  StoredBackfillInput,
} from '../schemas/backfill.ts';
import type { CallSpec } from '../schemas/call-spec.ts';
import { processRecording, type ProcessRecordingResult } from './process-recording.ts';
import { batchPartsPrefix, batchReportPrefix, locationUrl } from '../schemas/call-keys.ts';
import { reasonOf, workflowFailureOf } from './failure-reason.ts';
import { SEARCH_ATTRIBUTE_KEYS } from './search-attribute-keys.ts';
import { prepareManifestOnce } from './manifest-pages.ts';
import { roundThousandths } from '../schemas/units.ts';
import { emitBatchEvent } from './call-events.ts';
import { RETRY_POLICIES } from './activity-policies.ts';
import { declareVersioning } from './versioning-behavior.ts';

type BackfillPhase = 'listing' | 'running' | 'paused' | 'draining' | 'reporting' | 'done' | 'cancelled';

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
 * The input with `concurrency` read as `backfillInputSchema` reads it (`window` is its 0.1 name, which
 * a request may still spell); what a continue-as-new carries on.
 */
export function currentBackfillInput({
  window,
  concurrency,
  spec,
  ...input
}: StoredBackfillInput): BackfillInput {
  const resolved = concurrency ?? window;
  if (resolved === undefined || !spec) {
    throw workflowFailureOf(
      'InvalidWorkflowInput',
      'backfill input has no concurrency or spec: parse it with backfillInputSchema',
    );
  }
  return { ...input, concurrency: resolved, spec };
}

/** A child's settings: the batch's, with the speakers its manifest row names for its channels. */
function childSpec(spec: CallSpec, item: BackfillItem): CallSpec {
  if (!item.speakers) return spec;
  return { ...spec, plan: { ...spec.plan, channels: { ...spec.plan.channels, speakers: item.speakers } } };
}

/**
 * AUTO_UPGRADE: it can live for days (continuing as new), so it moves to the current build at its next
 * workflow task (workers/versioning.ts); a change to it must replay its open runs' histories.
 */
declareVersioning('AUTO_UPGRADE', backfill);

export async function backfill(stored: StoredBackfillInput, carry?: BackfillCarry): Promise<BackfillResult> {
  const batch = new Batch(currentBackfillInput(stored), carry);
  batch.listen();
  const result = await CancellationScope.nonCancellable(() => batch.run());
  if (!result) {
    return continueAsNew<typeof backfill>(batch.input, { ...batch.state, run: batch.state.run + 1 });
  }
  // Cancelled from outside: end as cancelled (the report is written) so the Web UI shows it so.
  if (batch.workflowCancelled) throw new CancelledFailure('backfill cancelled');
  return result;
}

/** A call's row in the report, as far as the batch knows it without the call's result. */
function rowOf(
  item: BackfillItem,
  startedMs: number,
): Pick<ReportRow, 'callId' | 'source' | 'workflowId' | 'wallSeconds'> {
  return {
    callId: item.callId,
    source: `s3://${item.source.bucket}/${item.source.key}`,
    workflowId: item.workflowId,
    wallSeconds: (Date.now() - startedMs) / 1000,
  };
}

/** The row of a call whose child ended with a result. */
function finishedRow(item: BackfillItem, startedMs: number, r: ProcessRecordingResult): ReportRow {
  return {
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
  };
}

/**
 * One run of a batch: its state (what continue-as-new carries), the children in its window and the rows
 * of its report part. Reading order: `listen` (handlers), `run` (list, start, drain, report), then the
 * steps in that order.
 */
class Batch {
  readonly input: BackfillInput;
  readonly state: BackfillCarry;
  readonly info = workflowInfo();
  readonly reportPrefix: string;
  /** One execution chain's parts: a later execution of the same batch writes its own. */
  readonly partsPrefix: string;
  readonly activities: ReturnType<typeof proxyActivities<BackfillActivities>>;
  phase: BackfillPhase = 'listing';
  cancelRequested = false;
  workflowCancelled = false;
  readonly running = new Set<string>();
  readonly rows: ReportRow[] = [];
  private children?: CancellationScope;

  constructor(input: BackfillInput, carry: BackfillCarry | undefined) {
    this.input = input;
    this.state = carry
      ? // A carry from before a counter existed (`partial`) starts that counter at 0.
        { ...carry, counters: { ...emptyCounters(), ...carry.counters } }
      : {
          cursor: { page: 0, finished: false },
          counters: emptyCounters(),
          run: 0,
          startedAt: new Date(this.info.startTime).toISOString(),
          paused: input.paused ?? false,
          maxHistoryEvents: 0,
        };
    this.reportPrefix = batchReportPrefix(input.output, input.batchId);
    this.partsPrefix = batchPartsPrefix(this.reportPrefix, this.info.firstExecutionRunId);
    this.activities = proxyActivities<BackfillActivities>({
      taskQueue: input.taskQueue ?? this.info.taskQueue,
      startToCloseTimeout: '10 minutes',
      retry: RETRY_POLICIES.backfill,
    });
  }

  get counters(): BackfillCounters {
    return this.state.counters;
  }

  progress(): BackfillProgress {
    const { counters, state } = this;
    return {
      batchId: this.input.batchId,
      ...counters,
      phase: state.paused && this.phase === 'running' ? 'paused' : this.phase,
      running: this.running.size,
      audioHours: roundThousandths(counters.audioSeconds / 3600),
      run: state.run,
      pages: state.cursor.page,
      listingFinished: state.cursor.finished,
      maxHistoryEvents: state.maxHistoryEvents,
    };
  }

  showDetails(): void {
    const { counters } = this;
    setCurrentDetails(
      `**${this.progress().phase}** · listed ${counters.listed} · skipped ${counters.skipped} · running ${this.running.size}` +
        ` · done ${counters.done}${counters.partial ? ` · partial ${counters.partial}` : ''}` +
        ` · failed ${counters.failed} · run ${this.state.run}`,
    );
  }

  /** The query and the updates; cancelling the workflow itself is a cancel too. */
  listen(): void {
    setHandler(backfillProgressQuery, () => this.progress());
    setHandler(pauseUpdate, () => this.setPaused(true));
    setHandler(resumeUpdate, () => this.setPaused(false));
    setHandler(cancelUpdate, () => {
      this.cancelRequested = true;
      return this.progress();
    });
    // (Web UI, `temporal workflow cancel`): the work runs in a non-cancellable scope so the window can be
    // cancelled and the report still written.
    CancellationScope.current().cancelRequested.catch(() => {
      this.cancelRequested = true;
      this.workflowCancelled = true;
    });
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTE_KEYS.batchId, value: this.input.batchId }]);
  }

  private setPaused(paused: boolean): BackfillProgress {
    this.state.paused = paused;
    this.showDetails();
    return this.progress();
  }

  /** The run's work, in a non-cancellable scope; undefined when it continues as new. */
  async run(): Promise<BackfillResult | undefined> {
    await prepareManifestOnce(this.activities.prepareManifest, this.input, this.state, this.partsPrefix);
    // Inside the non-cancellable scope: only a cancel of the batch cancels its children.
    this.children = new CancellationScope();
    const continueRun = await this.listAndStart();
    await this.drain();
    if (continueRun && !this.cancelRequested) return undefined;
    return this.finish();
  }

  /** Lists pages and starts their children until done, cancelled, or due to continue as new (true). */
  private async listAndStart(): Promise<boolean> {
    let startedThisRun = 0;
    while (!this.cancelRequested && !this.state.cursor.finished) {
      if (startedThisRun >= this.input.childrenPerRun || workflowInfo().continueAsNewSuggested) return true;
      // No pause wait here: a paused batch lists its next page (so progress shows what is ahead) and
      // holds before the first child of it.
      const items = await this.listPage();
      startedThisRun += await this.startPage(items);
    }
    return false;
  }

  private async listPage(): Promise<BackfillItem[]> {
    const { input, state, counters } = this;
    this.phase = 'listing';
    const page = await this.activities.listBackfillPage({
      source: input.source,
      output: input.output,
      filters: input.filters,
      cursor: state.cursor,
      pageSize: input.pageSize,
      redo: input.redo,
      partsPrefix: this.partsPrefix,
      manifest: state.manifest,
    });
    state.cursor = page.cursor;
    counters.listed += page.listed;
    counters.filtered += page.filtered;
    counters.skipped += page.skipped;
    counters.missing += page.missing;
    this.phase = 'running';
    this.showDetails();
    return page.items;
  }

  /** Starts a page's children inside the window; returns how many it started. */
  private async startPage(items: BackfillItem[]): Promise<number> {
    for (const [i, item] of items.entries()) {
      await condition(
        () => this.cancelRequested || (!this.state.paused && this.running.size < this.input.concurrency),
      );
      if (this.cancelRequested) {
        this.cancelledBeforeStart(items.slice(i));
        return i;
      }
      this.start(item);
    }
    return items.length;
  }

  /** Listed but never started: in the report as cancelled. */
  private cancelledBeforeStart(items: BackfillItem[]): void {
    for (const rest of items) {
      this.counters.cancelled += 1;
      this.rows.push({
        callId: rest.callId,
        source: `s3://${rest.source.bucket}/${rest.source.key}`,
        status: 'cancelled',
        reason: 'batch cancelled before the call started',
      });
    }
  }

  private start(item: BackfillItem): void {
    const { input } = this;
    const startedMs = Date.now();
    this.running.add(item.workflowId);
    this.counters.started += 1;
    const childInput = {
      callId: item.callId,
      source: item.source,
      output: input.output,
      batchId: input.batchId,
      redo: input.redo,
      ...(item.metadata ? { metadata: item.metadata } : {}),
      spec: childSpec(input.spec, item),
    };
    void this.children!.run(() =>
      executeChild(processRecording, {
        workflowId: item.workflowId,
        args: [childInput],
        taskQueue: input.taskQueue ?? this.info.taskQueue,
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
        (r) => this.finished(item, startedMs, r),
        (err: unknown) => this.broken(item, startedMs, err),
      )
      .finally(() => {
        this.running.delete(item.workflowId);
        this.showDetails();
      });
  }

  private finished(item: BackfillItem, startedMs: number, r: ProcessRecordingResult): void {
    const { counters } = this;
    if (r.status === 'done' || r.status === 'partial') {
      counters[r.status] += 1;
      counters.audioSeconds += r.durationSeconds ?? 0;
    } else if (r.status === 'failed') counters.failed += 1;
    else counters.skipped += 1;
    this.rows.push(finishedRow(item, startedMs, r));
  }

  private broken(item: BackfillItem, startedMs: number, err: unknown): void {
    const row = rowOf(item, startedMs);
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      // Someone else (`callpipe process`, an abandoned child of a cancelled run) is on this call.
      this.counters.skipped += 1;
      this.rows.push({ ...row, status: 'skipped', reason: 'already being processed by a running workflow' });
    } else if (isCancellation(err) || (err instanceof ChildWorkflowFailure && isCancellation(err.cause))) {
      // The batch's cancel cancels its window; a call cancelled on its own (the Web UI, `temporal
      // workflow cancel`) is that call's doing.
      this.counters.cancelled += 1;
      const reason = this.cancelRequested ? 'batch cancelled' : 'call cancelled (its workflow was cancelled)';
      this.rows.push({ ...row, status: 'cancelled', reason });
    } else {
      this.counters.failed += 1;
      this.rows.push({ ...row, status: 'failed', reason: reasonOf(err) });
    }
  }

  /** Waits for the window to empty (cancelling it first when asked), then writes this run's report part. */
  private async drain(): Promise<void> {
    this.phase = 'draining';
    if (this.cancelRequested) this.children!.cancel();
    this.showDetails();
    await condition(() => this.running.size === 0);
    if (this.rows.length > 0) {
      await this.activities.writeReportPart({
        bucket: this.input.output.bucket,
        key: `${this.partsPrefix}run-${String(this.state.run).padStart(5, '0')}.json`,
        rows: this.rows,
      });
    }
    this.state.maxHistoryEvents = Math.max(this.state.maxHistoryEvents, workflowInfo().historyLength);
  }

  /** The batch report, the days' tables compacted and the night report; the batch's result. */
  private async finish(): Promise<BackfillResult> {
    const { input, state, counters } = this;
    this.phase = 'reporting';
    this.showDetails();
    const report = await this.activities.writeBatchReport({
      output: input.output,
      reportPrefix: this.reportPrefix,
      partsPrefix: this.partsPrefix,
      header: {
        batchId: input.batchId,
        source:
          input.source.kind === 'prefix'
            ? `s3://${input.source.bucket}/${input.source.prefix}`
            : `s3://${input.source.bucket}/${input.source.key}`,
        output: locationUrl(input.output),
        startedAt: state.startedAt,
        status: this.cancelRequested ? 'cancelled' : 'done',
        runs: state.run + 1,
        counters,
        audioHours: this.progress().audioHours,
      },
    });
    const tables = await compactBatchDays(input, report.days ?? []);
    const reportHtmlKey = await writeNightReport(input, this.reportPrefix, report.days ?? []);
    const status = this.cancelRequested ? 'cancelled' : 'done';
    await emitBatchEvent(input.taskQueue ?? this.info.taskQueue, {
      batchId: input.batchId,
      output: input.output,
      status,
      reportJsonKey: report.jsonKey,
      reportCsvKey: report.csvKey,
      reportHtmlKey,
      counters: { ...counters },
      startedAt: state.startedAt,
    });
    this.phase = status;
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTE_KEYS.outcome, value: status }]);
    this.showDetails();
    log.info('backfill finished', { batchId: input.batchId, ...counters, runs: state.run + 1 });
    return {
      ...this.progress(),
      status,
      reportJsonKey: report.jsonKey,
      reportCsvKey: report.csvKey,
      ...(tables ? { tables } : {}),
      ...(reportHtmlKey ? { reportHtmlKey } : {}),
    } satisfies BackfillResult;
  }
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
    taskQueue: input.spec.queues.media,
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: '2 minutes',
    retry: RETRY_POLICIES.batchEnd,
  });
  const location = input.spec.tables;
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
    retry: RETRY_POLICIES.batchEnd,
  });
  try {
    const written = await pages.writeNightReport.executeWithOptions({ summary: 'write the night report' }, [
      {
        output: input.output,
        batchId: input.batchId,
        reportPrefix,
        tables: input.spec.tables,
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
