import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.ts';
import { existsSync, mkdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  localCopy,
  privateCacheDir,
  storeDownload,
  sourceCacheDir,
  sourceCacheKey,
} from '../../activities/storage/source-cache.ts';
import type { ObjectStore } from '../../activities/storage/object-store.ts';
import type { HashedDownload } from '../../activities/storage/hashed-file.ts';
import { writeFile } from 'node:fs/promises';
import { Readable } from 'node:stream';

/** A download through a store with only what it reads (`withBucket(...).getStream`), counting downloads. */
function fakeDownload(downloads: string[]): HashedDownload {
  const store = {
    withBucket: () => store,
    getStream: async (key: string) => {
      downloads.push(key);
      return Readable.from([Buffer.from(key.padEnd(10, '.'))]);
    },
  };
  return storeDownload(store as unknown as ObjectStore);
}

describe('localCopy', () => {
  it('downloads a recording version once, shared by concurrent callers', async () => {
    const dir = tempDir('callpipe-cache-');
    const downloads: string[] = [];
    const download = fakeDownload(downloads);
    const source = { bucket: 'b', key: 'a.wav', etag: 'e1' };
    const [p1, p2] = await Promise.all([localCopy(download, source, dir), localCopy(download, source, dir)]);
    expect(p1).toBe(p2);
    expect(await localCopy(download, source, dir)).toBe(p1);
    expect(downloads).toEqual(['a.wav']);
    expect(readFileSync(p1, 'utf8')).toBe('a.wav.....');
    // A new version of the object is a new copy.
    expect(sourceCacheKey({ ...source, etag: 'e2' })).not.toBe(sourceCacheKey(source));
  });

  it('stays within its bound by evicting the least recently used copies', async () => {
    const dir = tempDir('callpipe-cache-');
    const downloads: string[] = [];
    const download = fakeDownload(downloads);
    const max = 25; // room for two 10-byte copies
    const a = await localCopy(download, { bucket: 'b', key: 'a' }, dir, max);
    const b = await localCopy(download, { bucket: 'b', key: 'b' }, dir, max);
    utimesSync(b, new Date(1000), new Date(1000)); // b is the least recently used
    utimesSync(a, new Date(2000), new Date(2000));
    const c = await localCopy(download, { bucket: 'b', key: 'c' }, dir, max);
    expect(existsSync(a)).toBe(true);
    expect(existsSync(b)).toBe(false);
    expect(existsSync(c)).toBe(true);
    // An evicted copy comes back by downloading again.
    await localCopy(download, { bucket: 'b', key: 'b' }, dir, max);
    expect(downloads).toEqual(['a', 'b', 'c', 'b']);
  });
});

describe('localCopy, never trusting a copy by its name', () => {
  it('discards a file planted at the copy name, and one changed after it was written', async () => {
    const dir = join(tempDir('callpipe-cache-'), 'sources');
    const downloads: string[] = [];
    const download = fakeDownload(downloads);
    const source = { bucket: 'b', key: 'one.wav', etag: 'e1', size: 10 };
    // Another recording's bytes, planted where the copy of this one would be.
    mkdirSync(dir, { recursive: true });
    await writeFile(join(dir, sourceCacheKey(source)), 'another...');
    const path = await localCopy(download, source, dir);
    expect(readFileSync(path, 'utf8')).toBe('one.wav...');
    expect(downloads).toEqual(['one.wav']);

    // Changed in place after it was written (same size): discarded and downloaded again.
    await writeFile(path, 'two.wav...');
    expect(readFileSync(await localCopy(download, source, dir), 'utf8')).toBe('one.wav...');
    expect(downloads).toEqual(['one.wav', 'one.wav']);
    // Intact: used as it is.
    await localCopy(download, source, dir);
    expect(downloads).toHaveLength(2);
  });

  it('writes a download of many chunks whole, in order, and records its digest', async () => {
    const dir = join(tempDir('callpipe-cache-'), 'sources');
    // 3.2 MB in chunks of 1,000 bytes, hashed as they pass to disk.
    const chunks = Array.from({ length: 3200 }, (_, i) => Buffer.alloc(1000, i % 251));
    const store = {
      withBucket: () => store,
      getStream: async () => Readable.from(chunks),
    } as unknown as ObjectStore;
    const path = await localCopy(
      storeDownload(store),
      { bucket: 'b', key: 'long.wav', size: 3_200_000 },
      dir,
    );
    expect(readFileSync(path).equals(Buffer.concat(chunks))).toBe(true);
    const record = JSON.parse(readFileSync(`${path}.meta`, 'utf8')) as { sha256: string };
    expect(record.sha256).toBe(createHash('sha256').update(Buffer.concat(chunks)).digest('hex'));
  });

  it('keeps its copies private to the user', async () => {
    const dir = join(tempDir('callpipe-cache-'), 'sources');
    const path = await localCopy(fakeDownload([]), { bucket: 'b', key: 'a.wav' }, dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('lives under CALLPIPE_HOME when set, else in a folder of its own user, never a shared one', () => {
    expect(sourceCacheDir({ CALLPIPE_HOME: '/srv/callpipe' })).toBe('/srv/callpipe/sources');
    expect(privateCacheDir('repaired', { CALLPIPE_HOME: '/srv/callpipe' })).toBe('/srv/callpipe/repaired');
    const fallback = sourceCacheDir({});
    expect(fallback).not.toBe(join(tmpdir(), 'callpipe-sources'));
    expect(fallback).toContain(String(process.getuid!()));
  });
});
