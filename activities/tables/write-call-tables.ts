/**
 * `writeCallTables`: the call's rows go into a file of their own in the day's partition, and any older
 * rows of the call elsewhere (another day after its date changed, a compacted part) are removed, under
 * the leases of both days.
 */
import { resultDocumentSchema, type ResultDocument } from '../../schemas/result.ts';
import { callTableFileKey, tableLeaseKey, type TablesLocation } from '../../schemas/call-keys.ts';
import { TABLE_NAMES, type TableName, type TableRow } from '../../schemas/tables.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import type { CallIdMode } from '../../schemas/config.ts';
import { withLeases, type LeaseOptions } from './partition-lease.ts';
import { callRows } from './rows.ts';
import { readLocator, writeLocator, type CallLocator } from './call-locator.ts';
import { removeCall, writeRows } from './table-files.ts';

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

/** The call's new rows, and where they go. */
interface CallWrite {
  input: WriteCallTablesInput;
  dt: string;
  rows: Record<TableName, TableRow[]>;
  processedAt: Date;
}

async function readResult(results: ObjectStore, input: WriteCallTablesInput): Promise<ResultDocument> {
  const result = resultDocumentSchema.parse(JSON.parse(await results.getText(input.result.key)));
  if (result.callId !== input.callId) {
    throw new Error(`${input.result.key} is call ${result.callId}, not ${input.callId}`);
  }
  return result;
}

/**
 * Under the leases: the new rows written, older ones removed, and the locator last. `previous` is the
 * locator as read under the leases (a compaction may have moved the rows since any earlier read).
 */
async function replaceCallRows(
  out: ObjectStore,
  { input, dt, rows, processedAt }: CallWrite,
  previous: CallLocator | undefined,
  keep: () => Promise<void>,
): Promise<WriteCallTablesOutput> {
  const files: Partial<Record<TableName, string>> = {};
  const replaced: string[] = [];
  for (const table of TABLE_NAMES) {
    const key = callTableFileKey(input.tables, table, dt, input.callId);
    if (rows[table].length > 0) {
      await writeRows(out, table, key, rows[table]);
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
  await writeLocator(out, input.tables, {
    callId: input.callId,
    dt,
    files,
    processedAt: processedAt.toISOString(),
  });
  return {
    dt,
    files,
    rows: {
      calls: rows.calls.length,
      utterances: rows.utterances.length,
      personal_values: rows.personal_values.length,
    },
    replaced,
  };
}

/** The call's rows in every table, replacing any older version of them. */
export async function writeCallTables(
  out: ObjectStore,
  results: ObjectStore,
  input: WriteCallTablesInput,
  leaseOptions: (what: string) => LeaseOptions,
  callIds: CallIdMode = 'auto',
): Promise<WriteCallTablesOutput> {
  const result = await readResult(results, input);
  const { start, rows, processedAt } = callRows(result, input.result.key, input.tables.timeZone, callIds);
  // A rescore keeps the call in its day, which only its locator knows; a call's write goes to its start's
  // day, and its locator is read once, under that day's lease: a call seen in another day (its date
  // changed) is written again under both days' leases.
  const before = input.keepDay ? await readLocator(out, input.tables, input.callId) : undefined;
  const dt = input.keepDay && before ? before.dt : start.dt;
  const days = new Set([dt, ...(before ? [before.dt] : [])]);
  for (;;) {
    const done = await withLeases(
      out,
      [...days].map((d) => tableLeaseKey(input.tables, d)),
      leaseOptions(`write of call ${input.callId}`),
      async (keep) => {
        const previous = await readLocator(out, input.tables, input.callId);
        if (previous && !days.has(previous.dt)) return { otherDay: previous.dt };
        return replaceCallRows(out, { input, dt, rows, processedAt }, previous, keep);
      },
    );
    if (!('otherDay' in done)) return done;
    days.add(done.otherDay);
  }
}
