/** result.json files under a prefix of the stack's bucket: one per call done, never two. */
import type { ObjectStore } from '../../activities/storage/object-store.ts';

export async function countResultFiles(store: ObjectStore, prefix: string): Promise<number> {
  let n = 0;
  let next: string | undefined;
  do {
    const page = await store.listPage(prefix, next);
    n += page.objects.filter((o) => o.key.endsWith('/result.json')).length;
    next = page.next;
  } while (next);
  return n;
}
