/** The batch's report: each run's part written as it goes, and every part merged at the end. */
import pLimit from 'p-limit';
import type { ObjectStore } from '../storage/object-store.ts';
import { batchReportKeys } from '../../schemas/call-keys.ts';
import { reportRowSchema, type ReportRow } from '../../schemas/backfill.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import { countRows, mergeRows, reportCsv, type BatchReport } from './report.ts';
import { HEAD_CONCURRENCY, listAll, putJson } from './bucket-io.ts';
import type { Client } from '@temporalio/client';
import type { Prices } from '../../schemas/cost.ts';
import { batchCost } from '../cost/batch-cost.ts';
import { activityContext } from '../activity-context.ts';

export interface WriteReportInput {
  output: OutputLocation;
  reportPrefix: string;
  partsPrefix: string;
  header: Omit<BatchReport, 'rows' | 'finishedAt' | 'cost'>;
}

/** What the report's cost section reads: the calls' histories, and the deployment's prices. */
export interface ReportCostDeps {
  temporal?: Client;
  prices?: Prices;
}

export interface WrittenReport {
  jsonKey: string;
  csvKey: string;
  rows: number;
  days: string[];
}

/** Every part's rows (the JSON files right under the prefix: not the manifest pages below it). */
async function readReportParts(
  store: ObjectStore,
  bucket: string,
  partsPrefix: string,
): Promise<ReportRow[][]> {
  const parts = (await listAll(store, bucket, partsPrefix)).filter((o) => o.key.endsWith('.json'));
  const limit = pLimit(HEAD_CONCURRENCY);
  return Promise.all(
    parts
      .filter((p) => !p.key.slice(partsPrefix.length).includes('/'))
      .map((p) =>
        limit(async () =>
          reportRowSchema.array().parse(JSON.parse(await store.withBucket(bucket).getText(p.key))),
        ),
      ),
  );
}

/** Merges every part into report.json and report.csv beside them. */
export async function writeBatchReport(
  store: ObjectStore,
  input: WriteReportInput,
  costDeps: ReportCostDeps = {},
): Promise<WrittenReport> {
  const bucket = input.output.bucket;
  const rows = mergeRows(await readReportParts(store, bucket, input.partsPrefix));
  const cost = await batchCost({
    store,
    bucket,
    rows,
    ...costDeps,
    heartbeat: () => activityContext()?.heartbeat(),
  });
  const report: BatchReport & { statusCounts: Record<string, number> } = {
    ...input.header,
    finishedAt: new Date().toISOString(),
    statusCounts: countRows(rows),
    cost,
    rows,
  };
  const keys = batchReportKeys(input.reportPrefix);
  await putJson(store, bucket, keys.json, report);
  await store.withBucket(bucket).put(keys.csv, reportCsv(rows), { contentType: 'text/csv; charset=utf-8' });
  // The days whose table partitions the batch's calls wrote: compacted next.
  const days = [...new Set(rows.flatMap((r) => (r.dt ? [r.dt] : [])))].sort();
  return { jsonKey: keys.json, csvKey: keys.csv, rows: rows.length, days };
}
