/**
 * Local copies of input recordings. ffmpeg needs a seekable file (an M4A whose index is at the end
 * cannot be read from a pipe), and probe, plan and transcode may run as separate activities on the same
 * worker: one download per recording version, shared by all of them.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { rename, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordingSource } from '../../schemas/recording.ts';
import type { ObjectStore } from './object-store.ts';

const CACHE_DIR = join(tmpdir(), 'callpipe-sources');
const inFlight = new Map<string, Promise<string>>();

export function sourceCacheKey(source: RecordingSource): string {
  return createHash('sha256')
    .update(`${source.bucket}\0${source.key}\0${source.etag ?? ''}\0${source.size ?? ''}`)
    .digest('hex')
    .slice(0, 32);
}

/** Path of a local copy of `source`, downloading it once (concurrent callers share the download). */
export async function localCopy(
  store: ObjectStore,
  source: RecordingSource,
  dir = CACHE_DIR,
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
