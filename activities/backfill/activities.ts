/**
 * The batch's own activities (task queue `callpipe`, beside the workflows: object-storage listing and
 * small writes, no CPU-heavy work): prepare a manifest, list one page of recordings (filters and the
 * done-check in bulk, so a done call starts no child), and write the report's parts and the report.
 * Rows go to S3 here, never into the workflow's state.
 */
import pLimit from 'p-limit';
import {
  isPermanentS3Error,
  s3StatusOf,
  type ObjectStore,
  type ObjectInfo,
} from '../storage/object-store.ts';
import { callIdOf, workflowIdOf } from '../storage/call-id.ts';
import { batchReportKeys, callOutputKeys } from '../../schemas/call-keys.ts';
import type {
  BackfillCursor,
  BackfillFilters,
  BackfillItem,
  BackfillPage,
  BackfillSource,
  ReportRow,
} from '../../schemas/backfill.ts';
import { reportRowSchema } from '../../schemas/backfill.ts';
import { manifestEntrySchema, type ManifestEntry } from '../../schemas/manifest.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import { filterReason, needsSniffing } from './filters.ts';
import { notARecording, SNIFF_BYTES } from '../media/sniff.ts';
import { ManifestError, parseManifest } from './manifest.ts';
import { failureOf } from '../failure-classifier.ts';
import { FAILURE } from '../../schemas/retry-table.ts';
import { countRows, mergeRows, reportCsv, type BatchReport } from './report.ts';

/** HEAD requests in flight per listing activity (done-checks and manifest lookups). */
const HEAD_CONCURRENCY = 16;

export interface BackfillActivityDeps {
  store: ObjectStore;
}

export interface PrepareManifestInput {
  source: Extract<BackfillSource, { kind: 'manifest' }>;
  /** Where the parsed pages go (JSON, one object per page). */
  pagesPrefix: string;
  outputBucket: string;
  pageSize: number;
}

export interface ListPageInput {
  source: BackfillSource;
  output: OutputLocation;
  filters: BackfillFilters;
  cursor: BackfillCursor;
  pageSize: number;
  redo: boolean;
  /** Skipped and missing rows of this page go to `<partsPrefix>page-<n>.json`. */
  partsPrefix: string;
  /** Manifest sources: where prepareManifest put the pages, and how many. */
  manifest?: { pagesPrefix: string; pages: number };
}

export interface WriteReportInput {
  output: OutputLocation;
  reportPrefix: string;
  partsPrefix: string;
  header: Omit<BatchReport, 'rows' | 'finishedAt'>;
}

const pageName = (n: number) => `page-${String(n).padStart(6, '0')}.json`;

export function createBackfillActivities({ store }: BackfillActivityDeps) {
  async function putJson(bucket: string, key: string, value: unknown): Promise<void> {
    await store.withBucket(bucket).put(key, JSON.stringify(value), { contentType: 'application/json' });
  }

  /** The first bytes of an object (a ranged GET). */
  async function headBytes(bucket: string, key: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await store.withBucket(bucket).getStream(key, { end: SNIFF_BYTES - 1 }))
      chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).subarray(0, SNIFF_BYTES);
  }

  async function listAll(bucket: string, prefix: string): Promise<ObjectInfo[]> {
    const out: ObjectInfo[] = [];
    let next: string | undefined;
    do {
      const page = await store.withBucket(bucket).listPage(prefix, next);
      out.push(...page.objects);
      next = page.next;
    } while (next);
    return out;
  }

  return {
    /** Parses the CSV once and stores it as pages of entries, so each run reads only its pages. */
    async prepareManifest(input: PrepareManifestInput): Promise<{ rows: number; pages: number }> {
      const text = await store.withBucket(input.source.bucket).getBuffer(input.source.key);
      let entries: ManifestEntry[];
      try {
        entries = parseManifest(text, input.source.bucket);
      } catch (err) {
        if (err instanceof ManifestError) {
          throw failureOf(FAILURE.ManifestError, err.message);
        }
        throw err;
      }
      // A row repeated (same object, same call id) is one call: the repeat is marked here, where every
      // row is seen, so pages far apart do not start it twice.
      const firstLine = new Map<string, number>();
      for (const e of entries) {
        const id = JSON.stringify([e.bucket, e.key, e.callId ?? '']);
        const first = firstLine.get(id);
        if (first === undefined) firstLine.set(id, e.line);
        else e.duplicateOf = first;
      }
      const pages = Math.ceil(entries.length / input.pageSize);
      const limit = pLimit(HEAD_CONCURRENCY);
      await Promise.all(
        Array.from({ length: pages }, (_, n) =>
          limit(() =>
            putJson(
              input.outputBucket,
              `${input.pagesPrefix}${pageName(n)}`,
              entries.slice(n * input.pageSize, (n + 1) * input.pageSize),
            ),
          ),
        ),
      );
      return { rows: entries.length, pages };
    },

    /** One page: list, filter, check done calls in bulk; returns only the calls to start. */
    async listBackfillPage(input: ListPageInput): Promise<BackfillPage> {
      const limit = pLimit(HEAD_CONCURRENCY);
      const rows: ReportRow[] = [];
      let candidates: (ManifestEntry & { info?: ObjectInfo; refused?: string })[];
      let cursor: BackfillCursor;

      if (input.source.kind === 'prefix') {
        const page = await store
          .withBucket(input.source.bucket)
          .listPage(input.source.prefix, input.cursor.token, input.pageSize);
        const bucket = input.source.bucket;
        candidates = page.objects.map((o, i) => ({ line: i + 1, bucket, key: o.key, metadata: {}, info: o }));
        cursor = { page: input.cursor.page + 1, token: page.next, finished: !page.next };
      } else {
        const manifest = input.manifest!;
        const key = `${manifest.pagesPrefix}${pageName(input.cursor.page)}`;
        const entries = manifestEntrySchema
          .array()
          .parse(JSON.parse(await store.withBucket(input.output.bucket).getText(key)));
        // A manifest names objects: look each up for its version (etag), size and date.
        candidates = await Promise.all(
          entries.map((e) =>
            limit(async () => {
              try {
                return { ...e, info: await store.withBucket(e.bucket).head(e.key) };
              } catch (err) {
                // One row naming a key the store refuses (e.g. `../` segments) must not stall the
                // batch in retries and fail it: that row is reported, the others go on.
                if (!isPermanentS3Error(err)) throw err;
                return { ...e, refused: `object storage refused the key (HTTP ${s3StatusOf(err)})` };
              }
            }),
          ),
        );
        const next = input.cursor.page + 1;
        cursor = { page: next, finished: next >= manifest.pages };
      }

      let filtered = 0;
      let missing = 0;
      const taken: BackfillItem[] = [];
      // Objects whose name says nothing: decided by content, a ranged GET each, in parallel.
      const verdicts = new Map(
        await Promise.all(
          candidates
            .filter(
              (c) =>
                c.info &&
                c.duplicateOf === undefined &&
                needsSniffing(c.key, input.filters) &&
                !filterReason(
                  {
                    key: c.key,
                    size: c.info.size,
                    date: c.startedAt ? new Date(c.startedAt) : c.info.lastModified,
                  },
                  input.filters,
                ),
            )
            .map((c) =>
              limit(async () => [c.key, notARecording(c.key, await headBytes(c.bucket, c.key))] as const),
            ),
        ),
      );
      for (const c of candidates) {
        const callId = c.callId ?? callIdOf({ bucket: c.bucket, key: c.key });
        if (c.duplicateOf !== undefined) {
          rows.push({
            callId,
            source: `s3://${c.bucket}/${c.key}`,
            status: 'skipped',
            reason: `duplicate of manifest line ${c.duplicateOf}`,
          });
          continue;
        }
        if (!c.info) {
          missing += 1;
          rows.push({
            callId,
            source: `s3://${c.bucket}/${c.key}`,
            status: 'missing',
            reason: c.refused ?? 'no such object',
          });
          continue;
        }
        const date = c.startedAt ? new Date(c.startedAt) : c.info.lastModified;
        if (filterReason({ key: c.key, size: c.info.size, date }, input.filters)) {
          filtered += 1;
          continue;
        }
        const notRecording = verdicts.get(c.key);
        if (notRecording) {
          rows.push({ callId, source: `s3://${c.bucket}/${c.key}`, status: 'skipped', reason: notRecording });
          continue;
        }
        const source = { bucket: c.bucket, key: c.key, etag: c.info.etag, size: c.info.size };
        taken.push({
          callId,
          workflowId: workflowIdOf(source, callId),
          source,
          ...(Object.keys(c.metadata).length ? { metadata: c.metadata } : {}),
          ...(c.speakers ? { speakers: c.speakers } : {}),
        });
      }

      // The done-check in bulk: a call whose result.json exists is reported, and starts no child.
      const out = store.withBucket(input.output.bucket);
      const done = input.redo
        ? taken.map(() => false)
        : await Promise.all(
            taken.map((t) => limit(() => out.exists(callOutputKeys(input.output, t.callId).result))),
          );
      const items = taken.filter((_, i) => !done[i]);
      taken.forEach((t, i) => {
        if (!done[i]) return;
        rows.push({
          callId: t.callId,
          source: `s3://${t.source.bucket}/${t.source.key}`,
          status: 'skipped',
          reason: 'already done (result.json exists)',
          resultKey: callOutputKeys(input.output, t.callId).result,
        });
      });
      if (rows.length > 0) {
        await putJson(
          input.output.bucket,
          `${input.partsPrefix}listing-${pageName(input.cursor.page)}`,
          rows,
        );
      }
      return {
        items,
        cursor,
        listed: candidates.length,
        filtered,
        skipped: rows.length - missing,
        missing,
      };
    },

    /** One part of the report: the rows of the calls one run started (small, once per run). */
    async writeReportPart(input: { bucket: string; key: string; rows: ReportRow[] }): Promise<void> {
      await putJson(input.bucket, input.key, input.rows);
    },

    /** Merges every part into report.json and report.csv beside them. */
    async writeBatchReport(
      input: WriteReportInput,
    ): Promise<{ jsonKey: string; csvKey: string; rows: number; days: string[] }> {
      const bucket = input.output.bucket;
      const parts = (await listAll(bucket, input.partsPrefix)).filter((o) => o.key.endsWith('.json'));
      const limit = pLimit(HEAD_CONCURRENCY);
      const partRows = await Promise.all(
        parts
          .filter((p) => !p.key.slice(input.partsPrefix.length).includes('/')) // not the manifest pages
          .map((p) =>
            limit(async () =>
              reportRowSchema.array().parse(JSON.parse(await store.withBucket(bucket).getText(p.key))),
            ),
          ),
      );
      const rows = mergeRows(partRows);
      const report: BatchReport & { statusCounts: Record<string, number> } = {
        ...input.header,
        finishedAt: new Date().toISOString(),
        statusCounts: countRows(rows),
        rows,
      };
      const keys = batchReportKeys(input.reportPrefix);
      await putJson(bucket, keys.json, report);
      await store
        .withBucket(bucket)
        .put(keys.csv, reportCsv(rows), { contentType: 'text/csv; charset=utf-8' });
      // The days whose table partitions the batch's calls wrote: compacted next.
      const days = [...new Set(rows.flatMap((r) => (r.dt ? [r.dt] : [])))].sort();
      return { jsonKey: keys.json, csvKey: keys.csv, rows: rows.length, days };
    },
  };
}

export type BackfillActivities = ReturnType<typeof createBackfillActivities>;
