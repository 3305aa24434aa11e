/**
 * activities/watch: a page of a watched prefix (after a key, modified since, filters) and admission of
 * settled objects (changed, gone, done, failed before, not a recording, or started), on a fake store.
 */
import { describe, expect, it } from 'vitest';
import type { ObjectInfo, ObjectStore } from '../../activities/storage/object-store.ts';
import { admitWatchedObjects } from '../../activities/watch/admit.ts';
import { listWatchedObjects } from '../../activities/watch/list-objects.ts';
import { callIdOf, workflowIdOf } from '../../activities/storage/call-id.ts';
import { callOutputKeys } from '../../schemas/call-keys.ts';

interface Stored {
  body: Buffer;
  etag: string;
  modified: Date;
}

/** A bucket-aware store holding bodies, ETags and dates; listing honours StartAfter and page size. */
function fakeStore(
  buckets = new Map<string, Map<string, Stored>>(),
  bucket = 'calls',
): ObjectStore & {
  putAt(key: string, body: string | Buffer, etag: string, modified?: Date): void;
} {
  if (!buckets.has(bucket)) buckets.set(bucket, new Map());
  const objects = buckets.get(bucket)!;
  const info = (key: string, o: Stored): ObjectInfo => ({
    key,
    size: o.body.length,
    etag: o.etag,
    lastModified: o.modified,
  });
  const store = {
    bucket,
    putAt(key: string, body: string | Buffer, etag: string, modified = new Date('2026-11-26T09:00:00Z')) {
      objects.set(key, { body: Buffer.from(body), etag, modified });
    },
    async head(key: string) {
      const o = objects.get(key);
      return o ? info(key, o) : undefined;
    },
    async read(key: string) {
      const o = objects.get(key);
      return o ? { body: o.body, etag: o.etag } : undefined;
    },
    async exists(key: string) {
      return objects.has(key);
    },
    async getStream(key: string, options?: { end?: number }) {
      const { Readable } = await import('node:stream');
      return Readable.from([objects.get(key)!.body.subarray(0, (options?.end ?? Infinity) + 1)]);
    },
    async listPage(prefix: string, _next?: string, pageSize = 1000, startAfter?: string) {
      const keys = [...objects.keys()]
        .filter((k) => k.startsWith(prefix) && (!startAfter || k > startAfter))
        .sort();
      const page = keys.slice(0, pageSize);
      return {
        objects: page.map((k) => info(k, objects.get(k)!)),
        ...(keys.length > pageSize ? { next: 'more' } : {}),
      };
    },
    withBucket: (other: string) => fakeStore(buckets, other),
  };
  return store as unknown as ObjectStore & typeof store;
}

const RIFF = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVEfmt '), Buffer.alloc(64)]);
const output = { bucket: 'results', prefix: 'out/' };

describe('listWatchedObjects', () => {
  it('lists after a key, leaves out what the filters, the modified-since bound or a done call leave out', async () => {
    const store = fakeStore();
    store.putAt('in/a.wav', 'x', 'ea', new Date('2026-11-26T08:00:00Z'));
    store.putAt('in/b.wav', 'xx', 'eb', new Date('2026-11-26T09:00:00Z'));
    store.putAt('in/b.txt', 'note', 'et', new Date('2026-11-26T09:00:00Z'));
    store.putAt('in/c.wav', 'xxx', 'ec', new Date('2026-11-26T09:00:00Z'));
    store.putAt('in/d.wav', 'xxxx', 'ed', new Date('2026-11-26T09:00:00Z'));
    const done = callOutputKeys(output, callIdOf({ bucket: 'calls', key: 'in/d.wav' })).result;
    (store.withBucket('results') as ReturnType<typeof fakeStore>).putAt(done, '{}', 'r');
    const all = await listWatchedObjects(store, {
      source: { bucket: 'calls', prefix: 'in/' },
      output,
      filters: {},
      limit: 2,
    });
    expect(all.objects.map((o) => o.key)).toEqual(['in/a.wav']);
    expect(all).toMatchObject({ lastKey: 'in/b.txt', finished: false });
    const rest = await listWatchedObjects(store, {
      source: { bucket: 'calls', prefix: 'in/' },
      output,
      filters: {},
      after: 'in/a.wav',
      limit: 10,
      modifiedSinceMs: Date.parse('2026-11-26T08:30:00Z'),
    });
    expect(rest.objects).toEqual([
      { key: 'in/b.wav', etag: 'eb', size: 2, modifiedMs: Date.parse('2026-11-26T09:00:00Z') },
      { key: 'in/c.wav', etag: 'ec', size: 3, modifiedMs: Date.parse('2026-11-26T09:00:00Z') },
    ]);
    // in/d.wav is done: left out, counted.
    expect(rest).toMatchObject({ lastKey: 'in/d.wav', finished: true, done: 1 });
  });

  it('answers a bucket that does not exist as the source missing, not as a failure', async () => {
    const store = fakeStore();
    const gone = Object.assign(store, {
      withBucket: () => ({
        listPage: async () => {
          throw Object.assign(new Error('NoSuchBucket'), {
            name: 'NoSuchBucket',
            $metadata: { httpStatusCode: 404 },
          });
        },
      }),
    });
    const listing = await listWatchedObjects(gone, {
      source: { bucket: 'gone', prefix: '' },
      output,
      filters: {},
      limit: 10,
    });
    expect(listing).toEqual({
      objects: [],
      done: 0,
      finished: true,
      missing: 'the bucket does not exist (HTTP 404)',
    });
  });
});

describe('admitWatchedObjects', () => {
  it('starts an unchanged recording, and settles again, drops or skips the others with why', async () => {
    const store = fakeStore();
    const results = store.withBucket('results') as ReturnType<typeof fakeStore>;
    store.putAt('in/new.wav', RIFF, 'e1');
    store.putAt('in/changed.wav', RIFF, 'e2-now');
    store.putAt('in/done.wav', RIFF, 'e3');
    store.putAt('in/failed.wav', RIFF, 'e4');
    store.putAt('in/failed-old.wav', RIFF, 'e5-new');
    store.putAt('in/readme', 'plain text, not audio at all', 'e6');
    const idOf = (key: string) => callIdOf({ bucket: 'calls', key });
    results.putAt(callOutputKeys(output, idOf('in/done.wav')).result, '{}', 'r');
    const failedSource = { bucket: 'calls', key: 'in/failed.wav', etag: 'e4', size: RIFF.length };
    results.putAt(
      callOutputKeys(output, idOf('in/failed.wav')).error,
      JSON.stringify({ workflowId: workflowIdOf(failedSource, idOf('in/failed.wav')) }),
      'x',
    );
    // error.json of an earlier version: the new version is new work.
    results.putAt(
      callOutputKeys(output, idOf('in/failed-old.wav')).error,
      JSON.stringify({ workflowId: 'call-of-the-old-version' }),
      'y',
    );
    const object = (key: string, etag: string) => ({ key, etag, size: RIFF.length });
    const verdicts = await admitWatchedObjects(
      store,
      {
        bucket: 'calls',
        output,
        filters: {},
        objects: [
          object('in/new.wav', 'e1'),
          object('in/changed.wav', 'e2'),
          object('in/deleted.wav', 'e0'),
          object('in/done.wav', 'e3'),
          object('in/failed.wav', 'e4'),
          object('in/failed-old.wav', 'e5-new'),
          { key: 'in/readme', etag: 'e6', size: 28 },
        ],
      },
      { mode: 'auto' },
    );
    const source = { bucket: 'calls', key: 'in/new.wav', etag: 'e1', size: RIFF.length };
    expect(verdicts).toEqual([
      {
        key: 'in/new.wav',
        verdict: 'start',
        callId: idOf('in/new.wav'),
        workflowId: workflowIdOf(source, idOf('in/new.wav')),
        etag: 'e1',
        size: RIFF.length,
      },
      { key: 'in/changed.wav', verdict: 'changed', etag: 'e2-now', size: RIFF.length },
      { key: 'in/deleted.wav', verdict: 'gone' },
      { key: 'in/done.wav', verdict: 'skipped', why: 'done' },
      { key: 'in/failed.wav', verdict: 'skipped', why: 'failed-before' },
      expect.objectContaining({ key: 'in/failed-old.wav', verdict: 'start' }),
      { key: 'in/readme', verdict: 'skipped', why: 'not-a-recording' },
    ]);
  });
});
