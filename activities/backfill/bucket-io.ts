/** The object-storage reads and writes the batch's activities share: small JSON, first bytes, listings. */
import { listObjectsUnder, type ObjectInfo, type ObjectStore } from '../storage/object-store.ts';
import { SNIFF_BYTES } from '../media/sniff.ts';

/** HEAD requests in flight per listing activity (done-checks and manifest lookups). */
export const HEAD_CONCURRENCY = 16;

/** A stored page's file name, zero-padded so pages list in order. */
export const pageName = (n: number) => `page-${String(n).padStart(6, '0')}.json`;

export async function putJson(
  store: ObjectStore,
  bucket: string,
  key: string,
  value: unknown,
): Promise<void> {
  await store.withBucket(bucket).put(key, JSON.stringify(value), { contentType: 'application/json' });
}

/** The first bytes of an object (a ranged GET). */
export async function headBytes(store: ObjectStore, bucket: string, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.withBucket(bucket).getStream(key, { end: SNIFF_BYTES - 1 }))
    chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).subarray(0, SNIFF_BYTES);
}

/** Every object under a prefix of `bucket`, page after page. */
export function listAll(store: ObjectStore, bucket: string, prefix: string): Promise<ObjectInfo[]> {
  return listObjectsUnder(store.withBucket(bucket), prefix);
}
