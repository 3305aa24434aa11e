/**
 * The batch report: rows accumulated in small part objects in S3 (one per listed page for skipped and
 * missing calls, one per run for the calls it started), merged into `report.json` and `report.csv`.
 * Pure formatting here; the activities do the I/O.
 */
import { REPORT_COLUMNS, type BackfillCounters, type ReportRow } from '../../schemas/backfill.ts';
import { roundThousandths } from '../../schemas/units.ts';
import { toCsv } from '../csv-output.ts';
import type { BatchCost } from '../cost/batch-cost.ts';

/** report.csv: numbers to the thousandth; text cells a spreadsheet would run are neutralised (csv-output.ts). */
export function reportCsv(rows: ReportRow[]): string {
  return toCsv(
    REPORT_COLUMNS,
    rows.map((row) => REPORT_COLUMNS.map((c) => row[c])),
    { number: (n) => String(roundThousandths(n)) },
  );
}

/** Rows in a stable order (source key); when a call appears twice (a re-listed page), the last wins. */
export function mergeRows(parts: ReportRow[][]): ReportRow[] {
  const byCall = new Map<string, ReportRow>();
  for (const part of parts) for (const row of part) byCall.set(row.callId, row);
  return [...byCall.values()].sort((a, b) => a.source.localeCompare(b.source));
}

export interface BatchReport {
  batchId: string;
  source: string;
  output: string;
  startedAt: string;
  finishedAt: string;
  status: string;
  runs: number;
  counters: BackfillCounters;
  audioHours: number;
  rows: ReportRow[];
  /** What the batch cost (activities/cost/batch-cost.ts); absent from reports written before it. */
  cost?: BatchCost;
}

/** Counters recomputed from the rows (the report is the record; the workflow's counters are progress). */
export function countRows(rows: ReportRow[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of rows) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}
