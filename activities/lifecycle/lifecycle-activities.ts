/**
 * The erasure's activities (workflows/forget.ts runs them in this order; retention runs the same):
 *
 * 1. `forgetObjects`: each call's own objects (call-objects.ts lists them), the recording first when asked
 *    for (its place is read from result.json, which goes last, so a retry still finds it), each delete's
 *    per-key answers read: a key S3 refused fails the request with the key named.
 * 2. `forgetTableRows`: the calls' rows out of every Parquet file of their days in every table, each day
 *    rewritten under its partition lease (partition-lease.ts), every other row as it was; then their
 *    locators.
 * 3. `forgetReportLines`: their lines out of the batch reports (report.json, report.csv, the run parts)
 *    and the night report drawn again without them.
 * 4. `forgetExecutions`: their workflow executions deleted from Temporal (history and visibility).
 * 5. `verifyForgotten`: everything listed and read back again; anything left fails the step.
 * 6. `writeAudit`: the record of what was removed (counts, never values) under `audit/`.
 *
 * Each is idempotent: a retry, or a second request for the same calls, finds less or nothing to do.
 */
import type { Client } from '@temporalio/client';
import {
  ERROR_FILE,
  RESULT_FILE,
  batchReportKeys,
  tableLeaseKey,
  tablePartitionPrefix,
  type TablesLocation,
} from '../../schemas/call-keys.ts';
import { TABLE_NAMES, type TableName } from '../../schemas/tables.ts';
import { reportRowSchema, type ReportRow } from '../../schemas/backfill.ts';
import {
  auditKey,
  type AuditRecord,
  type CallObjectKind,
  type ForgetInput,
} from '../../schemas/lifecycle.ts';
import { DeleteRefusedError, listObjectsUnder, onBucket, type ObjectStore } from '../storage/object-store.ts';
import { reportedSource } from '../storage/call-id.ts';
import { activityContext } from '../activity-context.ts';
import { withLeases, type LeaseOptions } from '../tables/partition-lease.ts';
import { readLocator } from '../tables/call-locator.ts';
import { callLocatorKey } from '../../schemas/call-keys.ts';
import { listParquet, readRows, writeRows } from '../tables/table-files.ts';
import { countRows, reportCsv, type BatchReport } from '../backfill/report.ts';
import { createPageActivities } from '../pages/page-activities.ts';
import { callHoldings, reportsHolding, type CallObject, type CallPlaces } from './call-objects.ts';
import { retentionRequests, type RetentionInput } from './retention.ts';
import type { SearchAttributeName } from '../../schemas/search-attributes.ts';

type Places = ForgetInput['places'];

const CALL_ID_ATTRIBUTE: SearchAttributeName = 'CallpipeCallId';

/** The visibility query of a call's executions (call ids are letters, digits, `.`, `_`, `-`: no quote). */
function executionsOf(callId: string): string {
  return `${CALL_ID_ATTRIBUTE} = '${callId.replaceAll("'", '')}'`;
}

export interface LifecycleActivityDeps {
  store: ObjectStore;
  /** Deletes workflow executions; without one (tests of the object side), none are touched. */
  temporal?: Client | undefined;
  lease?: Pick<LeaseOptions, 'ttlMs' | 'waitMs'>;
}

/** Something of the calls is still there after the erasure: the step is retried, then fails. */
class ForgetIncompleteError extends Error {
  override name = 'ForgetIncomplete';
}

/**
 * A key as a failure may name it: a call's keys are built from its (pseudonymous) call id; a recording's
 * key may hold a caller number, so its digit runs and addresses are masked as reports show sources.
 */
export function namedKey(bucket: string, key: string): string {
  return reportedSource(`s3://${bucket}/${key}`, 'auto');
}

function heartbeat(details?: unknown): void {
  activityContext()?.heartbeat(details);
}

/** Deletes `keys` of `bucket`; a refusal fails with the first refused key named (see {@link namedKey}). */
async function deleteNamed(store: ObjectStore, bucket: string, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  try {
    await store.deleteKeys(keys);
  } catch (err) {
    if (!(err instanceof DeleteRefusedError)) throw err;
    const [first] = err.keys;
    const more = err.keys.length > 1 ? ` and ${err.keys.length - 1} more` : '';
    const codes = Object.keys(err.codes).join(', ');
    const named = new Error(
      `S3 refused to delete ${first ? namedKey(bucket, first) : 'an object'}${more} (${codes})`,
    );
    // Same failure type: retried when the store was only busy, final when it said no.
    named.name = err.name;
    throw named;
  }
}

/** Result and error documents last: they name the recording, which a retry must still find. */
function deleteOrder(o: CallObject, output: Places['output']): number {
  if (o.kind === 'recording') return 0;
  const last =
    o.bucket === output.bucket &&
    o.kind === 'results' &&
    (o.key.endsWith(`/${RESULT_FILE}`) || o.key.endsWith(`/${ERROR_FILE}`));
  return last ? 2 : 1;
}

/** Whether `text` holds `callId` as a whole id (not inside a longer one). */
export function mentions(text: string, callId: string): boolean {
  let at = text.indexOf(callId);
  while (at >= 0) {
    const before = text[at - 1];
    const after = text[at + callId.length];
    const idChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9._-]/.test(c);
    if (!idChar(before) && !idChar(after)) return true;
    at = text.indexOf(callId, at + 1);
  }
  return false;
}

export interface ForgetObjectsInput {
  callIds: string[];
  places: Places;
  recordings: boolean;
  onlyKinds?: CallObjectKind[] | undefined;
}

export type ObjectCounts = Partial<Record<CallObjectKind, number>>;

export interface ForgetTableRowsInput {
  callIds: string[];
  places: Places;
}

export interface ForgetTableRowsOutput {
  /** Per call, per table: rows removed. */
  rows: Record<string, Partial<Record<TableName, number>>>;
  /** The days whose partitions were read (what verification reads back). */
  days: string[];
}

export interface VerifyInput {
  callIds: string[];
  places: Places;
  onlyKinds?: CallObjectKind[] | undefined;
  /** Days whose table files must hold none of the calls' rows. */
  days: string[];
}

/** The day partitions' files of every table, each read and rewritten without the calls' rows. */
async function removeRowsOfDay(
  out: ObjectStore,
  tables: TablesLocation,
  dt: string,
  callIds: Set<string>,
  removed: ForgetTableRowsOutput['rows'],
  keep: () => Promise<void>,
): Promise<void> {
  for (const table of TABLE_NAMES) {
    for (const key of await listParquet(out, tablePartitionPrefix(tables, table, dt))) {
      await keep();
      heartbeat({ dt, table });
      const rows = (await readRows(out, table, key)) ?? [];
      const kept = rows.filter((r) => !callIds.has(String(r.call_id)));
      if (kept.length === rows.length) continue;
      for (const r of rows) {
        const id = String(r.call_id);
        if (!callIds.has(id)) continue;
        const counts = (removed[id] ??= {});
        counts[table] = (counts[table] ?? 0) + 1;
      }
      if (kept.length === 0) await deleteNamed(out, out.bucket, [key]);
      else await writeRows(out, table, key, kept);
    }
  }
}

/** Rows of `callIds` still in the day's files, as `table dt=…` lines. */
async function rowsLeft(
  out: ObjectStore,
  tables: TablesLocation,
  days: readonly string[],
  callIds: Set<string>,
): Promise<string[]> {
  const left: string[] = [];
  for (const dt of days)
    for (const table of TABLE_NAMES)
      for (const key of await listParquet(out, tablePartitionPrefix(tables, table, dt))) {
        const rows = (await readRows(out, table, key)) ?? [];
        const n = rows.filter((r) => callIds.has(String(r.call_id))).length;
        if (n > 0) left.push(`${n} row(s) in ${key}`);
      }
  return left;
}

/** A batch report folder (`…/batches/<id>/`) of a report object's key. */
function reportFolderOf(key: string): string | undefined {
  const m = /^(.*?batches\/[^/]+\/)/.exec(key);
  return m?.[1];
}

/** A report folder's files rewritten without the lines of `callIds`; whether anything changed. */
async function rewriteReport(
  store: ObjectStore,
  places: CallPlaces,
  folder: string,
  callIds: Set<string>,
): Promise<number> {
  const out = onBucket(store, places.output.bucket);
  const pages = createPageActivities({ store });
  let changed = 0;
  // The run parts: arrays of report rows.
  for (const o of (await listObjectsUnder(out, `${folder}parts/`)).filter((x) => x.key.endsWith('.json'))) {
    const text = await out.getText(o.key);
    if (![...callIds].some((id) => mentions(text, id))) continue;
    const parsed = reportRowSchema.array().safeParse(JSON.parse(text));
    if (!parsed.success) continue; // not a part of rows: verification reports it if it holds an id
    const kept = parsed.data.filter((r) => !callIds.has(r.callId));
    await out.put(o.key, JSON.stringify(kept), { contentType: 'application/json' });
    changed++;
  }
  const keys = batchReportKeys(folder);
  const found = await out.read(keys.json);
  if (!found) return changed;
  const report = JSON.parse(found.body.toString('utf8')) as BatchReport & {
    statusCounts?: Record<string, number>;
  };
  const rows: ReportRow[] = report.rows.filter((r) => !callIds.has(r.callId));
  if (rows.length !== report.rows.length) {
    await out.put(keys.json, JSON.stringify({ ...report, statusCounts: countRows(rows), rows }, null, 2), {
      contentType: 'application/json',
    });
    await out.put(keys.csv, reportCsv(rows), { contentType: 'text/csv; charset=utf-8' });
    changed += 2;
  } else {
    // report.json holds none of them; the CSV may still (an interrupted earlier rewrite).
    const csv = await out.read(keys.csv);
    if (csv && [...callIds].some((id) => mentions(csv.body.toString('utf8'), id))) {
      await out.put(keys.csv, reportCsv(rows), { contentType: 'text/csv; charset=utf-8' });
      changed++;
    }
  }
  const html = await out.read(keys.html);
  if (html && [...callIds].some((id) => mentions(html.body.toString('utf8'), id))) {
    // Drawn again from the report as it now is and the tables (the calls' rows are gone already).
    await pages.writeNightReport({
      output: places.output,
      batchId: report.batchId,
      reportPrefix: folder,
      tables: places.tables,
      days: [...new Set(rows.flatMap((r) => (r.dt ? [r.dt] : [])))].sort(),
    });
    changed++;
  }
  return changed;
}

/** The calls' workflow executions deleted from Temporal (history and visibility); per call, how many. */
async function deleteExecutions(temporal: Client, callIds: string[]): Promise<Record<string, number>> {
  const deleted: Record<string, number> = {};
  for (const callId of callIds) {
    // Listed whole first: deleting while paging through the same listing could skip some.
    const found: { workflowId: string; runId: string }[] = [];
    for await (const wf of temporal.workflow.list({ query: executionsOf(callId) }))
      found.push({ workflowId: wf.workflowId, runId: wf.runId });
    let n = 0;
    for (const wf of found) {
      heartbeat({ call: callId });
      await temporal.workflowService
        .deleteWorkflowExecution({
          namespace: temporal.options.namespace,
          workflowExecution: { workflowId: wf.workflowId, runId: wf.runId },
        })
        .catch((err: { code?: number }) => {
          // NOT_FOUND: deleted already (an earlier attempt); visibility catches up.
          if (err.code !== 5) throw err;
        });
      n++;
    }
    deleted[callId] = n;
  }
  return deleted;
}

/** What remains of the calls after an erasure, listed and read back: nothing, once it is done. */
async function leftAfterErasure(
  store: ObjectStore,
  temporal: Client | undefined,
  input: VerifyInput,
): Promise<string[]> {
  const left: string[] = [];
  const whole = !input.onlyKinds;
  const holdings = await callHoldings(store, input.places, input.callIds, { reports: whole });
  for (const h of holdings) {
    const objects = h.objects.filter((o) => !input.onlyKinds || input.onlyKinds.includes(o.kind));
    if (objects.length) left.push(`${h.callId}: ${objects.length} object(s) (${objects[0]!.kind})`);
    if (whole && h.shared.length) left.push(`${h.callId}: ${h.shared.length} report or table file(s)`);
  }
  if (whole) {
    const out = onBucket(store, input.places.tables.bucket);
    left.push(...(await rowsLeft(out, input.places.tables, input.days, new Set(input.callIds))));
    if (temporal)
      for (const callId of input.callIds) {
        const { count } = await temporal.workflow.count(executionsOf(callId));
        if (count > 0) left.push(`${callId}: ${count} workflow execution(s) in Temporal's visibility`);
      }
  }
  return left;
}

/** Each call's own objects deleted (see the file's comment); counts by kind per call. */
async function deleteCallObjects(
  store: ObjectStore,
  input: ForgetObjectsInput,
): Promise<Record<string, ObjectCounts>> {
  const holdings = await callHoldings(store, input.places, input.callIds, {
    recordings: input.recordings,
    reports: false,
  });
  const counts: Record<string, ObjectCounts> = {};
  for (const h of holdings) {
    heartbeat({ call: h.callId });
    // Table files and locators go with the rows, under the day's lease.
    const objects = h.objects
      .filter((o) => o.kind !== 'table-file' && o.kind !== 'index')
      .filter((o) => !input.onlyKinds || input.onlyKinds.includes(o.kind));
    for (const step of [0, 1, 2]) {
      const now = objects.filter((o) => deleteOrder(o, input.places.output) === step);
      for (const bucket of new Set(now.map((o) => o.bucket)))
        await deleteNamed(
          onBucket(store, bucket),
          bucket,
          now.filter((o) => o.bucket === bucket).map((o) => o.key),
        );
    }
    // The recording is found through result.json, gone now: read back here.
    for (const o of objects.filter((x) => x.kind === 'recording'))
      if (await onBucket(store, o.bucket).exists(o.key))
        throw new ForgetIncompleteError(`${namedKey(o.bucket, o.key)} is still there after its delete`);
    const byKind: ObjectCounts = {};
    for (const o of objects) byKind[o.kind] = (byKind[o.kind] ?? 0) + 1;
    counts[h.callId] = byKind;
  }
  return counts;
}

export function createLifecycleActivities({ store, temporal, lease }: LifecycleActivityDeps) {
  const on = (bucket: string) => onBucket(store, bucket);
  const leaseOptions = (what: string): LeaseOptions => ({ ...lease, what, onWait: () => heartbeat() });

  return {
    /** Each call's own objects deleted (see the file's comment); counts by kind per call. */
    async forgetObjects(input: ForgetObjectsInput): Promise<Record<string, ObjectCounts>> {
      return deleteCallObjects(store, input);
    },

    /** The calls' rows out of every table of their days, each day under its lease; then their locators. */
    async forgetTableRows(input: ForgetTableRowsInput): Promise<ForgetTableRowsOutput> {
      const tables = input.places.tables;
      const out = on(tables.bucket);
      const byDay = new Map<string, Set<string>>();
      const located: string[] = [];
      for (const callId of input.callIds) {
        const locator = await readLocator(out, tables, callId);
        if (!locator) continue;
        located.push(callId);
        const set = byDay.get(locator.dt) ?? new Set<string>();
        set.add(callId);
        byDay.set(locator.dt, set);
      }
      const rows: ForgetTableRowsOutput['rows'] = {};
      for (const [dt, ids] of [...byDay].sort(([a], [b]) => a.localeCompare(b))) {
        await withLeases(out, [tableLeaseKey(tables, dt)], leaseOptions(`erasure in ${dt}`), async (keep) => {
          await removeRowsOfDay(out, tables, dt, ids, rows, keep);
          await keep();
          // Locators last: a retry after a crash above still knows the day.
          await deleteNamed(
            out,
            out.bucket,
            [...ids].map((id) => callLocatorKey(tables, id)),
          );
        });
      }
      return { rows, days: [...byDay.keys()].sort() };
    },

    /** The calls' lines out of every batch report; per call, how many report files held it. */
    async forgetReportLines(input: { callIds: string[]; places: Places }): Promise<Record<string, number>> {
      const held = await reportsHolding(store, input.places, input.callIds);
      const folders = new Set<string>();
      const perCall: Record<string, number> = {};
      for (const [callId, objects] of held) {
        perCall[callId] = objects.length;
        for (const o of objects) {
          const folder = reportFolderOf(o.key);
          if (folder) folders.add(folder);
        }
      }
      const ids = new Set(input.callIds);
      for (const folder of [...folders].sort()) {
        heartbeat({ folder });
        await rewriteReport(store, input.places, folder, ids);
      }
      return perCall;
    },

    /** The calls' workflow executions deleted from Temporal (history and visibility); per call, how many. */
    async forgetExecutions(input: { callIds: string[] }): Promise<Record<string, number>> {
      return temporal ? deleteExecutions(temporal, input.callIds) : {};
    },

    /** Lists and reads back: nothing of the calls may remain (retried while visibility catches up). */
    async verifyForgotten(input: VerifyInput): Promise<{ verified: true }> {
      const left = await leftAfterErasure(store, temporal, input);
      if (left.length) throw new ForgetIncompleteError(`still there after the erasure: ${left.join('; ')}`);
      return { verified: true };
    },

    /** The erasures retention asks for now (activities/lifecycle/retention.ts). */
    retentionRequests: (input: RetentionInput) => retentionRequests(store, input),

    /** The audit record, under `audit/<reason>/<requestId>.json` of the output bucket. */
    async writeAudit(input: { places: Places; record: AuditRecord }): Promise<string> {
      const key = auditKey(input.record.reason, input.record.requestId);
      // The first record of a request stands: a repeat that found nothing must not hide what went.
      await on(input.places.output.bucket).putIf(
        key,
        JSON.stringify(input.record, null, 2),
        { ifNoneMatch: '*' },
        {
          contentType: 'application/json',
        },
      );
      return key;
    },
  };
}

export type LifecycleActivities = ReturnType<typeof createLifecycleActivities>;
