/**
 * Where a call stands in object storage: done (its `result.json` exists) or not, and the clean-up of
 * its staging objects once it is done.
 */
import type { ObjectStore } from './object-store.ts';

export function createCallStateActivities({ store }: { store: ObjectStore }) {
  return {
    /** Whether the call's `result.json` (a key of schemas/call-keys.ts) exists: the call is done. */
    async resultExists(input: { bucket: string; key: string }): Promise<boolean> {
      return store.withBucket(input.bucket).exists(input.key);
    },

    /** Deletes every staging object under each prefix. */
    async deleteStaging(input: { prefixes: string[] }): Promise<{ deleted: number }> {
      let deleted = 0;
      for (const prefix of input.prefixes) deleted += await store.deletePrefix(prefix);
      return { deleted };
    },
  };
}

export type CallStateActivities = ReturnType<typeof createCallStateActivities>;
