/** A manifest source's first step: the CSV parsed once and stored as pages of entries. */
import pLimit from 'p-limit';
import type { ObjectStore } from '../storage/object-store.ts';
import type { BackfillSource } from '../../schemas/backfill.ts';
import type { ManifestEntry } from '../../schemas/manifest.ts';
import { ManifestError, parseManifest } from './manifest.ts';
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

/** The manifest's entries; a malformed manifest fails the batch at once (no retry can fix it). */
function parseManifestOrFail(text: Buffer, bucket: string): ManifestEntry[] {
  try {
    return parseManifest(text, bucket);
  } catch (err) {
    if (err instanceof ManifestError) {
      throw failureOf(FAILURE.ManifestError, err.message);
    }
    throw err;
  }
}

/**
 * A row repeated (same object, same call id) is one call: the repeat is marked here, where every row is
 * seen, so pages far apart do not start it twice.
 */
function markRepeatedRows(entries: ManifestEntry[]): void {
  const firstLine = new Map<string, number>();
  for (const e of entries) {
    const id = JSON.stringify([e.bucket, e.key, e.callId ?? '']);
    const first = firstLine.get(id);
    if (first === undefined) firstLine.set(id, e.line);
    else e.duplicateOf = first;
  }
}

/** Parses the CSV once and stores it as pages of entries, so each run reads only its pages. */
export async function prepareManifest(
  store: ObjectStore,
  input: PrepareManifestInput,
): Promise<{ rows: number; pages: number }> {
  const text = await store.withBucket(input.source.bucket).getBuffer(input.source.key);
  const entries = parseManifestOrFail(text, input.source.bucket);
  markRepeatedRows(entries);
  const pages = Math.ceil(entries.length / input.pageSize);
  const limit = pLimit(HEAD_CONCURRENCY);
  await Promise.all(
    Array.from({ length: pages }, (_, n) =>
      limit(() =>
        putJson(
          store,
          input.outputBucket,
          `${input.pagesPrefix}${pageName(n)}`,
          entries.slice(n * input.pageSize, (n + 1) * input.pageSize),
        ),
      ),
    ),
  );
  return { rows: entries.length, pages };
}
