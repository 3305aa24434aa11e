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

    /** Deletes every staging object under each prefix. */
    async deleteStaging(input: { prefixes: string[] }): Promise<{ deleted: number }> {
      let deleted = 0;
      for (const prefix of input.prefixes) deleted += await store.deletePrefix(prefix);
      return { deleted };
    },
  };
}

export type CallStateActivities = ReturnType<typeof createCallStateActivities>;
