/**
 * One listing of a watched prefix: a page of keys after a key (the watermark, or a reconciliation's
 * cursor), in key order, with what the name and size filters leave out already left out. A bucket that
 * does not exist is an answer (`missing`), not a failure: the watch waits for it.
 */
import type { ObjectInfo, ObjectStore } from '../storage/object-store.ts';
import { isNotFound, s3CodeOf, s3StatusOf } from '../storage/s3-errors.ts';
import type { BackfillFilters } from '../../schemas/backfill.ts';
import type { WatchListing, WatchObject, WatchSource } from '../../schemas/watch.ts';
import { filterReason } from '../backfill/filters.ts';

export interface ListWatchedInput {
  source: WatchSource;
  filters: BackfillFilters;
  /** List keys after this one (S3 StartAfter); from the start of the prefix when undefined. */
  after?: string | undefined;
  limit: number;
  /** Only objects modified at or after this instant (epoch ms): what a complete reconciliation has not seen. */
  modifiedSinceMs?: number | undefined;
}

/** What the name, size and date filters take of a listed object (content is judged at admission). */
export function listedObject(info: ObjectInfo, filters: BackfillFilters): WatchObject | undefined {
  const date = info.lastModified;
  if (filterReason({ key: info.key, size: info.size, ...(date ? { date } : {}) }, filters)) return undefined;
  return { key: info.key, etag: info.etag, size: info.size, modifiedMs: date?.getTime() };
}

export async function listWatchedObjects(store: ObjectStore, input: ListWatchedInput): Promise<WatchListing> {
  const { source, filters, after, limit, modifiedSinceMs } = input;
  let page;
  try {
    page = await store.withBucket(source.bucket).listPage(source.prefix, undefined, limit, after);
  } catch (err) {
    if (isNotFound(err) || s3CodeOf(err) === 'NoSuchBucket')
      return {
        objects: [],
        finished: true,
        missing: `the bucket does not exist (HTTP ${s3StatusOf(err) ?? 404})`,
      };
    throw err;
  }
  const objects: WatchObject[] = [];
  for (const info of page.objects) {
    if (modifiedSinceMs !== undefined && info.lastModified && info.lastModified.getTime() < modifiedSinceMs)
      continue;
    const taken = listedObject(info, filters);
    if (taken) objects.push(taken);
  }
  const lastKey = page.objects.at(-1)?.key;
  return { objects, ...(lastKey !== undefined ? { lastKey } : {}), finished: !page.next };
}
