/**
 * A manifest batch's pages (backfill, rescore): the CSV is parsed and split into pages once, by the batch's
 * first run; where the pages are is carried across continue-as-new, so no later run reads the manifest.
 */
import type { BackfillActivities } from '../activities/backfill/backfill-activities.ts';
import type { BackfillCursor, BackfillSource } from '../schemas/backfill.ts';
import type { RescoreSource } from '../schemas/rescore.ts';

export interface ManifestPages {
  pagesPrefix: string;
  pages: number;
}

/** Prepares the pages of a manifest source unless `carry` already has them; an empty manifest finishes the cursor. */
export async function prepareManifestOnce(
  prepareManifest: BackfillActivities['prepareManifest'],
  input: { source: BackfillSource | RescoreSource; output: { bucket: string }; pageSize: number },
  carry: { manifest?: ManifestPages; cursor: BackfillCursor },
  partsPrefix: string,
): Promise<void> {
  if (input.source.kind !== 'manifest' || carry.manifest) return;
  const pagesPrefix = `${partsPrefix}manifest/`;
  const prepared = await prepareManifest({
    source: input.source,
    pagesPrefix,
    outputBucket: input.output.bucket,
    pageSize: input.pageSize,
  });
  carry.manifest = { pagesPrefix, pages: prepared.pages };
  if (prepared.pages === 0) carry.cursor = { page: 0, finished: true };
}
