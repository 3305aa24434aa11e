/**
 * The night report's activity (the call page is written with result.json, activities/storage/result-activities.ts):
 * reads the batch's report.json and its calls' rows from the `calls` table (the days the batch wrote,
 * compacted just before), renders report.html (night-report.ts) and writes it beside report.json.
 * Object storage and a few Parquet files: it runs beside the batch's other activities.
 */
import {
  batchReportKeys,
  callPageFromReport,
  tablePartitionPrefix,
  type TablesLocation,
} from '../../schemas/call-keys.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import { CALLS_TABLE, type TableRow } from '../../schemas/tables.ts';
import type { BatchReport } from '../backfill/report.ts';
import { listObjectsUnder, onBucket, type ObjectStore } from '../storage/object-store.ts';
import { decodeTable } from '../tables/parquet.ts';
import { renderNightReport } from './night-report.ts';
import { daysBetween, eventStore } from '../events/event-store.ts';

/** Event deliveries given up this long before a batch began still show in its night report. */
const DELIVERY_FAILURES_LOOKBACK_MS = 86_400_000;

export interface WriteNightReportInput {
  output: OutputLocation;
  batchId: string;
  reportPrefix: string;
  tables: TablesLocation;
  /** The days the batch's calls wrote (report.json's rows' `dt`). */
  days: string[];
}

export interface WriteNightReportOutput {
  key: string;
  bytes: number;
  calls: number;
}

export function createPageActivities({ store }: { store: ObjectStore }) {
  const on = (bucket: string) => onBucket(store, bucket);

  /** The rows of `calls` for the given days, the newest version of each call. */
  async function callsOf(
    tables: TablesLocation,
    days: string[],
    wanted: Set<string> | undefined,
  ): Promise<Map<string, TableRow>> {
    const out = on(tables.bucket);
    const calls = new Map<string, TableRow>();
    for (const dt of days) {
      const objects = await listObjectsUnder(out, tablePartitionPrefix(tables, CALLS_TABLE.name, dt));
      for (const o of objects.filter((x) => x.key.endsWith('.parquet'))) {
        for (const row of await decodeTable(CALLS_TABLE, await out.getBuffer(o.key))) {
          const id = String(row.call_id);
          const seen = calls.get(id);
          if (wanted && !wanted.has(id)) continue;
          if (!seen || (row.processed_at as Date) > (seen.processed_at as Date)) calls.set(id, row);
        }
      }
    }
    return calls;
  }

  /** The calendar day before the earliest of `days` (YYYY-MM-DD), or none. */
  function dayBefore(days: readonly string[]): string | undefined {
    const first = [...days].sort()[0];
    if (!first || !/^\d{4}-\d{2}-\d{2}$/.test(first)) return undefined;
    return new Date(Date.parse(`${first}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  }

  return {
    async writeNightReport(input: WriteNightReportInput): Promise<WriteNightReportOutput> {
      const out = on(input.output.bucket);
      const keys = batchReportKeys(input.reportPrefix);
      const report = JSON.parse(await out.getText(keys.json)) as BatchReport;
      const calls = await callsOf(input.tables, input.days, new Set(report.rows.map((r) => r.callId)));
      // The day before the night's first: its calls are what the reasons' trend compares with.
      const before = dayBefore(input.days);
      const previous = before ? await callsOf(input.tables, [before], undefined) : new Map();
      // Deliveries given up since a day before the batch began (a receiver down overnight shows here).
      const since = new Date(Date.parse(report.startedAt) - DELIVERY_FAILURES_LOOKBACK_MS).toISOString();
      const deliveryFailures = (
        await eventStore(store)
          .failures(input.output, daysBetween(since, new Date().toISOString()))
          .catch(() => [])
      ).filter((f) => f.gaveUpAt >= since);
      const html = renderNightReport(report, calls, {
        timeZone: input.tables.timeZone,
        pageHref: (callId) => callPageFromReport(input.output, input.batchId, callId),
        deliveryFailures,
        previousCalls: previous,
      });
      await out.put(keys.html, html, { contentType: 'text/html; charset=utf-8' });
      return { key: keys.html, bytes: Buffer.byteLength(html), calls: calls.size };
    },
  };
}

export type PageActivities = ReturnType<typeof createPageActivities>;
