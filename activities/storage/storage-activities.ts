/** Storage activities: small, idempotent object writes and reads on the `callpipe-media` queue. */
import type { ObjectStore } from './object-store.ts';

export interface StorageActivityDeps {
  store: ObjectStore;
}

export function createStorageActivities({ store }: StorageActivityDeps) {
  return {
    /** Writes a text object and reads it back: the stack's smoke test (`npm run demo` before the pipeline). */
    async writeAndReadBack(input: {
      key: string;
      text: string;
    }): Promise<{ key: string; text: string; bytes: number }> {
      await store.put(input.key, input.text, { contentType: 'text/plain; charset=utf-8' });
      const text = await store.getText(input.key);
      return { key: input.key, text, bytes: Buffer.byteLength(text) };
    },
  };
}

export type StorageActivities = ReturnType<typeof createStorageActivities>;
