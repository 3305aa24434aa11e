/**
 * Identity of a call and of its processing run, derived from the source so that the same recording
 * submitted twice is one call and one workflow (DESIGN.md; issue 5 item 1).
 *
 * - callId: readable and stable per object (bucket + key): `<file name slug>-<8 hex>`; names the
 *   output folder, so re-running finds the earlier `result.json`.
 * - workflowId: the callId plus the object's version (etag, or size + mtime): a changed file under the
 *   same key is new work; the same version is the same workflow.
 */
import { createHash } from 'node:crypto';
import type { RecordingSource } from '../../schemas/recording.ts';

const MAX_SLUG = 48;

/** The first `length` hex digits of the SHA-256 of `text`: short, stable names for ids. */
export function shortHash(text: string, length = 8): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/** A slug of the file name: letters, digits, `-`, `_`, `.` only (no path separators, never `..`). */
export function slug(name: string): string {
  const base = name.split('/').pop() ?? name;
  const withoutExt = base.replace(/\.[A-Za-z0-9]{1,5}$/, '');
  const cleaned = withoutExt
    .normalize('NFKC')
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    // A call id starts with a letter or digit (assertSafeCallId): `_draft.wav` must not make one that
    // every output write then refuses.
    .replace(/^[-_]+|-+$/g, '')
    .slice(0, MAX_SLUG);
  return cleaned || 'call';
}

export function callIdOf(source: Pick<RecordingSource, 'bucket' | 'key'>): string {
  return `${slug(source.key)}-${shortHash(`${source.bucket}/${source.key}`)}`;
}

export function workflowIdOf(source: RecordingSource, callId = callIdOf(source)): string {
  const version = source.etag ?? `size-${source.size ?? 'unknown'}`;
  return `call-${callId}-${shortHash(version, 12)}`;
}
