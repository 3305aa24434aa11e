/**
 * The one module that reads CSV (csv-parse): a backfill manifest's text → resolved entries, with every
 * bad row named by its line so a user can fix the file (schemas/manifest.ts describes the columns).
 */
import { parse } from 'csv-parse/sync';
import { manifestRowSchema, type ManifestEntry } from '../../schemas/manifest.ts';

export class ManifestError extends Error {
  override name = 'ManifestError';
}

/** Most row errors listed in one message; the rest are counted. */
const MAX_LISTED_ERRORS = 5;

const S3_URI = /^s3:\/\/([^/]+)\/(.+)$/;

/** Speakers of a `channels` cell: `agent,customer` or `customer|agent`. */
export function parseChannelMapping(cell: string): string[] {
  return cell
    .split(/[,|]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Parses a manifest. `bucket` is the manifest's own bucket, the default for a `key` column. */
export function parseManifest(text: string | Buffer, bucket: string): ManifestEntry[] {
  let records: Record<string, string>[];
  try {
    records = parse(text, {
      columns: (header: string[]) =>
        header.map((h) =>
          h
            .trim()
            .toLowerCase()
            .replace(/[\s-]+/g, '_'),
        ),
      skip_empty_lines: true,
      trim: true,
      bom: true,
      relax_column_count: false,
    }) as Record<string, string>[];
  } catch (err) {
    throw new ManifestError(`manifest is not valid CSV: ${(err as Error).message}`);
  }
  if (records.length === 0) return [];
  const columns = Object.keys(records[0]!);
  if (!columns.includes('uri') && !columns.includes('key')) {
    throw new ManifestError(
      `manifest needs a 'uri' (s3://bucket/key) or 'key' column; it has: ${columns.join(', ')}`,
    );
  }

  const entries: ManifestEntry[] = [];
  const errors: string[] = [];
  records.forEach((record, i) => {
    const line = i + 2; // header is line 1 (multi-line cells are rare in manifests)
    // Empty cells mean "not given".
    const cells = Object.fromEntries(Object.entries(record).filter(([, v]) => v !== ''));
    const parsed = manifestRowSchema.safeParse(cells);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      errors.push(`line ${line}${issue.path.length ? ` (${issue.path.join('.')})` : ''}: ${issue.message}`);
      return;
    }
    const row = parsed.data;
    // A `key` cell holding an s3:// URL is taken as one (manifests mix both in practice).
    const fromUri = S3_URI.exec(row.uri ?? row.key ?? '');
    const { uri: _uri, key: _key, bucket: _bucket, ...rest } = cells;
    entries.push({
      line,
      bucket: fromUri ? fromUri[1]! : (row.bucket ?? bucket),
      key: fromUri ? fromUri[2]! : row.key!,
      callId: row.call_id,
      startedAt: row.started_at,
      speakers: row.channels ? parseChannelMapping(row.channels) : undefined,
      metadata: rest,
    });
  });
  if (errors.length > 0) {
    const more = errors.length > MAX_LISTED_ERRORS ? `; and ${errors.length - MAX_LISTED_ERRORS} more` : '';
    throw new ManifestError(
      `manifest has ${errors.length} bad row(s): ${errors.slice(0, MAX_LISTED_ERRORS).join('; ')}${more}`,
    );
  }
  return entries;
}
