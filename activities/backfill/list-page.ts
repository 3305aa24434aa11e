/**
 * One page of a batch: list (a prefix) or read (a manifest's stored page) the candidates, leave out what
 * the filters or the content refuse, and check done calls in bulk, so a done call starts no child. Rows
 * of the skipped and missing calls go to S3, never into the workflow's state.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import type { ObjectInfo, ObjectStore } from '../storage/object-store.ts';
import { isPermanentS3Error, s3StatusOf } from '../storage/s3-errors.ts';
import { callIdOf, reportedSource, workflowIdOf, type CallIdRule } from '../storage/call-id.ts';
import { callOutputKeys } from '../../schemas/call-keys.ts';
import type {
  BackfillCursor,
  BackfillFilters,
  BackfillItem,
  BackfillPage,
  BackfillSource,
  ReportRow,
} from '../../schemas/backfill.ts';
import { manifestEntrySchema, type ManifestEntry } from '../../schemas/manifest.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import { notARecording } from '../media/sniff.ts';
import { filterReason, needsSniffing, type FilterCandidate } from './filters.ts';
import { HEAD_CONCURRENCY, headBytes, pageName, putJson } from './bucket-io.ts';
import { ManifestChangedError, withManifestMetadata } from './manifest.ts';
import { failureOf } from '../failure.ts';
import { FAILURE } from '../../schemas/retry-table.ts';

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

/** A listed or named object: its facts once looked up, or why the store refused the key. */
type Candidate = ManifestEntry & { info?: ObjectInfo; refused?: string };

interface Listing {
  candidates: Candidate[];
  cursor: BackfillCursor;
}

/** What the candidates of a page came to before the done-check. */
interface Sorted {
  rows: ReportRow[];
  taken: BackfillItem[];
  filtered: number;
  missing: number;
}

/** A row's source, as reports store it (personal data of the key masked). */
const sourceUri = (c: { bucket: string; key: string }, rule: CallIdRule) =>
  reportedSource(`s3://${c.bucket}/${c.key}`, rule);

/** What the filters judge: the call's date is the manifest's started_at, else the object's date. */
function filterFacts(c: Candidate, info: ObjectInfo): FilterCandidate {
  return { key: c.key, size: info.size, date: c.startedAt ? new Date(c.startedAt) : info.lastModified };
}

async function listPrefixPage(
  store: ObjectStore,
  source: Extract<BackfillSource, { kind: 'prefix' }>,
  input: ListPageInput,
): Promise<Listing> {
  const page = await store
    .withBucket(source.bucket)
    .listPage(source.prefix, input.cursor.token, input.pageSize);
  const bucket = source.bucket;
  return {
    candidates: page.objects.map((o, i) => ({ line: i + 1, bucket, key: o.key, metadata: {}, info: o })),
    cursor: { page: input.cursor.page + 1, token: page.next, finished: !page.next },
  };
}

/** A page's metadata, read back from the manifest itself (pages are stored without it). */
async function manifestMetadataOf(store: ObjectStore, input: ListPageInput, entries: ManifestEntry[]) {
  if (input.source.kind !== 'manifest') return entries;
  const manifest = store.withBucket(input.source.bucket);
  const { key } = input.source;
  try {
    return await withManifestMetadata(
      entries,
      async (start, end) => {
        const chunks: Buffer[] = [];
        for await (const chunk of await manifest.getStream(key, { start, end: end - 1 }))
          chunks.push(chunk as Buffer);
        return Buffer.concat(chunks);
      },
      input.source.bucket,
    );
  } catch (err) {
    if (err instanceof ManifestChangedError) throw failureOf(FAILURE.ManifestError, err.message);
    // Gone or refused since the batch read it: no retry brings its cells back.
    if (isPermanentS3Error(err))
      throw failureOf(
        FAILURE.ManifestError,
        `the manifest cannot be read since the batch began (HTTP ${s3StatusOf(err)}): its pages keep no cell, so it must stay until its batch ends`,
      );
    throw err;
  }
}

/** A manifest names objects: each is looked up for its version (etag), size and date. */
async function readManifestPage(
  store: ObjectStore,
  input: ListPageInput,
  limit: LimitFunction,
): Promise<Listing> {
  const manifest = input.manifest!;
  const key = `${manifest.pagesPrefix}${pageName(input.cursor.page)}`;
  const stored = manifestEntrySchema
    .array()
    .parse(JSON.parse(await store.withBucket(input.output.bucket).getText(key)));
  const entries = await manifestMetadataOf(store, input, stored);
  const candidates = await Promise.all(
    entries.map((e) =>
      limit(async (): Promise<Candidate> => {
        try {
          return { ...e, info: await store.withBucket(e.bucket).head(e.key) };
        } catch (err) {
          // One row naming a key the store refuses (e.g. `../` segments) must not stall the batch in
          // retries and fail it: that row is reported, the others go on.
          if (!isPermanentS3Error(err)) throw err;
          return { ...e, refused: `object storage refused the key (HTTP ${s3StatusOf(err)})` };
        }
      }),
    ),
  );
  const next = input.cursor.page + 1;
  return { candidates, cursor: { page: next, finished: next >= manifest.pages } };
}

/** Objects whose name says nothing: decided by content, a ranged GET each, in parallel. */
async function sniffUnnamed(
  store: ObjectStore,
  candidates: Candidate[],
  filters: BackfillFilters,
  limit: LimitFunction,
): Promise<Map<string, string | undefined>> {
  const unnamed = candidates.filter(
    (c) =>
      c.info &&
      c.duplicateOf === undefined &&
      needsSniffing(c.key, filters) &&
      !filterReason(filterFacts(c, c.info), filters),
  );
  return new Map(
    await Promise.all(
      unnamed.map((c) =>
        limit(async () => [c.key, notARecording(c.key, await headBytes(store, c.bucket, c.key))] as const),
      ),
    ),
  );
}

/** Each candidate reported (duplicate, missing, not a recording), filtered out, or taken. */
function sortCandidates(
  candidates: Candidate[],
  filters: BackfillFilters,
  verdicts: Map<string, string | undefined>,
  callIds: CallIdRule,
): Sorted {
  const sorted: Sorted = { rows: [], taken: [], filtered: 0, missing: 0 };
  for (const c of candidates) {
    const callId = c.callId ?? callIdOf({ bucket: c.bucket, key: c.key }, callIds);
    if (c.duplicateOf !== undefined) {
      const reason = `duplicate of manifest line ${c.duplicateOf}`;
      sorted.rows.push({ callId, source: sourceUri(c, callIds), status: 'skipped', reason });
      continue;
    }
    if (!c.info) {
      sorted.missing += 1;
      const reason = c.refused ?? 'no such object';
      sorted.rows.push({ callId, source: sourceUri(c, callIds), status: 'missing', reason });
      continue;
    }
    if (filterReason(filterFacts(c, c.info), filters)) {
      sorted.filtered += 1;
      continue;
    }
    const notRecording = verdicts.get(c.key);
    if (notRecording) {
      sorted.rows.push({ callId, source: sourceUri(c, callIds), status: 'skipped', reason: notRecording });
      continue;
    }
    sorted.taken.push(itemOf(c, c.info, callId));
  }
  return sorted;
}

function itemOf(c: Candidate, info: ObjectInfo, callId: string): BackfillItem {
  const source = {
    bucket: c.bucket,
    key: c.key,
    etag: info.etag,
    size: info.size,
    // The call's time without a manifest, as listed: its publish need not look the object up again.
    ...(info.lastModified ? { lastModified: info.lastModified.toISOString() } : {}),
  };
  return {
    callId,
    workflowId: workflowIdOf(source, callId),
    source,
    ...(Object.keys(c.metadata).length ? { metadata: c.metadata } : {}),
    ...(c.speakers ? { speakers: c.speakers } : {}),
  };
}

/** The done-check in bulk: a call whose result.json exists is reported, and starts no child. */
async function splitDone(
  store: ObjectStore,
  input: ListPageInput,
  taken: BackfillItem[],
  limit: LimitFunction,
  callIds: CallIdRule,
): Promise<{ items: BackfillItem[]; doneRows: ReportRow[] }> {
  const out = store.withBucket(input.output.bucket);
  const done = input.redo
    ? taken.map(() => false)
    : await Promise.all(
        taken.map((t) => limit(() => out.exists(callOutputKeys(input.output, t.callId).result))),
      );
  const doneRows = taken
    .filter((_, i) => done[i])
    .map((t) => ({
      callId: t.callId,
      source: sourceUri(t.source, callIds),
      status: 'skipped' as const,
      reason: 'already done (result.json exists)',
      resultKey: callOutputKeys(input.output, t.callId).result,
    }));
  return { items: taken.filter((_, i) => !done[i]), doneRows };
}

/**
 * One page: list, filter, check done calls in bulk; returns only the calls to start. `callIds`: how
 * call ids are made from file names (the worker's configuration, as the CLI's for `process`).
 */
export async function listBackfillPage(
  store: ObjectStore,
  input: ListPageInput,
  callIds: CallIdRule = { mode: 'auto' },
): Promise<BackfillPage> {
  const limit = pLimit(HEAD_CONCURRENCY);
  const { candidates, cursor } =
    input.source.kind === 'prefix'
      ? await listPrefixPage(store, input.source, input)
      : await readManifestPage(store, input, limit);
  const verdicts = await sniffUnnamed(store, candidates, input.filters, limit);
  const { rows, taken, filtered, missing } = sortCandidates(candidates, input.filters, verdicts, callIds);
  const { items, doneRows } = await splitDone(store, input, taken, limit, callIds);
  rows.push(...doneRows);
  if (rows.length > 0) {
    await putJson(
      store,
      input.output.bucket,
      `${input.partsPrefix}listing-${pageName(input.cursor.page)}`,
      rows,
    );
  }
  return { items, cursor, listed: candidates.length, filtered, skipped: rows.length - missing, missing };
}
