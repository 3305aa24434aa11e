/**
 * `writeCallTables` on an in-memory store that counts its requests: a call's locator is read once, under
 * its day's lease; a call found in another day (its date changed since its last write) is written again
 * under both days' leases, its old rows removed; a rescore keeps the call's day.
 */
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import type { ObjectStore } from '../../activities/storage/object-store.ts';
import { writeCallTables } from '../../activities/tables/write-call-tables.ts';
import { callLocatorKey, type TablesLocation } from '../../schemas/call-keys.ts';
import { resultFixture } from '../helpers/result-fixture.ts';

type Op = 'read' | 'put' | 'putIf' | 'delete';

/** The store's objects and the requests made of it, by operation and key. */
function memoryStore() {
  const objects = new Map<string, { body: Buffer; etag: string }>();
  const requests: { op: Op; key: string }[] = [];
  const etagOf = (body: Buffer) => createHash('md5').update(body).digest('hex');
  const write = (key: string, body: string | Buffer) => {
    const bytes = Buffer.from(body);
    const etag = etagOf(bytes);
    objects.set(key, { body: bytes, etag });
    return etag;
  };
  const store = {
    bucket: 'callpipe',
    async put(key: string, body: string | Buffer) {
      requests.push({ op: 'put', key });
      write(key, body);
    },
    async getText(key: string) {
      requests.push({ op: 'read', key });
      const found = objects.get(key);
      if (!found) throw Object.assign(new Error('NoSuchKey'), { name: 'NoSuchKey' });
      return found.body.toString('utf8');
    },
    async read(key: string) {
      requests.push({ op: 'read', key });
      const found = objects.get(key);
      return found ? { body: found.body, etag: found.etag } : undefined;
    },
    async putIf(key: string, body: string | Buffer, condition: { ifNoneMatch: '*' } | { ifMatch: string }) {
      requests.push({ op: 'putIf', key });
      const found = objects.get(key);
      const holds = 'ifMatch' in condition ? found?.etag === condition.ifMatch : !found;
      return holds ? { etag: write(key, body) } : 'conflict';
    },
    async deleteKeys(keys: readonly string[]) {
      for (const key of keys) {
        requests.push({ op: 'delete', key });
        objects.delete(key);
      }
      return keys.length;
    },
    withBucket() {
      return store;
    },
  };
  return { store: store as unknown as ObjectStore, objects, requests };
}

const TABLES: TablesLocation = { bucket: 'callpipe', prefix: 'tables/', timeZone: 'UTC' };
const LEASE = () => ({ ttlMs: 60_000, waitMs: 1_000 });

async function writeResult(store: ObjectStore, callId: string, lastModified: string): Promise<string> {
  const key = `results/${callId}/result.json`;
  await store.put(key, JSON.stringify(resultFixture({ callId, lastModified })));
  return key;
}

/** Writes the tables' rows of the call whose result is at `key` (the store is both source and tables). */
const writeTables = (store: ObjectStore, callId: string, key: string, keepDay?: boolean) =>
  writeCallTables(
    store,
    store,
    { callId, result: { bucket: 'callpipe', key }, tables: TABLES, ...(keepDay ? { keepDay } : {}) },
    LEASE,
  );

const partitionFiles = (objects: Map<string, unknown>) =>
  [...objects.keys()].filter((k) => k.endsWith('.parquet')).sort();

describe('writeCallTables', () => {
  it("reads a new call's locator once, under its day's lease", async () => {
    const { store, objects, requests } = memoryStore();
    const callId = 'c-new-3f9a0c1e';
    const key = await writeResult(store, callId, '2026-11-20T10:00:00.000Z');
    requests.length = 0;
    const out = await writeTables(store, callId, key);
    expect(out.dt).toBe('2026-11-20');
    const locator = callLocatorKey(TABLES, callId);
    expect(requests.filter((r) => r.key === locator).map((r) => r.op)).toEqual(['read', 'put']);
    // The lease was taken (read, conditional write) before the locator was read, and released last.
    const ops = requests.map(
      (r) => `${r.op} ${r.key.includes('leases') ? 'lease' : r.key === locator ? 'locator' : 'data'}`,
    );
    expect(ops.indexOf('putIf lease')).toBeLessThan(ops.indexOf('read locator'));
    expect(ops.at(-1)).toBe('putIf lease');
    expect(partitionFiles(objects).every((k) => k.includes('dt=2026-11-20'))).toBe(true);
  });

  it('moves a call whose day changed: both days leased, its old rows removed, one set of rows left', async () => {
    const { store, objects, requests } = memoryStore();
    const callId = 'c-moved-3f9a0c1e';
    const first = await writeResult(store, callId, '2026-11-20T10:00:00.000Z');
    await writeTables(store, callId, first);
    const before = partitionFiles(objects);
    expect(before.length).toBeGreaterThan(0);
    const again = await writeResult(store, callId, '2026-11-22T10:00:00.000Z');
    requests.length = 0;
    const out = await writeTables(store, callId, again);
    expect(out.dt).toBe('2026-11-22');
    expect(out.replaced.sort()).toEqual(before);
    expect(partitionFiles(objects).every((k) => k.includes('dt=2026-11-22'))).toBe(true);
    const leased = new Set(requests.filter((r) => r.op === 'putIf').map((r) => r.key));
    expect([...leased].sort()).toEqual([
      'tables/_callpipe/leases/dt=2026-11-20.json',
      'tables/_callpipe/leases/dt=2026-11-22.json',
    ]);
  });

  it('keeps a rescored call in its day', async () => {
    const { store, objects } = memoryStore();
    const callId = 'c-kept-3f9a0c1e';
    const first = await writeResult(store, callId, '2026-11-20T10:00:00.000Z');
    await writeTables(store, callId, first);
    const again = await writeResult(store, callId, '2026-11-22T10:00:00.000Z');
    const out = await writeTables(store, callId, again, true);
    expect(out.dt).toBe('2026-11-20');
    expect(partitionFiles(objects).every((k) => k.includes('dt=2026-11-20'))).toBe(true);
  });
});
