/** A tiny workflow that proves the stack end to end: worker → activity → S3 and back. */
import { proxyActivities } from '@temporalio/workflow';
import type { StorageActivities } from '../activities/storage/activities.ts';

const { writeAndReadBack } = proxyActivities<StorageActivities>({
  taskQueue: 'callpipe-media',
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5 },
});

export interface StackCheckInput {
  key: string;
  text: string;
  /** Task queue of the media activities (tests use their own prefix). */
  mediaTaskQueue?: string;
}

export async function stackCheck(
  input: StackCheckInput,
): Promise<{ key: string; text: string; bytes: number }> {
  if (input.mediaTaskQueue) {
    const acts = proxyActivities<StorageActivities>({
      taskQueue: input.mediaTaskQueue,
      startToCloseTimeout: '1 minute',
      retry: { maximumAttempts: 5 },
    });
    return acts.writeAndReadBack({ key: input.key, text: input.text });
  }
  return writeAndReadBack({ key: input.key, text: input.text });
}
