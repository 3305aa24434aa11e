import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localCopy, sourceCacheKey } from '../../activities/storage/source-cache.ts';
import type { ObjectStore } from '../../activities/storage/object-store.ts';
import { writeFile } from 'node:fs/promises';

/** Only what localCopy uses: `withBucket(...).download`, counting downloads. */
function fakeStore(downloads: string[]): ObjectStore {
  const store = {
    withBucket: () => store,
    download: async (key: string, path: string) => {
      downloads.push(key);
      await writeFile(path, key.padEnd(10, '.'));
    },
  };
  return store as unknown as ObjectStore;
}

describe('localCopy', () => {
  it('downloads a recording version once, shared by concurrent callers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callpipe-cache-'));
    const downloads: string[] = [];
    const store = fakeStore(downloads);
    const source = { bucket: 'b', key: 'a.wav', etag: 'e1' };
    const [p1, p2] = await Promise.all([localCopy(store, source, dir), localCopy(store, source, dir)]);
    expect(p1).toBe(p2);
    expect(await localCopy(store, source, dir)).toBe(p1);
    expect(downloads).toEqual(['a.wav']);
    expect(readFileSync(p1, 'utf8')).toBe('a.wav.....');
    // A new version of the object is a new copy.
    expect(sourceCacheKey({ ...source, etag: 'e2' })).not.toBe(sourceCacheKey(source));
  });

  it('stays within its bound by evicting the least recently used copies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callpipe-cache-'));
    const downloads: string[] = [];
    const store = fakeStore(downloads);
    const max = 25; // room for two 10-byte copies
    const a = await localCopy(store, { bucket: 'b', key: 'a' }, dir, max);
    const b = await localCopy(store, { bucket: 'b', key: 'b' }, dir, max);
    utimesSync(b, new Date(1000), new Date(1000)); // b is the least recently used
    utimesSync(a, new Date(2000), new Date(2000));
    const c = await localCopy(store, { bucket: 'b', key: 'c' }, dir, max);
    expect(existsSync(a)).toBe(true);
    expect(existsSync(b)).toBe(false);
    expect(existsSync(c)).toBe(true);
    // An evicted copy comes back by downloading again.
    await localCopy(store, { bucket: 'b', key: 'b' }, dir, max);
    expect(downloads).toEqual(['a', 'b', 'c', 'b']);
  });
});
