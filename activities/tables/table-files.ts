/** The Parquet files of a table's partitions: read, listed, and a call's rows taken out of one. */
import { isCallTableFile } from '../../schemas/call-keys.ts';
import { TABLES, type TableName, type TableRow } from '../../schemas/tables.ts';
import { listObjectsUnder, type ObjectStore } from '../storage/object-store.ts';
import { decodeTable, encodeTable } from './parquet.ts';

const PARQUET = { contentType: 'application/vnd.apache.parquet' };

export async function readRows(
  out: ObjectStore,
  table: TableName,
  key: string,
): Promise<TableRow[] | undefined> {
  const found = await out.read(key);
  return found ? decodeTable(TABLES[table], found.body) : undefined;
}

export async function writeRows(
  out: ObjectStore,
  table: TableName,
  key: string,
  rows: TableRow[],
): Promise<void> {
  await out.put(key, encodeTable(TABLES[table], rows), PARQUET);
}

/** Removes a call's rows from a file that holds other calls' too (rewritten in place), or deletes it. */
export async function removeCall(
  out: ObjectStore,
  table: TableName,
  key: string,
  callId: string,
): Promise<void> {
  if (isCallTableFile(key)) {
    await out.deleteKeys([key]);
    return;
  }
  const rows = await readRows(out, table, key);
  if (!rows) return;
  const kept = rows.filter((r) => r.call_id !== callId);
  if (kept.length === rows.length) return;
  if (kept.length === 0) await out.deleteKeys([key]);
  else await writeRows(out, table, key, kept);
}

/** The Parquet files under a prefix, in key order. */
export async function listParquet(out: ObjectStore, prefix: string): Promise<string[]> {
  const objects = await listObjectsUnder(out, prefix);
  return objects
    .map((o) => o.key)
    .filter((k) => k.endsWith('.parquet'))
    .sort();
}
