/**
 * One function per task queue (DESIGN.md, Task queues and limits), each returning a configured Worker.
 * The entry points (`media.ts`, `asr.ts`, `nlp.ts`, `workflows.ts`, `all.ts`) only choose which to run.
 */
import { Worker, type NativeConnection } from '@temporalio/worker';
import { taskQueues, type Config } from '../schemas/config.ts';
import { workflowSource } from './runtime.ts';
import {
  asrQueueActivities,
  mediaQueueActivities,
  nlpQueueActivities,
  workflowsQueueActivities,
} from './activities.ts';

export type QueueName = 'workflows' | 'media' | 'probe' | 'asr' | 'nlp';
export const QUEUE_NAMES: QueueName[] = ['workflows', 'media', 'probe', 'asr', 'nlp'];

export interface WorkerDeps {
  config: Config;
  connection: NativeConnection;
}

export async function createQueueWorker(
  queue: QueueName,
  { config, connection }: WorkerDeps,
): Promise<Worker> {
  const queues = taskQueues(config);
  const base = { connection, namespace: config.temporal.namespace, taskQueue: queues[queue] };
  switch (queue) {
    case 'workflows':
      // Workflows, and the batches' small listing/report activities (no CPU, no service calls).
      return Worker.create({
        ...base,
        ...workflowSource(),
        activities: workflowsQueueActivities({ config }),
      });
    case 'media':
      return Worker.create({
        ...base,
        activities: mediaQueueActivities({ config }),
        // ffmpeg is CPU-bound: about one per core.
        maxConcurrentActivityTaskExecutions: config.limits.mediaConcurrency,
      });
    case 'probe':
      // The same activities; the workflow sends only probes here (see limits.probeConcurrency).
      return Worker.create({
        ...base,
        activities: mediaQueueActivities({ config }),
        maxConcurrentActivityTaskExecutions: config.limits.probeConcurrency,
      });
    case 'asr':
      return Worker.create({
        ...base,
        activities: asrQueueActivities({ config }),
        // Open recognition streams: the account's concurrent sessions (spec 02: 550 No Resource beyond
        // it). With several asr workers, give each its share (see README).
        maxConcurrentActivityTaskExecutions: config.limits.asrConcurrentSessions,
      });
    case 'nlp':
      return Worker.create({
        ...base,
        activities: nlpQueueActivities({ config }),
        maxConcurrentActivityTaskExecutions: config.limits.nlpConcurrency,
        // Server-side rate limit across every worker of this queue.
        maxTaskQueueActivitiesPerSecond: config.limits.nlpRequestsPerSecond,
      });
  }
}
