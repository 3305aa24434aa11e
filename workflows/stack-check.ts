/** A tiny workflow that proves the stack end to end: worker → activity → S3 and back. */
import { proxyActivities } from '@temporalio/workflow';
import type { StorageActivities } from '../activities/storage/storage-activities.ts';
import { DEFAULT_TASK_QUEUE_PREFIX, taskQueuesOf } from '../schemas/task-queues.ts';
import { RETRY_POLICIES } from './activity-policies.ts';

const { writeAndReadBack } = proxyActivities<StorageActivities>({
  taskQueue: taskQueuesOf(DEFAULT_TASK_QUEUE_PREFIX).media,
  startToCloseTimeout: '1 minute',
  retry: RETRY_POLICIES.stackCheck,
});

interface StackCheckInput {
  key: string;
  text: string;
}

export async function stackCheck(
  input: StackCheckInput,
): Promise<{ key: string; text: string; bytes: number }> {
  return writeAndReadBack({ key: input.key, text: input.text });
}
