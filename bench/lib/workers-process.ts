/**
 * Worker processes of a benchmark's own: the stack's worker entry (`workers/all.ts`), or one queue's.
 * A workers process of a drill's own (the stack's worker entry, `workers/all.ts`), on its own task
 * queue prefix and, when given, its own emulator: a drill may SIGKILL it and start another.
 */
import { join } from 'node:path';
import { ManagedProcess } from '../../cli/stack/process.ts';
import { PROJECT_ROOT, toolEnv } from '../../cli/tools/provision.ts';
import { workersProcess as stackWorkersProcess, type RunningStack } from '../../cli/stack/stack.ts';
import { typeScriptNode } from '../../scripts/node-runtime.mjs';

interface WorkersProcessOptions {
  name: string;
  bundlePath: string;
  env: Record<string, string>;
}

function workerEnv(stack: RunningStack, options: WorkersProcessOptions): NodeJS.ProcessEnv {
  // Stray AWS_* variables would point the S3 client elsewhere (as in the stack's own children).
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
  return {
    ...clean,
    ...toolEnv(stack.tools),
    ...stack.env,
    CALLPIPE_WORKFLOW_BUNDLE: options.bundlePath,
    CALLPIPE_METRICS_PORT: '0',
    ...options.env,
  };
}

export function workersProcess(stack: RunningStack, options: WorkersProcessOptions): ManagedProcess {
  return stackWorkersProcess(
    workerEnv(stack, options),
    join(stack.addresses.home, 'logs', `${options.name}.log`),
  );
}

/** One task queue's worker entry (`workers/<entry>.ts`: `workflows`, `media`, `asr`, `nlp`) as its own process. */
export function queueWorkerProcess(
  stack: RunningStack,
  entry: 'workflows' | 'media' | 'asr' | 'nlp',
  options: WorkersProcessOptions,
): ManagedProcess {
  return new ManagedProcess({
    name: options.name,
    command: typeScriptNode(),
    args: [join(PROJECT_ROOT, 'workers', `${entry}.ts`)],
    env: workerEnv(stack, options),
    cwd: PROJECT_ROOT,
    logFile: join(stack.addresses.home, 'logs', `${options.name}.log`),
    readyWhenLogged: '"workers ready"',
    startTimeoutMs: 120_000,
  });
}
