/** A manifest source's first step: the CSV parsed once and stored as pages of entries. */
import type { CallIdRule } from '../storage/call-id.ts';
import pLimit from 'p-limit';
import type { ObjectStore } from '../storage/object-store.ts';
import type { BackfillSource } from '../../schemas/backfill.ts';
import { MANIFEST_LIMITS } from '../../schemas/manifest.ts';
import { ManifestError, readManifest, tooLargeManifest, type PageSpan } from './manifest.ts';
import type { ManifestEntry } from '../../schemas/manifest.ts';
import { HEAD_CONCURRENCY, pageName, putJson } from './bucket-io.ts';
import { failureOf } from '../failure.ts';
import { FAILURE } from '../../schemas/retry-table.ts';

export interface PrepareManifestInput {
  source: Extract<BackfillSource, { kind: 'manifest' }>;
  /** Where the parsed pages go (JSON, one object per page). */
  pagesPrefix: string;
  outputBucket: string;
  pageSize: number;
}

/**
 * A refused manifest fails the batch at once (no retry can fix it), with every problem by its line and
 * before any call starts: its pages are written as it is read, and only used once the whole file passed.
 */
function manifestFailure(err: unknown): unknown {
  return err instanceof ManifestError ? failureOf(FAILURE.ManifestError, err.message) : err;
}

/**
 * A page as stored: entries with metadata lose it for the span of their rows in the manifest, from which
 * the listing reads the cells back (withManifestMetadata). The cells may be personal data (a caller
 * number, a customer's name) and the pages stay with the batch's other objects: the values reach the
 * calls' (encrypted) inputs and the unredacted copy, never an object of the batch.
 */
function storedPage(entries: ManifestEntry[], span: PageSpan): ManifestEntry[] {
  if (!entries.some((e) => Object.keys(e.metadata).length > 0)) return entries;
  return entries.map((e) => ({ ...e, metadata: {}, span }));
}

/**
 * Reads the CSV once, as a stream within its bounds (the size is checked before a byte is read), and
 * stores it as pages of entries, so each run reads only its pages.
 */
export async function prepareManifest(
  store: ObjectStore,
  input: PrepareManifestInput,
  callIds: CallIdRule = { mode: 'auto' },
): Promise<{ rows: number; pages: number }> {
  const manifest = store.withBucket(input.source.bucket);
  const head = await manifest.head(input.source.key);
  if (!head) throw failureOf(FAILURE.ManifestError, 'manifest refused: no such object');
  if (head.size > MANIFEST_LIMITS.maxBytes) throw manifestFailure(tooLargeManifest(head.size));
  const limit = pLimit(HEAD_CONCURRENCY);
  const writes: Promise<void>[] = [];
  try {
    const read = await readManifest(await manifest.getStream(input.source.key), input.source.bucket, {
      pageSize: input.pageSize,
      callIds,
      onPage: async (entries, n, span) => {
        const page = storedPage(entries, span);
        writes.push(
          limit(() => putJson(store, input.outputBucket, `${input.pagesPrefix}${pageName(n)}`, page)),
        );
        // Pages wait in memory only while the writes before them are in flight.
        if (limit.pendingCount > HEAD_CONCURRENCY) await writes.at(-1);
      },
    });
    await Promise.all(writes);
    return read;
  } catch (err) {
    await Promise.allSettled(writes);
    throw manifestFailure(err);
  }
}
