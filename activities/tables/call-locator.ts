/**
 * Where a call's rows are: a small locator object per call (`<tables>_callpipe/calls/`), read before a
 * write or a compaction moves the rows and written after, so a call has one set of rows in each table.
 */
import { callLocatorKey, type TablesLocation } from '../../schemas/call-keys.ts';
import type { TableName } from '../../schemas/tables.ts';
import type { ObjectStore } from '../storage/object-store.ts';

const JSON_TYPE = { contentType: 'application/json' };

/** Where a call's rows are: its day and, per table, the file that holds them. */
export interface CallLocator {
  callId: string;
  dt: string;
  files: Partial<Record<TableName, string>>;
  /** result.json's writtenAt of the rows (their version). */
  processedAt: string;
}

export async function readLocator(
  out: ObjectStore,
  tables: TablesLocation,
  callId: string,
): Promise<CallLocator | undefined> {
  const found = await out.read(callLocatorKey(tables, callId));
  return found ? (JSON.parse(found.body.toString('utf8')) as CallLocator) : undefined;
}

export async function writeLocator(
  out: ObjectStore,
  tables: TablesLocation,
  locator: CallLocator,
): Promise<void> {
  await out.put(callLocatorKey(tables, locator.callId), JSON.stringify(locator), JSON_TYPE);
}
