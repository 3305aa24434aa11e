/**
 * One function per task queue (docs/design.md, Task queues and limits), each returning a configured Worker.
 * The entry points (`media.ts`, `asr.ts`, `nlp.ts`, `workflows.ts`, `all.ts`) only choose which to run.
 */
import {
  Worker,
  type ActivityInterceptorsFactory,
  type NativeConnection,
  type WorkerTuner,
} from '@temporalio/worker';
import { taskQueues, type Config } from '../schemas/config.ts';
import { workflowSource } from './runtime.ts';
import { temporalClient, temporalDataConverter } from './temporal-connection.ts';
import { SessionBudgetClient, sessionBudgetAddress } from './session-budget-client.ts';
import { sessionSlotSupplier } from './session-slots.ts';
import { localPieceLeases } from './local-piece-leases.ts';
import { deploymentVersionOf, workerDeploymentOptions } from './versioning.ts';
import { RunningActivities } from './running-activities.ts';
import {
  asrQueueActivities,
  mediaQueueActivities,
  nlpQueueActivities,
  workflowsQueueActivities,
} from './queue-activities.ts';

export type QueueName = 'workflows' | 'media' | 'probe' | 'asr' | 'nlp';
export const QUEUE_NAMES: QueueName[] = ['workflows', 'media', 'probe', 'asr', 'nlp'];

export interface WorkerDeps {
  config: Config;
  connection: NativeConnection;
  /** The process's activity interceptors (the event-loop watchdog's), on every worker of the process. */
  activityInterceptors?: ActivityInterceptorsFactory[];
}

export async function createQueueWorker(
  queue: QueueName,
  { config, connection, activityInterceptors = [] }: WorkerDeps,
): Promise<Worker> {
  const queues = taskQueues(config);
  const base = {
    connection,
    namespace: config.temporal.namespace,
    taskQueue: queues[queue],
    interceptors: { activity: activityInterceptors },
    dataConverter: temporalDataConverter(config.temporal),
    // Every queue's workers are one Deployment Version, so a pinned call's activities run on its build.
    workerDeploymentOptions: workerDeploymentOptions(deploymentVersionOf(config)),
  };
  switch (queue) {
    case 'workflows':
      // Workflows, and the batches' small listing/report activities (no CPU, no service calls).
      return Worker.create({
        ...base,
        ...workflowSource(),
        activities: workflowsQueueActivities({
          config,
          temporal: temporalClient(connection, config.temporal),
        }),
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
    case 'asr': {
      // The account's budget knows every asr worker and the sessions it runs, and fails them when the
      // worker is lost (workflows/session-budget.ts), whether or not it also shares the account's limit.
      const running = new RunningActivities();
      const budget = new SessionBudgetClient({
        client: temporalClient(connection, config.temporal),
        limit: config.limits.asrAccountSessions ?? config.limits.asrConcurrentSessions,
        leaseTtlMs: config.limits.asrLeaseSeconds * 1000,
        ...sessionBudgetAddress(config),
        warn: (message, meta) => console.error(JSON.stringify({ level: 'WARN', msg: message, ...meta })),
        running,
      });
      await budget.start();
      // File requests beyond an activity's own slot hold leases of the account's budget when its limit is
      // shared, as streams' slots do; else of the process's own count (pieces-activities.ts).
      const activities = asrQueueActivities({
        config,
        pieceLeases: config.limits.asrAccountSessions
          ? budget
          : localPieceLeases(config.limits.asrConcurrentSessions),
      });
      const asrBase = {
        ...base,
        activities,
        interceptors: { activity: [...activityInterceptors, running.interceptor] },
      };
      // Open recognition streams: this process's cap, and, when the account's limit is set, a lease on
      // one of the account's sessions from its budget (spec 02: 550 No Resource beyond the limit).
      const worker = await Worker.create(
        config.limits.asrAccountSessions
          ? {
              ...asrBase,
              tuner: sessionTuner(budget, config.limits.asrConcurrentSessions),
              // A poll holds a lease while it waits for a task: no more polls than the process could use.
              maxConcurrentActivityTaskPolls: Math.min(5, config.limits.asrConcurrentSessions),
            }
          : { ...asrBase, maxConcurrentActivityTaskExecutions: config.limits.asrConcurrentSessions },
      ).catch(async (err: unknown) => {
        await budget.close();
        throw err;
      });
      return afterRun(worker, () => budget.close());
    }
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

/** The asr worker's slots under an account budget; the other kinds are unused on that queue. */
function sessionTuner(budget: SessionBudgetClient, perProcess: number): WorkerTuner {
  return {
    activityTaskSlotSupplier: sessionSlotSupplier(budget, perProcess),
    workflowTaskSlotSupplier: { type: 'fixed-size', numSlots: 1 },
    localActivityTaskSlotSupplier: { type: 'fixed-size', numSlots: 1 },
    nexusTaskSlotSupplier: { type: 'fixed-size', numSlots: 1 },
  };
}

/** `worker`, whose `run()` does `cleanup` once the worker has stopped, however it stopped. */
function afterRun(worker: Worker, cleanup: () => Promise<void>): Worker {
  const run = worker.run.bind(worker);
  worker.run = () => run().finally(cleanup);
  return worker;
}
