/**
 * A worker process for `test/integration/hostile.stuck-worker.test.ts`: the product's worker process
 * (`runWorkerProcess`: runtime, metrics, event-loop watchdog, connection) with a worker of the test's
 * own task queue (`STUCK_WORKER_TASK_QUEUE`) and two test-only activities:
 * - `ordinaryWork`: its first attempt heartbeats until the process ends (a call under way when the loop
 *   blocks); a later attempt returns its attempt and process id;
 * - `blockEventLoop`: once the ordinary work runs beside it, a catastrophic regular expression that never
 *   yields the event loop.
 */
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { Worker } from '@temporalio/worker';
import { loadConfig } from '../../schemas/config-loader.ts';
import { mainOf, runWorkerProcess } from '../../workers/run.ts';

const taskQueue = process.env.STUCK_WORKER_TASK_QUEUE;
if (!taskQueue) throw new Error('STUCK_WORKER_TASK_QUEUE is not set');

let ordinaryStarted!: () => void;
const ordinaryRunning = new Promise<void>((resolve) => (ordinaryStarted = resolve));

const activities = {
  async ordinaryWork(): Promise<{ attempt: number; pid: number }> {
    const ctx = Context.current();
    if (ctx.info.attempt > 1) return { attempt: ctx.info.attempt, pid: process.pid };
    ordinaryStarted();
    for (;;) {
      ctx.heartbeat();
      await sleep(1000);
    }
  },
  async blockEventLoop(): Promise<void> {
    await ordinaryRunning;
    catastrophicPattern();
  },
};

function catastrophicPattern(): boolean {
  return /(a+)+$/.test(`${'a'.repeat(64)}!`);
}

mainOf(() => {
  const config = loadConfig();
  return runWorkerProcess(
    config,
    async ({ connection, activityInterceptors }) => [
      await Worker.create({
        connection,
        namespace: config.temporal.namespace,
        taskQueue,
        workflowsPath: fileURLToPath(new URL('./stuck-worker-workflows.ts', import.meta.url)),
        activities,
        interceptors: { activity: activityInterceptors ?? [] },
      }),
    ],
    { queues: [taskQueue] },
  );
});
