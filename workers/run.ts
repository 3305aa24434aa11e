/** Runs the workers of the given queues in this process until SIGINT/SIGTERM, then shuts down gracefully. */
import type { Worker } from '@temporalio/worker';
import { loadConfig } from '../schemas/config-loader.ts';
import { type Config } from '../schemas/config.ts';
import { connect, freeLoopbackPort, installRuntime, serveMetrics } from './runtime.ts';
import { createQueueWorker, type QueueName, type WorkerDeps } from './workers.ts';
import { stopWithParent } from './parent-watch.ts';
import { costMeterInterceptor } from '../activities/cost/activity-meter.ts';
import { checkProcessResources } from './process-resources.ts';
import { FALLBACK_BOUND_MS, startEventLoopWatchdog, WATCHDOG_EXIT_CODE } from './event-loop-watchdog.ts';
import { sweepScratch } from '../activities/scratch.ts';
import { temporalClient } from './temporal-connection.ts';
import { deploymentVersionOf, followVersion, versionLabel } from './versioning.ts';

async function runWorkers(queues: QueueName[]): Promise<void> {
  const config = loadConfig();
  // Before anything opens: a limit the process cannot hold is an error at start, not EMFILE at midnight.
  const resources = checkProcessResources(config.limits, queues);
  await runWorkerProcess(config, (deps) => Promise.all(queues.map((q) => createQueueWorker(q, deps))), {
    queues,
    resources,
  });
}

/**
 * A worker process: the SDK runtime, the metrics endpoint, the event-loop watchdog, the connection, and
 * the workers `create` makes (the entries' queues; a test's own worker), run until they drain.
 */
export async function runWorkerProcess(
  config: Config,
  create: (deps: WorkerDeps) => Promise<Worker[]>,
  describe: { queues: string[]; resources?: object },
): Promise<void> {
  // First: a process that blocks while starting is as stuck as one that blocks later.
  const watchdog = startEventLoopWatchdog();
  console.log(
    JSON.stringify({
      msg: 'event loop watchdog',
      bound: 'the shortest heartbeat timeout of the running activities',
      fallbackBoundMs: FALLBACK_BOUND_MS,
      exitCode: WATCHDOG_EXIT_CODE,
    }),
  );
  // Scratch folders of worker processes killed before their exit handler ran (SIGKILL, OOM).
  const swept = sweepScratch();
  if (swept.length > 0)
    console.log(JSON.stringify({ msg: 'swept scratch of ended processes', folders: swept.length }));
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
  if (describe.resources) console.log(JSON.stringify({ msg: 'process resources', ...describe.resources }));
  const connection = await connect(config);
  let version: { stop(): void } | undefined;
  try {
    workers = await create({
      config,
      connection,
      activityInterceptors: [watchdog.interceptor, costMeterInterceptor],
    });
    // The SDK's Runtime shuts workers down on SIGINT/SIGTERM; `run()` resolves once they have drained.
    const running = Promise.all(workers.map((w) => w.run()));
    const deployment = deploymentVersionOf(config);
    console.log(
      JSON.stringify({
        msg: 'workers ready',
        queues: describe.queues,
        taskQueues: workers.map((w) => w.options.taskQueue),
        version: versionLabel(deployment),
      }),
    );
    // Current when the deployment has none; stopped (exit 0) once replaced and drained of pinned runs.
    version = followVersion(temporalClient(connection, config.temporal), deployment, workers, {
      config,
      drained: () => workers.forEach((w) => w.shutdown()),
      log: (msg, meta) => console.log(JSON.stringify({ msg, ...meta })),
    });
    await running;
  } finally {
    version?.stop();
    await connection.close();
    metrics.server.close();
    await watchdog.stop();
  }
}

/** Entry-script convention: one run() and a catch that exits non-zero. */
export function main(queues: QueueName[]): void {
  mainOf(() => runWorkers(queues));
}

/** Runs `run` as a worker entry: stops with the stack that started it, exits 1 when it fails. */
export function mainOf(run: () => Promise<void>): void {
  stopWithParent();
  run().catch((err: unknown) => {
    console.error(JSON.stringify({ level: 'ERROR', msg: 'worker failed', error: (err as Error).message }));
    process.exit(1);
  });
}
