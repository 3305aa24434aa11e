/**
 * watch: recordings processed as they land under an S3 prefix, each once, until stopped.
 *
 * One workflow per watched prefix and output (`callpipe watch`). Each tick it discovers objects (a
 * listing of the keys after its watermark, or S3 event notifications from SQS), and now and then a
 * reconciliation lists the whole prefix page by page (after a first complete pass, only objects dated
 * less than a day before the last complete one began count). Listings leave done calls out in bulk.
 * Discovered objects settle (workflows/watch-settle.ts); settled ones are admitted by an activity (looked
 * at again, done-checked as a backfill does) and started as `processRecording` children with the call
 * ids, workflow ids and output layout of a backfill, at most `concurrency` at once. A child's workflow id
 * names the object's version, so whatever finds an object twice (a scan and a reconciliation, a restart)
 * starts no second run of it.
 *
 * Bounds: a listing returns one page; at most `maxPending` objects settle at once (listing goes on from
 * the last one taken); a run continues as new past a history size or `childrenPerRun` children, after its
 * window drained (discovery goes on meanwhile). State carried: a watermark, the settling objects, the
 * reconciliation's cursor and counters.
 *
 * Control: update `stop` (no new children; the running ones finish; the workflow ends `stopped`), update
 * `configure` (new settings from `callpipe watch` run again); cancelling the workflow stops it the same
 * way. Query `status`.
 */
import {
  CancellationScope,
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
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { WatchActivities } from '../activities/watch/watch-activities.ts';
import {
  WATCH_CLOCK_SLACK_SECONDS,
  WATCH_HISTORY_EVENTS,
  WATCH_RECONCILE_LOOKBACK_SECONDS,
} from '../schemas/watch-bounds.ts';
import type {
  AdmitVerdict,
  WatchCounters,
  WatchInput,
  WatchListing,
  WatchObject,
  WatchPhase,
  WatchStatus,
} from '../schemas/watch.ts';
import { locationUrl } from '../schemas/call-keys.ts';
import { processRecording, type ProcessRecordingResult } from './process-recording.ts';
import { SEARCH_ATTRIBUTE_KEYS } from './search-attribute-keys.ts';
import { reasonOf } from './failure-reason.ts';
import { PendingSet, type PendingEntry } from './watch-settle.ts';
import { RETRY_POLICIES } from './activity-policies.ts';
import { declareVersioning } from './versioning-behavior.ts';

/** What one run hands the next (continue-as-new). */
export interface WatchCarry {
  /** The last key the scans took (listing mode): the next scan lists the keys after it. */
  watermark?: string;
  /** When the scans' first pass from the start of the prefix began (epoch ms), until it finished. */
  firstPassStartedMs?: number;
  pending: PendingEntry[];
  /** A reconciliation under way: the last key it took and when it began. */
  reconcile?: { after?: string; startedMs: number };
  /** When the last complete pass over the whole prefix began (epoch ms). */
  reconciledMs?: number;
  nextReconcileMs: number;
  counters: WatchCounters;
  run: number;
  startedAt: string;
  lastScanAt?: string;
}

export const watchStatusQuery = defineQuery<WatchStatus>('status');
export const stopWatchUpdate = defineUpdate<WatchStatus>('stop');
export const configureWatchUpdate = defineUpdate<WatchStatus, [WatchInput]>('configure');

function emptyCounters(): WatchCounters {
  return {
    discovered: 0,
    replaced: 0,
    vanished: 0,
    started: 0,
    done: 0,
    partial: 0,
    failed: 0,
    skipped: 0,
    alreadyRunning: 0,
    cancelled: 0,
    audioSeconds: 0,
    notifications: 0,
  };
}

/**
 * AUTO_UPGRADE: it can live for days (continuing as new), so it moves to the current build at its next
 * workflow task (workers/versioning.ts); a change to it must replay its open runs' histories.
 */
declareVersioning('AUTO_UPGRADE', watch);

export async function watch(input: WatchInput, carry?: WatchCarry): Promise<WatchStatus> {
  const w = new Watch(input, carry);
  w.listen();
  const outcome = await CancellationScope.nonCancellable(() => w.run());
  if (outcome === 'continue') return continueAsNew<typeof watch>(w.input, w.carry());
  return w.status();
}

class Watch {
  input: WatchInput;
  readonly state: Omit<WatchCarry, 'pending'>;
  readonly pending: PendingSet;
  readonly info = workflowInfo();
  readonly activities: ReturnType<typeof proxyActivities<WatchActivities>>;
  /** Children in flight: workflow id → key and ETag of the version. */
  readonly running = new Map<string, { key: string; etag?: string | undefined }>();
  phase: WatchPhase = 'watching';
  stopRequested = false;
  /** Something the loop's wait should not sleep through (a child ended, an update). */
  wake = false;
  startedThisRun = 0;
  sourceProblem?: string;

  constructor(input: WatchInput, carry: WatchCarry | undefined) {
    this.input = input;
    const now = Date.now();
    const { pending = [], ...state } = carry ?? {
      pending: [],
      counters: emptyCounters(),
      run: 0,
      startedAt: new Date(now).toISOString(),
      // Listing mode: the scans' first pass covers the whole prefix; with SQS a reconciliation does, now.
      ...(input.sqs ? { reconcile: { startedMs: now } } : { firstPassStartedMs: now }),
      nextReconcileMs: now + input.reconcileSeconds * 1000,
    };
    this.state = { ...state, counters: { ...emptyCounters(), ...state.counters } };
    this.pending = new PendingSet(pending, input.maxPending, WATCH_CLOCK_SLACK_SECONDS * 1000);
    this.activities = proxyActivities<WatchActivities>({
      taskQueue: input.taskQueue ?? this.info.taskQueue,
      // A receive long-polls for at most 20 s; a listing is one page, an admission a window's HEADs. Short,
      // so an attempt lost with a killed worker is tried again within a minute, not after minutes.
      startToCloseTimeout: '1 minute',
      retry: RETRY_POLICIES.watch,
    });
  }

  get counters(): WatchCounters {
    return this.state.counters;
  }

  carry(): WatchCarry {
    return { ...this.state, pending: this.pending.toJSON(), run: this.state.run + 1 };
  }

  status(): WatchStatus {
    const { input, state } = this;
    return {
      watchId: input.watchId,
      ...this.counters,
      phase: this.phase,
      source: `s3://${input.source.bucket}/${input.source.prefix}`,
      output: locationUrl(input.output),
      mode: input.sqs ? 'sqs' : 'listing',
      settleSeconds: input.settleSeconds,
      pending: this.pending.size,
      running: this.running.size,
      run: state.run,
      startedAt: state.startedAt,
      ...(state.lastScanAt ? { lastScanAt: state.lastScanAt } : {}),
      ...(state.reconciledMs !== undefined
        ? { lastReconciledAt: new Date(state.reconciledMs).toISOString() }
        : {}),
      ...(this.sourceProblem ? { sourceProblem: this.sourceProblem } : {}),
    };
  }

  showDetails(): void {
    const s = this.status();
    setCurrentDetails(
      `**${s.phase}** (${s.mode}, settle ${s.settleSeconds} s) · pending ${s.pending} · running ${s.running}` +
        ` · started ${s.started} · done ${s.done}${s.partial ? ` · partial ${s.partial}` : ''} · failed ${s.failed}` +
        ` · skipped ${s.skipped} · run ${s.run}${s.sourceProblem ? `\n\n**source:** ${s.sourceProblem}` : ''}`,
    );
  }

  listen(): void {
    setHandler(watchStatusQuery, () => this.status());
    setHandler(stopWatchUpdate, () => {
      this.stopRequested = true;
      this.wake = true;
      return this.status();
    });
    setHandler(
      configureWatchUpdate,
      (next) => {
        this.input = next;
        this.wake = true;
        upsertMemo({ settleSeconds: next.settleSeconds, mode: next.sqs ? 'sqs' : 'listing' });
        return this.status();
      },
      {
        validator: (next) => {
          if (this.stopRequested)
            throw new Error('the watch is stopping: start it again once it has stopped');
          if (next.watchId !== this.input.watchId) throw new Error('configure: another watch id');
          if (
            next.source.bucket !== this.input.source.bucket ||
            next.source.prefix !== this.input.source.prefix
          )
            throw new Error('configure: another prefix is another watch');
        },
      },
    );
    // Cancelling the workflow (Web UI, `temporal workflow cancel`) stops it as `stop` does.
    CancellationScope.current().cancelRequested.catch(() => {
      this.stopRequested = true;
      this.wake = true;
    });
    upsertSearchAttributes([
      { key: SEARCH_ATTRIBUTE_KEYS.batchId, value: this.input.watchId },
      { key: SEARCH_ATTRIBUTE_KEYS.stage, value: 'watching' },
    ]);
    upsertMemo({ settleSeconds: this.input.settleSeconds, mode: this.input.sqs ? 'sqs' : 'listing' });
  }

  /** The run's loop; `continue` when the run hands over to the next (continue-as-new). */
  async run(): Promise<'continue' | 'stopped'> {
    this.showDetails();
    while (!this.stopRequested) {
      if (!this.draining() && this.dueToContinue()) {
        this.phase = 'draining';
        this.showDetails();
      }
      await this.discover();
      await this.startSettled();
      if (this.draining() && this.running.size === 0) return 'continue';
      await this.pause();
    }
    this.phase = 'stopping';
    this.showDetails();
    await condition(() => this.running.size === 0);
    this.phase = 'stopped';
    upsertSearchAttributes([
      { key: SEARCH_ATTRIBUTE_KEYS.stage, value: 'stopped' },
      { key: SEARCH_ATTRIBUTE_KEYS.outcome, value: 'stopped' },
    ]);
    this.showDetails();
    log.info('watch stopped', { watchId: this.input.watchId, ...this.counters });
    return 'stopped';
  }

  private draining(): boolean {
    return this.phase === 'draining';
  }

  private dueToContinue(): boolean {
    return (
      this.startedThisRun >= this.input.childrenPerRun ||
      workflowInfo().continueAsNewSuggested ||
      workflowInfo().historyLength > WATCH_HISTORY_EVENTS
    );
  }

  /** Takes listed or notified objects in order until no more fit; returns how many it went through. */
  private take(objects: WatchObject[], now: number): number {
    const runningVersions = new Set([...this.running.values()].map((r) => `${r.key}\u0000${r.etag ?? ''}`));
    for (const [i, o] of objects.entries()) {
      if (runningVersions.has(`${o.key}\u0000${o.etag ?? ''}`)) continue;
      const seen = this.pending.observe(o, now);
      if (seen === 'full') return i;
      if (seen === 'new') this.counters.discovered += 1;
      else if (seen === 'replaced') {
        this.counters.discovered += 1;
        this.counters.replaced += 1;
      }
    }
    return objects.length;
  }

  /** The key a listing may go on after: its last key when all was taken, else the last object taken. */
  private resumeKey(listing: WatchListing, took: number, from: string | undefined): string | undefined {
    if (took === listing.objects.length) return listing.lastKey ?? from;
    return took > 0 ? listing.objects[took - 1]!.key : from;
  }

  private noteSource(listing: WatchListing): void {
    if (listing.missing !== this.sourceProblem) {
      this.sourceProblem = listing.missing;
      if (listing.missing)
        log.warn('watched source cannot be listed', { watchId: this.input.watchId, reason: listing.missing });
    }
  }

  private async discover(): Promise<void> {
    const { input, state } = this;
    if (input.sqs) await this.receive();
    else if (!this.pending.full) await this.scan();
    if (state.reconcile || Date.now() >= state.nextReconcileMs) await this.reconcile();
    state.lastScanAt = new Date(Date.now()).toISOString();
    this.showDetails();
  }

  /** Listing mode: the keys after the watermark, one page. */
  private async scan(): Promise<void> {
    const { input, state } = this;
    const listing = await this.activities.listWatchedObjects({
      source: input.source,
      output: input.output,
      filters: input.filters,
      after: state.watermark,
      limit: input.pageSize,
    });
    this.noteSource(listing);
    // Keys after the watermark are seen once: their done calls count as skipped (a reconciliation's,
    // seen again each pass, do not).
    this.counters.skipped += listing.done;
    const took = this.take(listing.objects, Date.now());
    state.watermark = this.resumeKey(listing, took, state.watermark);
    if (listing.finished && took === listing.objects.length && state.firstPassStartedMs !== undefined) {
      state.reconciledMs = state.firstPassStartedMs;
      delete state.firstPassStartedMs;
    }
  }

  /** SQS mode: notifications, waiting at most until the next pending object settles. */
  private async receive(): Promise<void> {
    const { input } = this;
    const next = this.pending.nextSettleAt(input.settleSeconds * 1000);
    const untilSettle = next === undefined ? input.pollSeconds : (next - Date.now()) / 1000;
    const found = await this.activities.receiveNotifications({
      queueUrl: input.sqs!.queueUrl,
      source: input.source,
      waitSeconds: Math.max(0, Math.min(input.pollSeconds, Math.ceil(untilSettle))),
    });
    this.counters.notifications += found.messages;
    for (const key of found.removed) if (this.pending.remove(key)) this.counters.vanished += 1;
    // What does not fit now is found by the next reconciliation (modified since it began).
    this.take(found.created, Date.now());
  }

  /** One page of a pass over the whole prefix; only objects modified since the last complete pass began. */
  private async reconcile(): Promise<void> {
    const { input, state } = this;
    const rec = (state.reconcile ??= { startedMs: Date.now() });
    if (this.pending.full) return;
    const since =
      state.reconciledMs === undefined
        ? undefined
        : state.reconciledMs - WATCH_RECONCILE_LOOKBACK_SECONDS * 1000;
    const listing = await this.activities.listWatchedObjects({
      source: input.source,
      output: input.output,
      filters: input.filters,
      after: rec.after,
      limit: input.pageSize,
      ...(since !== undefined ? { modifiedSinceMs: since } : {}),
    });
    this.noteSource(listing);
    const took = this.take(listing.objects, Date.now());
    const after = this.resumeKey(listing, took, rec.after);
    if (after !== undefined) rec.after = after;
    if (listing.finished && took === listing.objects.length) {
      state.reconciledMs = rec.startedMs;
      delete state.reconcile;
      state.nextReconcileMs = Date.now() + input.reconcileSeconds * 1000;
    }
  }

  /** Admits the settled objects there is room for, and starts their children. */
  private async startSettled(): Promise<void> {
    const { input } = this;
    if (this.draining() || this.stopRequested) return;
    const now = Date.now();
    const settled = this.pending.settled(
      now,
      input.settleSeconds * 1000,
      input.concurrency - this.running.size,
    );
    if (settled.length === 0) return;
    const verdicts = await this.activities.admitWatchedObjects({
      bucket: input.source.bucket,
      output: input.output,
      filters: input.filters,
      objects: settled.map(({ key, etag, size }) => ({ key, etag, size })),
    });
    for (const v of verdicts) this.admitted(v, Date.now());
    this.showDetails();
  }

  private admitted(v: AdmitVerdict, now: number): void {
    switch (v.verdict) {
      case 'changed':
        this.pending.restart(v.key, v, now);
        this.counters.replaced += 1;
        return;
      case 'gone':
        this.pending.remove(v.key);
        this.counters.vanished += 1;
        return;
      case 'skipped':
        this.pending.remove(v.key);
        this.counters.skipped += 1;
        return;
      case 'start':
        if (this.stopRequested || this.draining()) return; // stays pending for the next run
        this.pending.remove(v.key);
        this.start(v);
    }
  }

  private start(v: Extract<AdmitVerdict, { verdict: 'start' }>): void {
    const { input } = this;
    const source = {
      bucket: input.source.bucket,
      key: v.key,
      ...(v.etag ? { etag: v.etag } : {}),
      size: v.size,
    };
    this.running.set(v.workflowId, { key: v.key, etag: v.etag });
    this.counters.started += 1;
    this.startedThisRun += 1;
    void executeChild(processRecording, {
      workflowId: v.workflowId,
      args: [
        {
          callId: v.callId,
          source,
          output: input.output,
          batchId: input.watchId,
          redo: false,
          spec: input.spec,
        },
      ],
      taskQueue: input.taskQueue ?? this.info.taskQueue,
      // The call outlives this run (continue-as-new) and a terminated watch.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      typedSearchAttributes: [
        { key: SEARCH_ATTRIBUTE_KEYS.callId, value: v.callId },
        { key: SEARCH_ATTRIBUTE_KEYS.batchId, value: input.watchId },
      ],
      staticSummary: `call ${v.callId} of ${input.watchId}`,
    })
      .then(
        (r) => this.finished(r),
        (err: unknown) => this.broken(err),
      )
      .finally(() => {
        this.running.delete(v.workflowId);
        this.wake = true;
        this.showDetails();
      });
  }

  private finished(r: ProcessRecordingResult): void {
    const { counters } = this;
    if (r.status === 'done' || r.status === 'partial') {
      counters[r.status] += 1;
      counters.audioSeconds += r.durationSeconds ?? 0;
    } else if (r.status === 'failed') counters.failed += 1;
    else counters.skipped += 1;
  }

  private broken(err: unknown): void {
    if (err instanceof WorkflowExecutionAlreadyStartedError) this.counters.alreadyRunning += 1;
    else if (isCancellation(err) || (err instanceof ChildWorkflowFailure && isCancellation(err.cause)))
      this.counters.cancelled += 1;
    else {
      this.counters.failed += 1;
      log.warn('watched call failed', { watchId: this.input.watchId, reason: reasonOf(err) });
    }
  }

  /**
   * Until the next poll, the next settle, a child's end or an update, whichever comes first. With SQS the
   * receive itself waits (long poll), so only a settle due sooner than a poll is waited for here.
   */
  private async pause(): Promise<void> {
    const { input } = this;
    const room = !this.draining() && this.running.size < input.concurrency;
    const next = room ? this.pending.nextSettleAt(input.settleSeconds * 1000) : undefined;
    const untilSettle = next === undefined ? Infinity : next - Date.now();
    const waitMs = Math.min(input.sqs ? 0 : input.pollSeconds * 1000, untilSettle);
    const wait = input.sqs && next !== undefined ? Math.max(0, untilSettle) : waitMs;
    this.wake = false;
    if (wait > 0 && Number.isFinite(wait))
      await condition(() => this.wake || this.stopRequested, Math.max(100, wait));
  }
}
