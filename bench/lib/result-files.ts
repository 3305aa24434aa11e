/** result.json files under a prefix of the stack's bucket: one per call done, never two. */
import { listObjectsUnder, type ObjectStore } from '../../activities/storage/object-store.ts';

export async function countResultFiles(store: ObjectStore, prefix: string): Promise<number> {
  return (await listObjectsUnder(store, prefix)).filter((o) => o.key.endsWith('/result.json')).length;
}
