/**
 * Admission of settled objects: each is looked at once more (HEAD) and must still have the size and ETag
 * it settled with; then it is judged as a backfill judges a listed object (content sniffed when its name
 * says nothing, result.json means done) and, when its version failed before (error.json written by the
 * workflow of this very version), it is not tried again: `callpipe backfill` retries failed calls.
 */
import pLimit from 'p-limit';
import type { ObjectStore } from '../storage/object-store.ts';
import { callIdOf, workflowIdOf, type CallIdRule } from '../storage/call-id.ts';
import { callOutputKeys } from '../../schemas/call-keys.ts';
import type { BackfillFilters } from '../../schemas/backfill.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import type { AdmitVerdict, WatchObject } from '../../schemas/watch.ts';
import { notARecording } from '../media/sniff.ts';
import { filterReason, needsSniffing } from '../backfill/filters.ts';
import { HEAD_CONCURRENCY, headBytes } from '../backfill/bucket-io.ts';

export interface AdmitInput {
  bucket: string;
  output: OutputLocation;
  filters: BackfillFilters;
  objects: WatchObject[];
}

/** Whether error.json under the call's folder was written by the workflow of this version. */
async function failedBefore(store: ObjectStore, key: string, workflowId: string): Promise<boolean> {
  const error = await store.read(key);
  if (!error) return false;
  try {
    return (JSON.parse(error.body.toString('utf8')) as { workflowId?: string }).workflowId === workflowId;
  } catch {
    return false;
  }
}

async function admitOne(
  store: ObjectStore,
  input: AdmitInput,
  object: WatchObject,
  callIds: CallIdRule,
): Promise<AdmitVerdict> {
  const { key } = object;
  const source = store.withBucket(input.bucket);
  const now = await source.head(key);
  if (!now) return { key, verdict: 'gone' };
  if (now.etag !== object.etag || now.size !== object.size)
    return { key, verdict: 'changed', etag: now.etag, size: now.size };
  const date = now.lastModified;
  if (filterReason({ key, size: now.size, ...(date ? { date } : {}) }, input.filters))
    return { key, verdict: 'skipped', why: 'filtered' };
  if (needsSniffing(key, input.filters) && notARecording(key, await headBytes(store, input.bucket, key)))
    return { key, verdict: 'skipped', why: 'not-a-recording' };
  const recording = { bucket: input.bucket, key, etag: now.etag, size: now.size };
  const callId = callIdOf(recording, callIds);
  const workflowId = workflowIdOf(recording, callId);
  const out = store.withBucket(input.output.bucket);
  const keys = callOutputKeys(input.output, callId);
  if (await out.exists(keys.result)) return { key, verdict: 'skipped', why: 'done' };
  if (await failedBefore(out, keys.error, workflowId))
    return { key, verdict: 'skipped', why: 'failed-before' };
  return {
    key,
    verdict: 'start',
    callId,
    workflowId,
    ...(now.etag ? { etag: now.etag } : {}),
    size: now.size,
  };
}

export async function admitWatchedObjects(
  store: ObjectStore,
  input: AdmitInput,
  callIds: CallIdRule,
): Promise<AdmitVerdict[]> {
  const limit = pLimit(HEAD_CONCURRENCY);
  return Promise.all(input.objects.map((o) => limit(() => admitOne(store, input, o, callIds))));
}
