/**
 * What callpipe holds about a call: every object it wrote for it, by kind, and the shared objects that
 * hold a line or a row of it (batch reports, compacted table parts). The one listing that `forget`,
 * retention and `export` read, so that what is disclosed and what is erased are the same things.
 *
 * Every key is found by listing and reading, never assumed: a call's output folder may hold files of
 * an older release, a crashed run may have left staging behind, a locator may be gone.
 */
import {
  ERROR_FILE,
  REDACTED_AUDIO_FILE,
  RESULT_FILE,
  callLocatorKey,
  normalizePrefix,
  type OutputLocation,
  type TablesLocation,
} from '../../schemas/call-keys.ts';
import pLimit from 'p-limit';
import type { CallObjectKind } from '../../schemas/lifecycle.ts';
import { listObjectsUnder, onBucket, type ObjectInfo, type ObjectStore } from '../storage/object-store.ts';
import { readLocator } from '../tables/call-locator.ts';
import { eventsPrefix, failuresPrefix } from '../events/event-store.ts';

/** Where a deployment keeps what it writes for calls (schemas/config.ts gives each). */
export interface CallPlaces {
  output: OutputLocation;
  /** The staging prefix, in the store's own bucket. */
  stagingPrefix: string;
  unredacted?: OutputLocation | undefined;
  tables: TablesLocation;
}

/** One object of a call's own: deleting it takes nothing of another call. */
export interface CallObject {
  kind: CallObjectKind;
  bucket: string;
  key: string;
  size: number;
}

/** A shared object holding a line or rows of the call: rewritten without them, never deleted whole. */
export interface SharedObject {
  kind: 'report' | 'table-part';
  bucket: string;
  key: string;
}

export interface CallHoldings {
  callId: string;
  objects: CallObject[];
  /** Objects that hold the call among others (see {@link SharedObject}). */
  shared: SharedObject[];
  /** The recording's place, from the call's result.json or error.json (when either is still there). */
  recording?: { bucket: string; key: string } | undefined;
  /** The call's tables day, from its locator (when it has one). */
  dt?: string | undefined;
}

/** Every object under `prefix` in `bucket`. */
export async function listAllUnder(
  store: ObjectStore,
  bucket: string,
  prefix: string,
): Promise<ObjectInfo[]> {
  return listObjectsUnder(onBucket(store, bucket), prefix);
}

/** The call's output folder: `<output><callId>/`. */
function outputDirOf(places: CallPlaces, callId: string): string {
  return `${normalizePrefix(places.output.prefix)}${callId}/`;
}

/** The call's staging folder, every run of it: `<staging>calls/<callId>/`. */
function stagingDirOf(places: CallPlaces, callId: string): string {
  return `${normalizePrefix(places.stagingPrefix)}calls/${callId}/`;
}

/** Where the batches' reports are: `<output>batches/`. */
function batchesPrefixOf(places: CallPlaces): string {
  return `${normalizePrefix(places.output.prefix)}batches/`;
}

/** The first key under `prefix` after `after` (a page may hold more, or fewer, than asked for). */
async function firstKeyAfter(
  store: ObjectStore,
  prefix: string,
  after: string | undefined,
): Promise<string | undefined> {
  let next: string | undefined;
  do {
    const page = await store.listPage(prefix, next, 1, after);
    const keys = page.objects.map((o) => o.key).filter((k) => after === undefined || k > after);
    if (keys.length) return keys.sort()[0];
    next = page.next;
  } while (next);
  return undefined;
}

const DAY_FOLDER = /^(\d{4}-\d{2}-\d{2})\//;

/**
 * The days that hold events under `folder` (activities/events/event-store.ts: `<folder><day>/<callId>/`),
 * walked by skipping past each day (one short listing a day), not by listing every event there is.
 */
async function eventDaysUnder(store: ObjectStore, bucket: string, folder: string): Promise<string[]> {
  const s = onBucket(store, bucket);
  const days: string[] = [];
  let after: string | undefined;
  for (;;) {
    const key = await firstKeyAfter(s, folder, after);
    const day = key ? DAY_FOLDER.exec(key.slice(folder.length))?.[1] : undefined;
    if (!day) return days;
    days.push(day);
    // '0' sorts just after '/': past every key of the day, before the next day's.
    after = `${folder}${day}0`;
  }
}

function outputKind(key: string): CallObjectKind {
  return key.endsWith(`/${REDACTED_AUDIO_FILE}`) ? 'redacted-audio' : 'results';
}

/** The recording a call was made from, as its result.json (or error.json) says. */
async function recordingOf(
  store: ObjectStore,
  bucket: string,
  dir: string,
): Promise<{ bucket: string; key: string } | undefined> {
  for (const file of [RESULT_FILE, ERROR_FILE]) {
    const found = await onBucket(store, bucket).read(`${dir}${file}`);
    if (!found) continue;
    try {
      const source = (
        JSON.parse(found.body.toString('utf8')) as { source?: { bucket?: string; key?: string } }
      ).source;
      if (source?.bucket && source.key) return { bucket: source.bucket, key: source.key };
    } catch {
      // An unreadable document names no recording; the others may.
    }
  }
  return undefined;
}

/**
 * The batch reports (report.json, report.csv, report.html and the run parts) that hold a line of any of
 * `callIds`, per call. Read once for many calls: one pass over the batches' folders.
 */
export async function reportsHolding(
  store: ObjectStore,
  places: CallPlaces,
  callIds: readonly string[],
): Promise<Map<string, SharedObject[]>> {
  const wanted = new Set(callIds);
  const byCall = new Map<string, SharedObject[]>(callIds.map((id) => [id, []]));
  const bucket = places.output.bucket;
  const objects = await listAllUnder(store, bucket, batchesPrefixOf(places));
  for (const o of objects) {
    if (!o.key.endsWith('.json') && !o.key.endsWith('.csv') && !o.key.endsWith('.html')) continue;
    const text = (await onBucket(store, bucket).read(o.key))?.body.toString('utf8');
    if (!text) continue;
    for (const id of wanted)
      if (text.includes(id)) byCall.get(id)!.push({ kind: 'report', bucket, key: o.key });
  }
  return byCall;
}

/** The report files of a batch folder (for callers that rewrite a report). */
/** Calls looked up at once: each is a few listings and reads, one after another. */
export const LOOKUPS_AT_ONCE = 8;

/**
 * Everything callpipe holds about each of `callIds` (see the file's comment). The recording is listed as
 * an object of kind `recording` only with `recordings: true`: it is the customer's, not callpipe's.
 * `reports: false` leaves the batch reports unread (no `report` in `shared`). The calls are looked up
 * {@link LOOKUPS_AT_ONCE} at a time; `onCall` hears each as soon as it and every call before it are
 * known (in the order asked), so a command can show them as they come.
 */
export async function callHoldings(
  store: ObjectStore,
  places: CallPlaces,
  callIds: readonly string[],
  options: {
    recordings?: boolean;
    reports?: boolean;
    onCall?: (holding: CallHoldings, index: number) => void;
  } = {},
): Promise<CallHoldings[]> {
  // The batch reports are read whole: skipped when the caller has no use for them.
  const reports =
    options.reports === false
      ? new Map<string, SharedObject[]>()
      : await reportsHolding(store, places, callIds);
  // The events' and the give-ups' days, walked once for all the calls.
  const eventFolders: { folder: string; days: string[] }[] = [];
  for (const folder of [eventsPrefix(places.output), failuresPrefix(places.output)])
    eventFolders.push({ folder, days: await eventDaysUnder(store, places.output.bucket, folder) });
  const holdings: (CallHoldings | undefined)[] = callIds.map(() => undefined);
  let told = 0;
  const limit = pLimit(LOOKUPS_AT_ONCE);
  await Promise.all(
    callIds.map((callId, i) =>
      limit(async () => {
        holdings[i] = await holdingOf(store, places, callId, reports, eventFolders, options.recordings);
        for (; told < holdings.length && holdings[told]; told++) options.onCall?.(holdings[told]!, told);
      }),
    ),
  );
  return holdings as CallHoldings[];
}

/** What callpipe holds about one call. */
async function holdingOf(
  store: ObjectStore,
  places: CallPlaces,
  callId: string,
  reports: Map<string, SharedObject[]>,
  eventFolders: { folder: string; days: string[] }[],
  recordings: boolean | undefined,
): Promise<CallHoldings> {
  const objects: CallObject[] = [];
  const shared: SharedObject[] = [...(reports.get(callId) ?? [])];
  const dir = outputDirOf(places, callId);
  for (const o of await listAllUnder(store, places.output.bucket, dir))
    objects.push({ kind: outputKind(o.key), bucket: places.output.bucket, key: o.key, size: o.size });
  if (places.unredacted) {
    const plain = `${normalizePrefix(places.unredacted.prefix)}${callId}/`;
    for (const o of await listAllUnder(store, places.unredacted.bucket, plain))
      objects.push({ kind: 'unredacted', bucket: places.unredacted.bucket, key: o.key, size: o.size });
  }
  for (const { folder, days } of eventFolders)
    for (const day of days)
      for (const o of await listAllUnder(store, places.output.bucket, `${folder}${day}/${callId}/`))
        objects.push({ kind: 'events', bucket: places.output.bucket, key: o.key, size: o.size });
  for (const o of await listAllUnder(store, store.bucket, stagingDirOf(places, callId)))
    objects.push({ kind: 'staging', bucket: store.bucket, key: o.key, size: o.size });
  const tablesBucket = places.tables.bucket;
  const locator = await readLocator(onBucket(store, tablesBucket), places.tables, callId);
  const locatorKey = callLocatorKey(places.tables, callId);
  if (locator) {
    objects.push({ kind: 'index', bucket: tablesBucket, key: locatorKey, size: 0 });
    for (const key of Object.values(locator.files)) {
      if (!key) continue;
      if (key.endsWith(`/call-${callId}.parquet`))
        objects.push({ kind: 'table-file', bucket: tablesBucket, key, size: 0 });
      else shared.push({ kind: 'table-part', bucket: tablesBucket, key });
    }
  }
  const recording = await recordingOf(store, places.output.bucket, dir);
  if (recording && recordings) {
    const head = await onBucket(store, recording.bucket).head(recording.key);
    if (head) objects.push({ kind: 'recording', ...recording, size: head.size });
  }
  return { callId, objects, shared, recording, dt: locator?.dt };
}
