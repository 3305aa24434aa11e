/**
 * One function per task queue (DESIGN.md, Task queues and limits), each returning a configured Worker.
 * The entry points (`media.ts`, `asr.ts`, `nlp.ts`, `workflows.ts`, `all.ts`) only choose which to run.
 */
import { Worker, type NativeConnection } from '@temporalio/worker';
import { taskQueues, type Config } from '../schemas/config.ts';
import { createObjectStore } from '../activities/storage/object-store.ts';
import { createStorageActivities } from '../activities/storage/activities.ts';
import { workflowSource } from './runtime.ts';

export type QueueName = 'workflows' | 'media' | 'asr' | 'nlp';
export const QUEUE_NAMES: QueueName[] = ['workflows', 'media', 'asr', 'nlp'];

export interface WorkerDeps {
  config: Config;
  connection: NativeConnection;
}

/** The worker of one queue, or undefined while that queue has no activities to serve. */
export async function createQueueWorker(
  queue: QueueName,
  { config, connection }: WorkerDeps,
): Promise<Worker | undefined> {
  const queues = taskQueues(config);
  const base = { connection, namespace: config.temporal.namespace, taskQueue: queues[queue] };
  switch (queue) {
    case 'workflows':
      return Worker.create({ ...base, ...workflowSource() });
    case 'media': {
      const store = createObjectStore(config.s3);
      return Worker.create({
        ...base,
        activities: { ...createStorageActivities({ store }) },
        // ffmpeg is CPU-bound: about one per core.
        maxConcurrentActivityTaskExecutions: config.limits.mediaConcurrency,
      });
    }
    case 'asr':
      return undefined;
      return Worker.create({
        ...base,
        activities: {},
        // Open recognition streams are capped by the account's concurrent sessions (spec 02: 550).
        maxConcurrentActivityTaskExecutions: config.limits.asrConcurrentSessions,
      });
    case 'nlp':
      return undefined;
      return Worker.create({
        ...base,
        activities: {},
        maxConcurrentActivityTaskExecutions: config.limits.nlpConcurrency,
        // Server-side rate limit across every worker of this queue.
        maxTaskQueueActivitiesPerSecond: config.limits.nlpRequestsPerSecond,
      });
  }
}
