/** A rescore's report: the pages' rows merged into `report.json` and `report.csv` beside them. */
import type { OutputLocation } from '../../schemas/recording.ts';
import { rescoreRowSchema, type RescoreCounters, type RescoreRow } from '../../schemas/rescore.ts';
import { listObjectsUnder, type ObjectStore } from '../storage/object-store.ts';
import { toCsv } from '../csv-output.ts';

export interface WriteRescoreReportInput {
  output: OutputLocation;
  reportPrefix: string;
  partsPrefix: string;
  header: Record<string, unknown> & { counters: RescoreCounters };
}

const JSON_TYPE = { contentType: 'application/json; charset=utf-8' };
const CSV_COLUMNS = ['callId', 'status', 'categories', 'score', 'max', 'reason', 'resultKey'] as const;

/** Every page part's rows (`<partsPrefix>page-<n>.json`, nothing deeper), by call id. */
async function readParts(bucket: ObjectStore, partsPrefix: string): Promise<RescoreRow[]> {
  const rows: RescoreRow[] = [];
  for (const o of await listObjectsUnder(bucket, partsPrefix)) {
    if (!/\/page-\d+\.json$/.test(o.key) || o.key.slice(partsPrefix.length).includes('/')) continue;
    rows.push(...rescoreRowSchema.array().parse(JSON.parse(await bucket.getText(o.key))));
  }
  return rows.sort((a, b) => a.callId.localeCompare(b.callId));
}

/** Categories space-separated; text cells a spreadsheet would run are neutralised (csv-output.ts). */
function rescoreCsv(rows: readonly RescoreRow[]): string {
  return toCsv(
    CSV_COLUMNS,
    rows.map((r) => CSV_COLUMNS.map((c) => (Array.isArray(r[c]) ? r[c].join(' ') : r[c]))),
  );
}

/** Merges the pages' rows into report.json and report.csv beside them. */
export async function writeRescoreReport(
  store: ObjectStore,
  input: WriteRescoreReportInput,
): Promise<{ jsonKey: string; csvKey: string; rows: number }> {
  const bucket = store.withBucket(input.output.bucket);
  const rows = await readParts(bucket, input.partsPrefix);
  const jsonKey = `${input.reportPrefix}report.json`;
  const csvKey = `${input.reportPrefix}report.csv`;
  const report = { ...input.header, finishedAt: new Date().toISOString(), rows };
  await bucket.put(jsonKey, JSON.stringify(report, null, 2), JSON_TYPE);
  await bucket.put(csvKey, rescoreCsv(rows), { contentType: 'text/csv; charset=utf-8' });
  return { jsonKey, csvKey, rows: rows.length };
}
