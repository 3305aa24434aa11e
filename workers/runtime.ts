/**
 * What every worker entry shares: the SDK runtime (installed once per process, structured JSON logs),
 * the connection, the workflow bundle (prebuilt when CALLPIPE_WORKFLOW_BUNDLE is set, else bundled
 * from `workflows/index.ts`), and the activities built from configuration.
 */
import { fileURLToPath } from 'node:url';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import {
  bundleWorkflowCode,
  DefaultLogger,
  type NativeConnection,
  Runtime,
  type LogEntry,
  type WorkerOptions,
} from '@temporalio/worker';
import { processSettings } from '../schemas/process-settings.ts';
import { type Config } from '../schemas/config.ts';
import { connectWorkers } from './temporal-connection.ts';
import { FAILURE_CONVERTER_PATH } from './payload-codec.ts';
import { registry } from '../activities/metrics.ts';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

let runtimeInstalled = false;

/** Log lines are JSON with the SDK's context (workflow id, activity id…). Secrets never reach a logger. */
export function installRuntime(config: Config, options: { temporalMetricsPort?: number } = {}): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = config.logLevel.toUpperCase() as 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  Runtime.install({
    // Temporal's own metrics (task slots, latencies, polls…) on a loopback port that serveMetrics
    // folds into the one /metrics endpoint of the process.
    ...(options.temporalMetricsPort
      ? {
          telemetryOptions: {
            metrics: { prometheus: { bindAddress: `127.0.0.1:${options.temporalMetricsPort}` } },
          },
        }
      : {}),
    logger: new DefaultLogger(level, (entry: LogEntry) => {
      process.stderr.write(
        `${JSON.stringify({ time: new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString(), level: entry.level, msg: entry.message, ...entry.meta })}\n`,
      );
    }),
  });
}

export function connect(config: Config): Promise<NativeConnection> {
  return connectWorkers(config.temporal);
}

/** Bundling only warns and fails out loud: its progress lines would drown test and bench output. */
const bundlerLogger = {
  log() {},
  trace() {},
  debug() {},
  info() {},
  warn: (message: string) => console.error(message),
  error: (message: string) => console.error(message),
};

/**
 * The workflow bundle's code (seconds of CPU: build it once and share it), with the failure
 * converter the workers' data converter names (workers/payload-codec.ts), whatever the keys.
 */
export async function bundleWorkflows(): Promise<string> {
  return (
    await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      failureConverterPath: FAILURE_CONVERTER_PATH,
      logger: bundlerLogger,
    })
  ).code;
}

/** Writes the bundle to `<dir>/workflow-bundle.js` for workers to load (CALLPIPE_WORKFLOW_BUNDLE). */
export async function writeWorkflowBundle(dir: string): Promise<string> {
  const path = join(dir, 'workflow-bundle.js');
  writeFileSync(path, await bundleWorkflows());
  return path;
}

/** Workflow code for Worker.create: a prebuilt bundle when given (tests, production images), else the sources. */
export function workflowSource(): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  const bundle = processSettings().workflowBundle;
  if (bundle) return { workflowBundle: { code: readFileSync(bundle, 'utf8') } };
  return { workflowsPath: WORKFLOWS_PATH };
}

/** A loopback port free now, for Temporal's exporter (only serveMetrics reads it). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** What the worker process's HTTP endpoint needs besides the metrics. */
export interface MetricsServerOptions {
  /** Address to bind (CALLPIPE_METRICS_HOST): 127.0.0.1 by default, 0.0.0.0 in a container. */
  host: string;
  /** Temporal's exporter port, folded into `/metrics` (see {@link installRuntime}). */
  temporalPort?: number;
  /** Whether the process does its work now; `/readyz` answers 200 only then. Default: never ready. */
  ready?: () => boolean;
}

/**
 * The worker process's HTTP endpoint on `port` (0: any free port), for scrapers and orchestrators:
 * - `GET /metrics`: callpipe's counters (activities/metrics.ts) followed by Temporal's runtime metrics,
 *   fetched from the SDK's own exporter on `temporalPort` (the two runtimes cannot share one listener;
 *   scrapers see one target);
 * - `GET /livez`: 200 while the process serves HTTP at all (a liveness probe);
 * - `GET /readyz`: 200 while every worker of the process polls its task queue, 503 before (connecting,
 *   bundling) and after (draining on SIGTERM), so an orchestrator sends no traffic and counts no
 *   rollout step done until the workers really run.
 */
export async function serveMetrics(
  port: number,
  options: MetricsServerOptions,
): Promise<{ url: string; server: Server }> {
  const ready = options.ready ?? (() => false);
  const server = createServer((req, res) => {
    const path = req.url?.split('?')[0];
    if (path === '/livez') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('live\n');
      return;
    }
    if (path === '/readyz') {
      const ok = ready();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ready\n' : 'not ready\n');
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404).end('see /metrics, /readyz, /livez\n');
      return;
    }
    void (async () => {
      const ours = await registry.metrics();
      const temporal = options.temporalPort
        ? await fetch(`http://127.0.0.1:${options.temporalPort}/metrics`, {
            signal: AbortSignal.timeout(2000),
          })
            .then((r) => r.text())
            .catch(() => '# Temporal runtime metrics unavailable\n')
        : '';
      res.writeHead(200, { 'content-type': registry.contentType }).end(`${ours}\n${temporal}`);
    })().catch((err: unknown) => res.writeHead(500).end(String(err)));
  });
  const { host } = options;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host }, () => resolve());
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  return { url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics`, server };
}
