/** Which listed recordings a backfill takes (schemas/backfill.ts, filters). Pure: unit-tested. */
import { DEFAULT_EXTENSIONS, type BackfillFilters } from '../../schemas/backfill.ts';
import { extensionOf, SIDECAR_EXTENSIONS } from '../../schemas/media-formats.ts';

export { extensionOf };

export interface FilterCandidate {
  key: string;
  size?: number;
  /** The call's date: the manifest's started_at, else the object's last-modified time. */
  date?: Date;
}

/**
 * Whether a candidate is decided by its content rather than its name: with the default extensions, an
 * object whose extension is not one of them (or that has none) is sniffed (activities/backfill), except
 * the sidecars call recorders write beside recordings, which are left out by name.
 */
export function needsSniffing(key: string, filters: BackfillFilters = {}): boolean {
  return (
    filters.extensions === undefined &&
    !key.endsWith('/') &&
    !DEFAULT_EXTENSIONS.includes(extensionOf(key)) &&
    !SIDECAR_EXTENSIONS.includes(extensionOf(key))
  );
}

/** Why a candidate is left out, or undefined when it is taken. */
export function filterReason(candidate: FilterCandidate, filters: BackfillFilters = {}): string | undefined {
  if (candidate.key.endsWith('/')) return 'folder marker';
  const extensions = (filters.extensions ?? DEFAULT_EXTENSIONS).map((e) =>
    e.replace(/^\./, '').toLowerCase(),
  );
  const ext = extensionOf(candidate.key);
  if (filters.extensions === undefined && SIDECAR_EXTENSIONS.includes(ext))
    return `a sidecar ('${ext}'), not a recording`;
  if (!extensions.includes(ext) && !needsSniffing(candidate.key, filters))
    return `extension '${ext}' not in ${extensions.join(',')}`;
  if (candidate.size !== undefined) {
    if (filters.minBytes !== undefined && candidate.size < filters.minBytes) return 'smaller than minBytes';
    if (filters.maxBytes !== undefined && candidate.size > filters.maxBytes) return 'larger than maxBytes';
  }
  if (candidate.date && (filters.from || filters.until)) {
    const t = candidate.date.getTime();
    if (filters.from && t < Date.parse(filters.from)) return 'before from';
    if (filters.until && t >= Date.parse(filters.until)) return 'not before until';
  }
  return undefined;
}
