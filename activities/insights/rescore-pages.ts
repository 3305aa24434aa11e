/**
 * The calls of one page of a rescore: the `<prefix><callId>/result.json` keys of a listed prefix, or the
 * entries of a prepared manifest page (backfill's `prepareManifest`), with the cursor after it.
 */
import type { BackfillCursor } from '../../schemas/backfill.ts';
import { callOutputKeys, normalizePrefix, RESULT_FILE } from '../../schemas/call-keys.ts';
import { manifestEntrySchema } from '../../schemas/manifest.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import type { RescoreSource } from '../../schemas/rescore.ts';
import { callIdOf, type CallIdRule } from '../storage/call-id.ts';
import type { ObjectStore } from '../storage/object-store.ts';

/** What listing a page reads of the page's input (rescore-activities.ts, RescorePageInput). */
export interface RescorePageRequest {
  source: RescoreSource;
  output: OutputLocation;
  cursor: BackfillCursor;
  pageSize: number;
  /** Manifest sources: the pages prepared by the backfill's `prepareManifest`. */
  manifest?: { pagesPrefix: string; pages: number } | undefined;
}

export interface RescoreCall {
  callId: string;
  /** Its result.json. */
  key: string;
}

export interface RescorePage {
  calls: RescoreCall[];
  cursor: BackfillCursor;
  listed: number;
}

/** A page's object name: `page-000042.json` (manifest pages and report parts alike). */
export const pageName = (n: number) => `page-${String(n).padStart(6, '0')}.json`;

async function prefixPage(store: ObjectStore, input: RescorePageRequest & { source: { kind: 'prefix' } }) {
  const prefix = normalizePrefix(input.source.prefix);
  const page = await store
    .withBucket(input.source.bucket)
    .listPage(prefix, input.cursor.token, input.pageSize);
  // `<prefix><callId>/result.json`, not a batch report or anything deeper.
  const calls = page.objects.flatMap((o) => {
    const rest = o.key.slice(prefix.length).split('/');
    return rest.length === 2 && rest[1] === RESULT_FILE ? [{ callId: rest[0]!, key: o.key }] : [];
  });
  const cursor = { page: input.cursor.page + 1, token: page.next, finished: !page.next };
  return { calls, cursor, listed: page.objects.length };
}

async function manifestPage(
  store: ObjectStore,
  input: RescorePageRequest,
  callIds: CallIdRule,
): Promise<RescorePage> {
  const manifest = input.manifest!;
  const text = await store
    .withBucket(input.output.bucket)
    .getText(`${manifest.pagesPrefix}${pageName(input.cursor.page)}`);
  const entries = manifestEntrySchema.array().parse(JSON.parse(text));
  const next = input.cursor.page + 1;
  const calls = entries
    .filter((e) => e.duplicateOf === undefined)
    .map((e) => {
      const callId = e.callId ?? callIdOf({ bucket: e.bucket, key: e.key }, callIds);
      return { callId, key: callOutputKeys(input.output, callId).result };
    });
  return { calls, cursor: { page: next, finished: next >= manifest.pages }, listed: entries.length };
}

/** The result keys of one page, and the cursor after it; a manifest's call ids made as the backfill made them. */
export function listRescorePage(
  store: ObjectStore,
  input: RescorePageRequest,
  callIds: CallIdRule = { mode: 'auto' },
): Promise<RescorePage> {
  const { source } = input;
  return source.kind === 'prefix'
    ? prefixPage(store, { ...input, source })
    : manifestPage(store, input, callIds);
}
