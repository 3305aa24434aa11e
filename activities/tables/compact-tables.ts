/**
 * `compactTables`: each day a batch touched is rewritten as a few parts (one per
 * {@link TABLE_PART_MAX_ROWS} rows), keeping the newest version of each call, so a partition is not one
 * tiny file per call forever. Locators are moved first and the inputs deleted last: a crash in between
 * leaves duplicates a retry folds again, never a locator naming a deleted file.
 */
import pLimit from 'p-limit';
import {
  partTableFileKey,
  partitionDayOf,
  tableLeaseKey,
  tablePartitionPrefix,
  isCallTableFile,
  type TablesLocation,
} from '../../schemas/call-keys.ts';
import { TABLE_NAMES, type TableName, type TableRow } from '../../schemas/tables.ts';
import { TABLE_PART_MAX_ROWS } from '../../schemas/limits.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { withLeases, type LeaseOptions } from './partition-lease.ts';
import { readLocator, writeLocator } from './call-locator.ts';
import { listParquet, readRows, writeRows } from './table-files.ts';

/** Locator reads and writes in flight during a compaction. */
const LOCATOR_CONCURRENCY = 16;

export interface CompactTablesInput {
  tables: TablesLocation;
  /** Days (partitions) to compact, `YYYY-MM-DD`. */
  days: string[];
}

interface CompactedTable {
  filesBefore: number;
  filesAfter: number;
  rows: number;
  /** Rows of older versions of a call dropped. */
  dropped: number;
}

export interface CompactTablesOutput {
  days: { dt: string; tables: Record<TableName, CompactedTable> }[];
}

/** One version of a call's rows in a table: its processed_at (epoch ms) and the rows. */
interface CallVersion {
  at: number;
  rows: TableRow[];
}

/** One day's compaction under its lease. */
interface DayCompaction {
  out: ObjectStore;
  tables: TablesLocation;
  dt: string;
  /** Names this compaction's parts apart from any earlier (crashed) one's. */
  compactionId: string;
  keep: () => Promise<void>;
  heartbeat: (details?: unknown) => void;
  /** Per call, per table: the part that now holds its rows. */
  placed: Map<string, { processedAt: string; files: Partial<Record<TableName, string>> }>;
}

function groupByCall(rows: TableRow[]): Map<string, TableRow[]> {
  const groups = new Map<string, TableRow[]>();
  for (const row of rows) {
    const id = String(row.call_id);
    const group = groups.get(id);
    if (group) group.push(row);
    else groups.set(id, [row]);
  }
  return groups;
}

/**
 * The newest version of each call: the rows with its largest processed_at (a tie is the same version
 * read twice, e.g. a part a crashed compaction wrote beside its inputs). Also counts the rows read.
 */
async function newestVersions(
  job: DayCompaction,
  table: TableName,
  keys: string[],
): Promise<{ byCall: Map<string, CallVersion>; read: number }> {
  const byCall = new Map<string, CallVersion>();
  let read = 0;
  for (const key of keys) {
    await job.keep();
    job.heartbeat({ dt: job.dt, table, key });
    const rows = (await readRows(job.out, table, key)) ?? [];
    read += rows.length;
    for (const [id, group] of groupByCall(rows)) {
      const at = (group[0]!.processed_at as Date).getTime();
      const current = byCall.get(id);
      if (!current || at > current.at) byCall.set(id, { at, rows: group });
    }
  }
  return { byCall, read };
}

/** The calls in id order, packed into parts of at most TABLE_PART_MAX_ROWS rows; records where each went. */
function packParts(
  job: DayCompaction,
  table: TableName,
  byCall: Map<string, CallVersion>,
): { key: string; rows: TableRow[] }[] {
  const partKey = (n: number) => partTableFileKey(job.tables, table, job.dt, job.compactionId, n);
  const calls = [...byCall.entries()].sort(([a], [b]) => a.localeCompare(b));
  const parts: { key: string; rows: TableRow[] }[] = [];
  let part: TableRow[] = [];
  const flush = () => {
    if (part.length === 0) return;
    parts.push({ key: partKey(parts.length), rows: part });
    part = [];
  };
  for (const [id, { at, rows }] of calls) {
    if (part.length > 0 && part.length + rows.length > TABLE_PART_MAX_ROWS) flush();
    part.push(...rows);
    const entry = job.placed.get(id) ?? { processedAt: new Date(at).toISOString(), files: {} };
    entry.files[table] = partKey(parts.length);
    job.placed.set(id, entry);
  }
  flush();
  return parts;
}

/** One table of the day rewritten as parts; returns its summary and the files the parts replace. */
async function compactTable(
  job: DayCompaction,
  table: TableName,
): Promise<{ summary: CompactedTable; inputs: string[] }> {
  const keys = await listParquet(job.out, tablePartitionPrefix(job.tables, table, job.dt));
  if (keys.length <= 1 && !keys.some(isCallTableFile)) {
    return {
      summary: { filesBefore: keys.length, filesAfter: keys.length, rows: 0, dropped: 0 },
      inputs: [],
    };
  }
  const { byCall, read } = await newestVersions(job, table, keys);
  const parts = packParts(job, table, byCall);
  for (const p of parts) {
    await job.keep();
    await writeRows(job.out, table, p.key, p.rows);
  }
  const kept = parts.reduce((n, p) => n + p.rows.length, 0);
  return {
    summary: { filesBefore: keys.length, filesAfter: parts.length, rows: kept, dropped: read - kept },
    inputs: keys,
  };
}

/** Points each moved call's locator at its parts, unless the call was written to another day since. */
async function updateLocators(job: DayCompaction): Promise<void> {
  const limit = pLimit(LOCATOR_CONCURRENCY);
  await Promise.all(
    [...job.placed.entries()].map(([callId, entry]) =>
      limit(async () => {
        const previous = await readLocator(job.out, job.tables, callId);
        // A call written to another day since (under that day's lease, and this one's) stays there.
        if (previous && previous.dt !== job.dt) return;
        await writeLocator(job.out, job.tables, {
          callId,
          dt: job.dt,
          files: { ...previous?.files, ...entry.files },
          processedAt: entry.processedAt,
        });
      }),
    ),
  );
}

async function compactDay(
  job: Omit<DayCompaction, 'compactionId' | 'placed'>,
): Promise<Record<TableName, CompactedTable>> {
  const compactionId = `${new Date().toISOString().replace(/[-:.]/g, '')}-${Math.random().toString(16).slice(2, 10)}`;
  const day: DayCompaction = { ...job, compactionId, placed: new Map() };
  const summary = {} as Record<TableName, CompactedTable>;
  const inputs: string[] = [];
  for (const table of TABLE_NAMES) {
    const compacted = await compactTable(day, table);
    summary[table] = compacted.summary;
    inputs.push(...compacted.inputs);
  }
  // Locators first, inputs last (see the file's comment).
  await updateLocators(day);
  await day.keep();
  await day.out.deleteKeys(inputs.filter((k) => partitionDayOf(k) === day.dt));
  return summary;
}

/** Each day's partitions rewritten as a few parts, the newest version of every call kept. */
export async function compactTables(
  out: ObjectStore,
  input: CompactTablesInput,
  leaseOptions: (what: string) => LeaseOptions,
  heartbeat: (details?: unknown) => void,
): Promise<CompactTablesOutput> {
  const days: CompactTablesOutput['days'] = [];
  for (const dt of [...new Set(input.days)].sort()) {
    const compacted = await withLeases(
      out,
      [tableLeaseKey(input.tables, dt)],
      leaseOptions(`compaction of ${dt}`),
      (keep) => compactDay({ out, tables: input.tables, dt, keep, heartbeat }),
    );
    days.push({ dt, tables: compacted });
  }
  return { days };
}
