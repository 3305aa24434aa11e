/** Runs the workers of the given queues in this process until SIGINT/SIGTERM, then shuts down gracefully. */
import type { Worker } from '@temporalio/worker';
import { loadConfig } from '../schemas/config.ts';
import { connect, freeLoopbackPort, installRuntime, serveMetrics } from './runtime.ts';
import { createQueueWorker, type QueueName } from './workers.ts';
import { stopWithParent } from './parent-watch.ts';
import { checkProcessResources } from './process-resources.ts';

export async function runWorkers(queues: QueueName[]): Promise<void> {
  const config = loadConfig();
  // Before anything opens: a limit the process cannot hold is an error at start, not EMFILE at midnight.
  const resources = checkProcessResources(config.limits, queues);
  const temporalMetricsPort = await freeLoopbackPort();
  installRuntime(config, { temporalMetricsPort });
  // Metrics come up before the workers so a scrape never finds the port closed while they start.
  let workers: Worker[] = [];
  const metrics = await serveMetrics(config.stack.metricsPort, {
    host: config.stack.metricsHost,
    temporalPort: temporalMetricsPort,
    ready: () => workers.length > 0 && workers.every((w) => w.getState() === 'RUNNING'),
  });
  console.log(JSON.stringify({ msg: 'metrics ready', url: metrics.url }));
  console.log(JSON.stringify({ msg: 'process resources', ...resources }));
  const connection = await connect(config);
  try {
    workers = await Promise.all(queues.map((q) => createQueueWorker(q, { config, connection })));
    // The SDK's Runtime shuts workers down on SIGINT/SIGTERM; `run()` resolves once they have drained.
    const running = Promise.all(workers.map((w) => w.run()));
    console.log(
      JSON.stringify({ msg: 'workers ready', queues, taskQueues: workers.map((w) => w.options.taskQueue) }),
    );
    await running;
  } finally {
    await connection.close();
    metrics.server.close();
  }
}

/** Entry-script convention: one run() and a catch that exits non-zero. */
export function main(queues: QueueName[]): void {
  stopWithParent();
  runWorkers(queues).catch((err: unknown) => {
    console.error(JSON.stringify({ level: 'ERROR', msg: 'worker failed', error: (err as Error).message }));
    process.exit(1);
  });
}
