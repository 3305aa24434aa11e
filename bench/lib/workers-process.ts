/**
 * A workers process of a drill's own (the stack's worker entry, `workers/all.ts`), on its own task
 * queue prefix and, when given, its own emulator: a drill may SIGKILL it and start another.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { ManagedProcess } from '../../cli/stack/process.ts';
import { PROJECT_ROOT, toolEnv } from '../../cli/tools/provision.ts';
import type { RunningStack } from '../../cli/stack/stack.ts';
import { WORKFLOWS_PATH } from '../../workers/runtime.ts';

/** Bundles the workflows once (each worker start would otherwise spend seconds on it). */
export async function writeWorkflowBundle(dir: string): Promise<string> {
  const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error };
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quiet });
  const path = join(dir, 'workflow-bundle.js');
  writeFileSync(path, code);
  return path;
}

export function workersProcess(
  stack: RunningStack,
  options: { name: string; bundlePath: string; env: Record<string, string> },
): ManagedProcess {
  let ready = false;
  // Stray AWS_* variables would point the S3 client elsewhere (as in the stack's own children).
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
  return new ManagedProcess({
    name: options.name,
    command: process.execPath,
    args: ['--import', 'tsx', join(PROJECT_ROOT, 'workers', 'all.ts')],
    cwd: PROJECT_ROOT,
    env: {
      ...clean,
      ...toolEnv(stack.tools),
      ...stack.env,
      CALLPIPE_WORKFLOW_BUNDLE: options.bundlePath,
      CALLPIPE_METRICS_PORT: '0',
      ...options.env,
    },
    logFile: join(stack.addresses.home, 'logs', `${options.name}.log`),
    onStdoutLine: (line) => {
      if (line.includes('"workers ready"')) ready = true;
    },
    healthCheck: async () => ready,
    startTimeoutMs: 120_000,
  });
}
