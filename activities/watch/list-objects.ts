/**
 * One listing of a watched prefix: a page of keys after a key (the watermark, or a reconciliation's
 * cursor), in key order, with what the name and size filters leave out already left out, and the done
 * calls (result.json exists) too, in bulk: a watch restarted over a prefix of 100,000 done calls holds
 * none of them. A bucket that does not exist is an answer (`missing`), not a failure: the watch waits.
 */
import pLimit from 'p-limit';
import type { ObjectInfo, ObjectStore } from '../storage/object-store.ts';
import { isNotFound, s3CodeOf, s3StatusOf } from '../storage/s3-errors.ts';
import type { BackfillFilters } from '../../schemas/backfill.ts';
import type { WatchListing, WatchObject, WatchSource } from '../../schemas/watch.ts';
import { filterReason } from '../backfill/filters.ts';
import { HEAD_CONCURRENCY } from '../backfill/bucket-io.ts';
import { callIdOf, type CallIdRule } from '../storage/call-id.ts';
import { callOutputKeys } from '../../schemas/call-keys.ts';
import type { OutputLocation } from '../../schemas/recording.ts';

export interface ListWatchedInput {
  source: WatchSource;
  /** Where results go: a listed object whose result.json exists there is left out (counted as done). */
  output: OutputLocation;
  filters: BackfillFilters;
  /** List keys after this one (S3 StartAfter); from the start of the prefix when undefined. */
  after?: string | undefined;
  limit: number;
  /** Only objects modified at or after this instant (epoch ms): what a complete reconciliation has not seen. */
  modifiedSinceMs?: number | undefined;
}

/** What the name, size and date filters take of a listed object (content is judged at admission). */
function listedObject(info: ObjectInfo, filters: BackfillFilters): WatchObject | undefined {
  const date = info.lastModified;
  if (filterReason({ key: info.key, size: info.size, ...(date ? { date } : {}) }, filters)) return undefined;
  return { key: info.key, etag: info.etag, size: info.size, modifiedMs: date?.getTime() };
}

/** The objects whose call is done (result.json exists), left out; how many. */
async function withoutDone(
  store: ObjectStore,
  input: ListWatchedInput,
  objects: WatchObject[],
  callIds: CallIdRule,
): Promise<{ objects: WatchObject[]; done: number }> {
  const out = store.withBucket(input.output.bucket);
  const limit = pLimit(HEAD_CONCURRENCY);
  const done = await Promise.all(
    objects.map((o) =>
      limit(() =>
        out.exists(
          callOutputKeys(input.output, callIdOf({ bucket: input.source.bucket, key: o.key }, callIds)).result,
        ),
      ),
    ),
  );
  return { objects: objects.filter((_, i) => !done[i]), done: done.filter(Boolean).length };
}

export async function listWatchedObjects(
  store: ObjectStore,
  input: ListWatchedInput,
  callIds: CallIdRule = { mode: 'auto' },
): Promise<WatchListing> {
  const { source, filters, after, limit, modifiedSinceMs } = input;
  let page;
  try {
    page = await store.withBucket(source.bucket).listPage(source.prefix, undefined, limit, after);
  } catch (err) {
    if (isNotFound(err) || s3CodeOf(err) === 'NoSuchBucket')
      return {
        objects: [],
        done: 0,
        finished: true,
        missing: `the bucket does not exist (HTTP ${s3StatusOf(err) ?? 404})`,
      };
    throw err;
  }
  const listed: WatchObject[] = [];
  for (const info of page.objects) {
    if (modifiedSinceMs !== undefined && info.lastModified && info.lastModified.getTime() < modifiedSinceMs)
      continue;
    const taken = listedObject(info, filters);
    if (taken) listed.push(taken);
  }
  const { objects, done } = await withoutDone(store, input, listed, callIds);
  const lastKey = page.objects.at(-1)?.key;
  return { objects, done, ...(lastKey !== undefined ? { lastKey } : {}), finished: !page.next };
}
