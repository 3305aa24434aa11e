/**
 * What every worker entry shares: the SDK runtime (installed once per process, structured JSON logs),
 * the connection, the workflow bundle (prebuilt when CALLPIPE_WORKFLOW_BUNDLE is set, else bundled
 * from `workflows/index.ts`), and the activities built from configuration.
 */
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  type LogEntry,
  type WorkerOptions,
} from '@temporalio/worker';
import type { Config } from '../schemas/config.ts';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

let runtimeInstalled = false;

/** Log lines are JSON with the SDK's context (workflow id, activity id…). Secrets never reach a logger. */
export function installRuntime(config: Config): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = config.logLevel.toUpperCase() as 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  Runtime.install({
    logger: new DefaultLogger(level, (entry: LogEntry) => {
      process.stderr.write(
        `${JSON.stringify({ time: new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString(), level: entry.level, msg: entry.message, ...entry.meta })}\n`,
      );
    }),
  });
}

export async function connect(config: Config): Promise<NativeConnection> {
  return NativeConnection.connect({ address: config.temporal.address });
}

/** Workflow code for Worker.create: a prebuilt bundle when given (tests, production images), else the sources. */
export function workflowSource(): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  const bundle = process.env.CALLPIPE_WORKFLOW_BUNDLE;
  if (bundle) return { workflowBundle: { code: readFileSync(bundle, 'utf8') } };
  return { workflowsPath: WORKFLOWS_PATH };
}
