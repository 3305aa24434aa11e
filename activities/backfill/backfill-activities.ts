/**
 * The batch's own activities (task queue `callpipe`, beside the workflows: object-storage listing and
 * small writes, no CPU-heavy work): prepare a manifest, list one page of recordings (filters and the
 * done-check in bulk, so a done call starts no child), and write the report's parts and the report.
 * Rows go to S3 here, never into the workflow's state.
 */
import { reportedSource, type CallIdRule } from '../storage/call-id.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import type { ReportRow } from '../../schemas/backfill.ts';
import { putJson } from './bucket-io.ts';
import { prepareManifest, type PrepareManifestInput } from './prepare-manifest.ts';
import { listBackfillPage, type ListPageInput } from './list-page.ts';
import { writeBatchReport, type ReportCostDeps, type WriteReportInput } from './write-report.ts';

export type { PrepareManifestInput, ListPageInput, WriteReportInput };

export interface BackfillActivityDeps {
  store: ObjectStore;
  /** How call ids are made from file names (config `callIds`; activities/storage/call-id.ts). */
  callIds?: CallIdRule;
  /** The report's cost section: a Temporal client to read the calls' histories, and the prices. */
  cost?: ReportCostDeps;
}

export function createBackfillActivities({ store, callIds = { mode: 'auto' }, cost }: BackfillActivityDeps) {
  return {
    /** Parses the CSV once and stores it as pages of entries, so each run reads only its pages. */
    prepareManifest: (input: PrepareManifestInput) => prepareManifest(store, input, callIds),

    /** One page: list, filter, check done calls in bulk; returns only the calls to start. */
    listBackfillPage: (input: ListPageInput) => listBackfillPage(store, input, callIds),

    /** One part of the report: the rows of the calls one run started (small, once per run). */
    async writeReportPart(input: { bucket: string; key: string; rows: ReportRow[] }): Promise<void> {
      const rows = input.rows.map((r) => ({ ...r, source: reportedSource(r.source, callIds) }));
      await putJson(store, input.bucket, input.key, rows);
    },

    /** Merges every part into report.json and report.csv beside them. */
    writeBatchReport: (input: WriteReportInput) => writeBatchReport(store, input, cost),
  };
}

export type BackfillActivities = ReturnType<typeof createBackfillActivities>;
