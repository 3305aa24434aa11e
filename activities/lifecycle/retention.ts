/**
 * Which calls retention expires (`CALLPIPE_RETENTION_DAYS`, schemas/lifecycle.ts): a call's age is its
 * day in the tables (the `dt` partition its rows are in: when it started, in the deployment's time
 * zone), read from the `calls` table; staging left by a run that never finished (no rows) ages by its
 * objects' last change. The erasure itself is forget's (workflows/forget.ts), table rows included.
 */
import { createHash } from 'node:crypto';
import { normalizePrefix, partitionDayOf, tablePrefix } from '../../schemas/call-keys.ts';
import { CALLS_TABLE } from '../../schemas/tables.ts';
import {
  RETENTION_KINDS,
  lettersOfHex,
  retentionCutoff,
  type ForgetInput,
  type RetentionDays,
  type RetentionKind,
} from '../../schemas/lifecycle.ts';
import { onBucket, type ObjectStore } from '../storage/object-store.ts';
import { listAllUnder } from './call-objects.ts';
import { readRows } from '../tables/table-files.ts';

export interface RetentionInput {
  places: ForgetInput['places'];
  days: RetentionDays;
  /** ISO time the ages are counted from (the scheduled time; tests give another). */
  now: string;
}

/** One erasure retention asks for: its request id, calls and what of them. */
export interface RetentionRequest {
  requestId: string;
  kind: RetentionKind;
  callIds: string[];
}

/** Calls per request: an erasure's history stays small. */
const RETENTION_CALLS_PER_REQUEST = 200;

/** The request id of retention's erasure of `callIds` for `kind`: the same calls are the same request. */
function retentionRequestId(kind: RetentionKind, callIds: readonly string[]): string {
  const hash = createHash('sha256')
    .update(kind)
    .update('\u0000')
    .update([...callIds].sort().join('\n'));
  return `retention-${kind}-${lettersOfHex(hash.digest('hex').slice(0, 20))}`;
}

/** Every call with rows in the `calls` table, by its day. */
async function callsByDay(
  store: ObjectStore,
  places: RetentionInput['places'],
  before: string,
): Promise<Map<string, string>> {
  const out = onBucket(store, places.tables.bucket);
  const days = new Map<string, string>();
  for (const o of await listAllUnder(
    store,
    places.tables.bucket,
    tablePrefix(places.tables, CALLS_TABLE.name),
  )) {
    const dt = partitionDayOf(o.key);
    if (!dt || dt >= before || !o.key.endsWith('.parquet')) continue;
    for (const row of (await readRows(out, 'calls', o.key)) ?? []) days.set(String(row.call_id), dt);
  }
  return days;
}

/** The erasures retention asks for at `now` (see the file's comment). */
export async function retentionRequests(
  store: ObjectStore,
  input: RetentionInput,
): Promise<RetentionRequest[]> {
  const now = new Date(input.now);
  const cutoff = (kind: RetentionKind) => {
    const d = input.days[kind];
    return d === undefined ? undefined : retentionCutoff(now, d);
  };
  const latest = RETENTION_KINDS.map(cutoff)
    .filter((c): c is string => !!c)
    .sort()
    .at(-1);
  if (!latest) return [];
  const calls = await callsByDay(store, input.places, latest);
  const older = (kind: RetentionKind) => {
    const c = cutoff(kind);
    return c ? [...calls].filter(([, dt]) => dt < c).map(([id]) => id) : [];
  };
  const whole = new Set(older('results'));
  const byKind = new Map<RetentionKind, Set<string>>();
  for (const kind of RETENTION_KINDS) {
    if (kind === 'results') continue;
    byKind.set(kind, new Set(older(kind).filter((id) => !whole.has(id) || kind === 'recordings')));
  }
  // Staging of runs that never wrote rows: by the objects' last change.
  const staging = cutoff('staging');
  if (staging) {
    const prefix = `${normalizePrefix(input.places.stagingPrefix)}calls/`;
    for (const o of await listAllUnder(store, store.bucket, prefix)) {
      const callId = o.key.slice(prefix.length).split('/')[0];
      if (
        callId &&
        !calls.has(callId) &&
        o.lastModified &&
        o.lastModified.toISOString().slice(0, 10) < staging
      )
        byKind.get('staging')!.add(callId);
    }
  }
  const requests: RetentionRequest[] = [];
  const chunked = (kind: RetentionKind, ids: string[]) => {
    const sorted = [...ids].sort();
    for (let i = 0; i < sorted.length; i += RETENTION_CALLS_PER_REQUEST) {
      const callIds = sorted.slice(i, i + RETENTION_CALLS_PER_REQUEST);
      requests.push({ requestId: retentionRequestId(kind, callIds), kind, callIds });
    }
  };
  // Recordings first: a call's recording is found through its result, which `results` erases.
  chunked('recordings', [...byKind.get('recordings')!]);
  chunked('results', [...whole]);
  for (const kind of ['unredacted', 'redacted-audio', 'staging'] as const)
    chunked(kind, [...byKind.get(kind)!]);
  return requests;
}
