/**
 * The analysis tables' activities (issue 17; schemas/tables.ts for the columns):
 *
 * - `writeCallTables`, once a call's result.json is written: the call's rows go into a file of their
 *   own in the day's partition (`call-<callId>.parquet`, replaced by a re-run), and any older rows of
 *   the call elsewhere (another day after its date changed, a compacted part) are removed, so the call
 *   has exactly one set of rows in each table.
 * - `compactTables`, at the end of a batch: each day the batch touched is rewritten as a few parts
 *   (one per {@link TABLE_PART_MAX_ROWS} rows), keeping the newest version of each call, so a partition
 *   is not one tiny file per call forever.
 *
 * Where each call's rows are is kept in a small locator object per call (`<tables>_callpipe/calls/`),
 * and every change of a day's files holds that day's lease (partition-lease.ts), so a write and a
 * compaction of the same day never interleave. Both activities are idempotent: a retry after a crash
 * at any step converges to the same rows.
 */
import pLimit from 'p-limit';
import { resultDocumentSchema, type ResultDocument } from '../../schemas/result.ts';
import {
  callLocatorKey,
  callTableFileKey,
  isCallTableFile,
  partTableFileKey,
  partitionDayOf,
  tableLeaseKey,
  tablePartitionPrefix,
  type TablesLocation,
} from '../../schemas/call-keys.ts';
import { TABLE_NAMES, TABLES, type TableName, type TableRow } from '../../schemas/tables.ts';
import { TABLE_PART_MAX_ROWS } from '../../schemas/limits.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { activityContext } from '../activity-context.ts';
import { decodeTable, encodeTable } from './parquet.ts';
import { withLeases, type LeaseOptions } from './partition-lease.ts';
import { callRows } from './rows.ts';

const PARQUET = { contentType: 'application/vnd.apache.parquet' };
const JSON_TYPE = { contentType: 'application/json' };
/** Locator reads and writes in flight during a compaction. */
const LOCATOR_CONCURRENCY = 16;

/** Where a call's rows are: its day and, per table, the file that holds them. */
export interface CallLocator {
  callId: string;
  dt: string;
  files: Partial<Record<TableName, string>>;
  /** result.json's writtenAt of the rows (their version). */
  processedAt: string;
}

export interface WriteCallTablesInput {
  callId: string;
  /** The call's result.json. */
  result: { bucket: string; key: string };
  tables: TablesLocation;
  /** Keep the call in the day it is already in (a rescore: the call's start did not change). */
  keepDay?: boolean;
}

export interface WriteCallTablesOutput {
  /** The call's day: the partition its rows are in. */
  dt: string;
  files: Partial<Record<TableName, string>>;
  rows: Record<TableName, number>;
  /** Files an older version of the call's rows was removed from. */
  replaced: string[];
}

export interface CompactTablesInput {
  tables: TablesLocation;
  /** Days (partitions) to compact, `YYYY-MM-DD`. */
  days: string[];
}

export interface CompactedTable {
  filesBefore: number;
  filesAfter: number;
  rows: number;
  /** Rows of older versions of a call dropped. */
  dropped: number;
}

export interface CompactTablesOutput {
  days: { dt: string; tables: Record<TableName, CompactedTable> }[];
}

export interface TableActivityDeps {
  store: ObjectStore;
  /** Lease timings (tests shorten them). */
  lease?: Pick<LeaseOptions, 'ttlMs' | 'waitMs'>;
}

function heartbeat(details?: unknown): void {
  activityContext()?.heartbeat(details);
}

export function createTableActivities({ store, lease }: TableActivityDeps) {
  const on = (bucket: string) => (bucket === store.bucket ? store : store.withBucket(bucket));

  async function readLocator(out: ObjectStore, tables: TablesLocation, callId: string) {
    const found = await out.read(callLocatorKey(tables, callId));
    return found ? (JSON.parse(found.body.toString('utf8')) as CallLocator) : undefined;
  }

  async function readRows(out: ObjectStore, table: TableName, key: string): Promise<TableRow[] | undefined> {
    const found = await out.read(key);
    return found ? decodeTable(TABLES[table], found.body) : undefined;
  }

  /** Removes a call's rows from a file that holds other calls' too (rewritten in place), or deletes it. */
  async function removeCall(out: ObjectStore, table: TableName, key: string, callId: string): Promise<void> {
    if (isCallTableFile(key)) {
      await out.deleteKeys([key]);
      return;
    }
    const rows = await readRows(out, table, key);
    if (!rows) return;
    const kept = rows.filter((r) => r.call_id !== callId);
    if (kept.length === rows.length) return;
    if (kept.length === 0) await out.deleteKeys([key]);
    else await out.put(key, encodeTable(TABLES[table], kept), PARQUET);
  }

  const leaseOptions = (what: string): LeaseOptions => ({ ...lease, what, onWait: () => heartbeat() });

  return {
    /** The call's rows in every table, replacing any older version of them (see the file's comment). */
    async writeCallTables(input: WriteCallTablesInput): Promise<WriteCallTablesOutput> {
      const out = on(input.tables.bucket);
      const results = on(input.result.bucket);
      const result: ResultDocument = resultDocumentSchema.parse(
        JSON.parse(await results.getText(input.result.key)),
      );
      if (result.callId !== input.callId) {
        throw new Error(`${input.result.key} is call ${result.callId}, not ${input.callId}`);
      }
      const { start, rows, processedAt } = callRows(result, input.result.key, input.tables.timeZone);
      const before = await readLocator(out, input.tables, input.callId);
      const dt = input.keepDay && before ? before.dt : start.dt;
      const days = [dt, ...(before && before.dt !== dt ? [before.dt] : [])];
      return withLeases(
        out,
        days.map((d) => tableLeaseKey(input.tables, d)),
        leaseOptions(`write of call ${input.callId}`),
        async (keep) => {
          // Read again under the lease: a compaction may have moved the rows since.
          const previous = await readLocator(out, input.tables, input.callId);
          const files: Partial<Record<TableName, string>> = {};
          const replaced: string[] = [];
          for (const table of TABLE_NAMES) {
            const key = callTableFileKey(input.tables, table, dt, input.callId);
            if (rows[table].length > 0) {
              await out.put(key, encodeTable(TABLES[table], rows[table]), PARQUET);
              files[table] = key;
            }
            const old = previous?.files[table];
            if (old && old !== files[table]) {
              await keep();
              await removeCall(out, table, old, input.callId);
              replaced.push(old);
            }
          }
          await keep();
          const locator: CallLocator = {
            callId: input.callId,
            dt,
            files,
            processedAt: processedAt.toISOString(),
          };
          await out.put(callLocatorKey(input.tables, input.callId), JSON.stringify(locator), JSON_TYPE);
          return {
            dt,
            files,
            rows: { calls: rows.calls.length, utterances: rows.utterances.length },
            replaced,
          };
        },
      );
    },

    /** Each day's partitions rewritten as a few parts, the newest version of every call kept. */
    async compactTables(input: CompactTablesInput): Promise<CompactTablesOutput> {
      const out = on(input.tables.bucket);
      const days: CompactTablesOutput['days'] = [];
      for (const dt of [...new Set(input.days)].sort()) {
        const compacted = await withLeases(
          out,
          [tableLeaseKey(input.tables, dt)],
          leaseOptions(`compaction of ${dt}`),
          (keep) => compactDay(out, input.tables, dt, keep),
        );
        days.push({ dt, tables: compacted });
      }
      return { days };
    },
  };

  async function listParquet(out: ObjectStore, prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let next: string | undefined;
    do {
      const page = await out.listPage(prefix, next);
      keys.push(...page.objects.map((o) => o.key).filter((k) => k.endsWith('.parquet')));
      next = page.next;
    } while (next);
    return keys.sort();
  }

  async function compactDay(
    out: ObjectStore,
    tables: TablesLocation,
    dt: string,
    keep: () => Promise<void>,
  ): Promise<Record<TableName, CompactedTable>> {
    const compactionId = `${new Date().toISOString().replace(/[-:.]/g, '')}-${Math.random().toString(16).slice(2, 10)}`;
    const summary = {} as Record<TableName, CompactedTable>;
    const inputs: string[] = [];
    /** Per call, per table: the part that now holds its rows. */
    const placed = new Map<string, { processedAt: string; files: Partial<Record<TableName, string>> }>();
    for (const table of TABLE_NAMES) {
      const keys = await listParquet(out, tablePartitionPrefix(tables, table, dt));
      if (keys.length <= 1 && !keys.some(isCallTableFile)) {
        summary[table] = { filesBefore: keys.length, filesAfter: keys.length, rows: 0, dropped: 0 };
        continue;
      }
      // The newest version of each call: the rows with its largest processed_at (a tie is the same
      // version read twice, e.g. a part a crashed compaction wrote beside its inputs).
      const byCall = new Map<string, { at: number; rows: TableRow[] }>();
      let read = 0;
      for (const key of keys) {
        await keep();
        heartbeat({ dt, table, key });
        const rows = (await readRows(out, table, key)) ?? [];
        read += rows.length;
        const groups = new Map<string, TableRow[]>();
        for (const row of rows) {
          const id = String(row.call_id);
          const group = groups.get(id);
          if (group) group.push(row);
          else groups.set(id, [row]);
        }
        for (const [id, group] of groups) {
          const at = (group[0]!.processed_at as Date).getTime();
          const current = byCall.get(id);
          if (!current || at > current.at) byCall.set(id, { at, rows: group });
        }
      }
      const calls = [...byCall.entries()].sort(([a], [b]) => a.localeCompare(b));
      const parts: { key: string; rows: TableRow[] }[] = [];
      let part: TableRow[] = [];
      const flush = () => {
        if (part.length === 0) return;
        parts.push({ key: partTableFileKey(tables, table, dt, compactionId, parts.length), rows: part });
        part = [];
      };
      for (const [id, { at, rows }] of calls) {
        if (part.length > 0 && part.length + rows.length > TABLE_PART_MAX_ROWS) flush();
        part.push(...rows);
        const entry = placed.get(id) ?? { processedAt: new Date(at).toISOString(), files: {} };
        entry.files[table] = partTableFileKey(tables, table, dt, compactionId, parts.length);
        placed.set(id, entry);
      }
      flush();
      for (const p of parts) {
        await keep();
        await out.put(p.key, encodeTable(TABLES[table], p.rows), PARQUET);
      }
      const kept = parts.reduce((n, p) => n + p.rows.length, 0);
      summary[table] = {
        filesBefore: keys.length,
        filesAfter: parts.length,
        rows: kept,
        dropped: read - kept,
      };
      inputs.push(...keys);
    }
    // Locators first, inputs last: a crash in between leaves duplicates a retry folds again, never a
    // locator naming a deleted file.
    const limit = pLimit(LOCATOR_CONCURRENCY);
    await Promise.all(
      [...placed.entries()].map(([callId, entry]) =>
        limit(async () => {
          const previous = await readLocator(out, tables, callId);
          // A call written to another day since (under that day's lease, and this one's) stays there.
          if (previous && previous.dt !== dt) return;
          const locator: CallLocator = {
            callId,
            dt,
            files: { ...previous?.files, ...entry.files },
            processedAt: entry.processedAt,
          };
          await out.put(callLocatorKey(tables, callId), JSON.stringify(locator), JSON_TYPE);
        }),
      ),
    );
    await keep();
    await out.deleteKeys(inputs.filter((k) => partitionDayOf(k) === dt));
    return summary;
  }
}

export type TableActivities = ReturnType<typeof createTableActivities>;
