/**
 * Where a call stands in object storage: done (its `result.json` exists) or not, and the clean-up of
 * its staging objects once it is done.
 */
import type { OutputLocation } from '../../schemas/recording.ts';
import type { ObjectStore } from './object-store.ts';
import { callOutputKey } from './call-id.ts';

export function createCallStateActivities({ store }: { store: ObjectStore }) {
  return {
    async resultExists(input: { output: OutputLocation; callId: string }): Promise<boolean> {
      return store
        .withBucket(input.output.bucket)
        .exists(callOutputKey(input.output, input.callId, 'result.json'));
    },

    /** Deletes staging objects: each entry is a key or a prefix ending in `/`. */
    async deleteStaging(input: { prefixes: string[] }): Promise<{ deleted: number }> {
      let deleted = 0;
      for (const prefix of input.prefixes) {
        if (prefix.endsWith('/')) deleted += await store.deletePrefix(prefix);
        else if (await store.exists(prefix)) deleted += await store.deletePrefix(prefix);
      }
      return { deleted };
    },
  };
}

export type CallStateActivities = ReturnType<typeof createCallStateActivities>;
