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
 *
 * A copy is never trusted by its name. The cache is the user's alone (under CALLPIPE_HOME, else a folder
 * of the user's in the temp folder; 0700, its files 0600), and each copy is written with a record of what
 * it is (bucket, key, ETag, size, SHA-256 of its bytes) that is checked before the copy is used: a file
 * that another hand put or changed at a copy's name is discarded and the object downloaded again. The
 * digest is computed again only when the file changed since this process last checked it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, lstatSync, mkdirSync, chmodSync, type Stats } from 'node:fs';
import { chmod, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { RecordingSource } from '../../schemas/recording.ts';
import { stackHomeOf } from '../../schemas/process-settings.ts';
import type { ObjectStore } from './object-store.ts';
import { writeHashedFile, type HashedDownload } from './hashed-file.ts';

/** Bound of the cache: a few hours of the largest inputs (48 kHz stereo WAV is about 1.2 GB an hour). */
const SOURCE_CACHE_MAX_BYTES = 8 * 1024 ** 3;
const inFlight = new Map<string, Promise<string>>();
/** Copies this process checked, by path: the file's identity then (a change of bytes or a new file differs). */
const checked = new Map<string, string>();

/** The record beside each copy (`<copy>.meta`). */
interface CopyRecord {
  bucket: string;
  key: string;
  etag: string | null;
  size: number;
  sha256: string;
}
const RECORD_SUFFIX = '.meta';

/** An extension worth keeping: short, plain ASCII (a key's name is the user's, and may be anything). */
const SAFE_EXTENSION = /\.[A-Za-z0-9]{1,8}$/;

/**
 * A worker's local folder called `name` for copies of recordings: under CALLPIPE_HOME when set (the stack's
 * workers), else a folder of this user's own in the temp folder (never one folder shared by every user
 * and stack of the host). Make it with {@link ensurePrivateDir}.
 */
export function privateCacheDir(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const home = stackHomeOf(env);
  if (home) return join(resolve(home), name);
  return join(tmpdir(), `callpipe-${name}-${process.getuid?.() ?? 'user'}`);
}

/** The source cache's folder ({@link privateCacheDir}). */
export function sourceCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return privateCacheDir('sources', env);
}

/**
 * Makes `dir` (and what it lacks above it) the user's alone: a folder that is not a real folder of this
 * user's is refused, since whoever owns it could put files in it.
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const info = lstatSync(dir);
  const uid = process.getuid?.();
  if (!info.isDirectory() || (uid !== undefined && info.uid !== uid)) {
    throw new Error(`the cache folder ${dir} is not a folder of this user's; set CALLPIPE_HOME to one`);
  }
  if ((info.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

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

/** Downloads through `store` on this thread (callers with a store of their own: tests, the CLI). */
export function storeDownload(store: ObjectStore): HashedDownload {
  return async ({ bucket, key }, path) =>
    (await writeHashedFile(await store.withBucket(bucket).getStream(key), path)).sha256;
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function identityOf(info: Stats): string {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
}

/** True when the file at `path` is the copy of `source` its record says, with the bytes it was written with. */
async function isIntactCopy(path: string, source: RecordingSource): Promise<boolean> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) return false;
  if (source.size !== undefined && info.size !== source.size) return false;
  if (checked.get(path) === identityOf(info)) return true;
  const record = await readFile(path + RECORD_SUFFIX, 'utf8')
    .then((text) => JSON.parse(text) as Partial<CopyRecord>)
    .catch(() => undefined);
  if (
    !record ||
    record.bucket !== source.bucket ||
    record.key !== source.key ||
    record.etag !== (source.etag ?? null) ||
    record.size !== info.size ||
    (await sha256Of(path)) !== record.sha256
  ) {
    return false;
  }
  checked.set(path, identityOf(info));
  return true;
}

/** Marks a checked copy as just used (for eviction), keeping it checked. */
async function touch(path: string): Promise<void> {
  const now = new Date();
  await utimes(path, now, now).catch(() => {});
  const info = await stat(path).catch(() => undefined);
  if (info) checked.set(path, identityOf(info));
}

/** Path of a local copy of `source`, downloading it once (concurrent callers share the download). */
export async function localCopy(
  download: HashedDownload,
  source: RecordingSource,
  dir = sourceCacheDir(),
  maxBytes = SOURCE_CACHE_MAX_BYTES,
): Promise<string> {
  ensurePrivateDir(dir);
  const path = join(dir, sourceCacheKey(source));
  let pending = inFlight.get(path);
  if (!pending && (await isIntactCopy(path, source))) {
    await touch(path);
    return path;
  }
  pending = inFlight.get(path);
  if (!pending) {
    pending = (async () => {
      const partial = `${path}.${randomUUID()}.part`;
      try {
        checked.delete(path);
        await rm(path + RECORD_SUFFIX, { force: true });
        const sha256 = await download(source, partial);
        await chmod(partial, 0o600);
        const size = (await stat(partial)).size;
        const record: CopyRecord = {
          bucket: source.bucket,
          key: source.key,
          etag: source.etag ?? null,
          size,
          sha256,
        };
        await rename(partial, path);
        await writeFile(path + RECORD_SUFFIX, JSON.stringify(record), { mode: 0o600 });
        await touch(path);
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
  const names = (await readdir(dir)).filter((n) => !n.endsWith('.part') && !n.endsWith(RECORD_SUFFIX));
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
    await rm(f.path + RECORD_SUFFIX, { force: true });
    checked.delete(f.path);
    total -= f.size;
    evicted.push(f.path);
  }
  return evicted;
}
