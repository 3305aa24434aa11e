/**
 * Local copies of input recordings. ffmpeg needs a seekable file (an M4A whose index is at the end
 * cannot be read from a pipe), and probe, plan and transcode may run as separate activities on the same
 * worker: one download per recording version, shared by all of them.
 *
 * A copy keeps its object's extension (`<hash>.g722`): for a headerless format the name is all that
 * tells ffmpeg how to read it (the probe also passes the format explicitly: media/input-format.ts).
 *
 * The cache is bounded: a worker that processes a night of recordings must not fill its disk. After each
 * download the least recently used copies go until the cache fits; a copy evicted while ffmpeg still
 * reads it stays readable (unlinked, not truncated), and a later activity just downloads it again.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordingSource } from '../../schemas/recording.ts';
import type { ObjectStore } from './object-store.ts';

const CACHE_DIR = join(tmpdir(), 'callpipe-sources');
/** Bound of the cache: a few hours of the largest inputs (48 kHz stereo WAV is about 1.2 GB an hour). */
export const SOURCE_CACHE_MAX_BYTES = 8 * 1024 ** 3;
const inFlight = new Map<string, Promise<string>>();

/** An extension worth keeping: short, plain ASCII (a key's name is the user's, and may be anything). */
const SAFE_EXTENSION = /\.[A-Za-z0-9]{1,8}$/;

/** The copy's file name: a hash of the object version, and the object's extension when it has a plain one. */
export function sourceCacheKey(source: RecordingSource): string {
  const hash = createHash('sha256')
    .update(`${source.bucket}\0${source.key}\0${source.etag ?? ''}\0${source.size ?? ''}`)
    .digest('hex')
    .slice(0, 32);
  const name = source.key.split('/').pop() ?? '';
  const ext = name.lastIndexOf('.') > 0 ? SAFE_EXTENSION.exec(name)?.[0] : undefined;
  return `${hash}${ext?.toLowerCase() ?? ''}`;
}

/** Path of a local copy of `source`, downloading it once (concurrent callers share the download). */
export async function localCopy(
  store: ObjectStore,
  source: RecordingSource,
  dir = CACHE_DIR,
  maxBytes = SOURCE_CACHE_MAX_BYTES,
): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, sourceCacheKey(source));
  if (existsSync(path)) {
    const now = new Date();
    await utimes(path, now, now).catch(() => {});
    return path;
  }
  let pending = inFlight.get(path);
  if (!pending) {
    pending = (async () => {
      const partial = `${path}.${randomUUID()}.part`;
      try {
        await store.withBucket(source.bucket).download(source.key, partial);
        await rename(partial, path);
        await evictLeastRecentlyUsed(dir, maxBytes, path);
        return path;
      } catch (err) {
        await rm(partial, { force: true });
        throw err;
      } finally {
        inFlight.delete(path);
      }
    })();
    inFlight.set(path, pending);
  }
  return pending;
}

/** Deletes the least recently used copies (never `keep`, never downloads in progress) until `dir` fits. */
export async function evictLeastRecentlyUsed(dir: string, maxBytes: number, keep: string): Promise<string[]> {
  const names = (await readdir(dir)).filter((n) => !n.endsWith('.part'));
  const files = (
    await Promise.all(
      names.map(async (n) => {
        const path = join(dir, n);
        const info = await stat(path).catch(() => undefined);
        return info?.isFile() ? { path, size: info.size, used: info.mtimeMs } : undefined;
      }),
    )
  ).filter((f) => f !== undefined);
  let total = files.reduce((sum, f) => sum + f.size, 0);
  const evicted: string[] = [];
  for (const f of files.sort((a, b) => a.used - b.used)) {
    if (total <= maxBytes) break;
    if (f.path === keep) continue;
    await rm(f.path, { force: true });
    total -= f.size;
    evicted.push(f.path);
  }
  return evicted;
}
