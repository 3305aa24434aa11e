/**
 * A workers process of a drill's own (the stack's worker entry, `workers/all.ts`), on its own task
 * queue prefix and, when given, its own emulator: a drill may SIGKILL it and start another.
 */
import { join } from 'node:path';
import type { ManagedProcess } from '../../cli/stack/process.ts';
import { toolEnv } from '../../cli/tools/provision.ts';
import { workersProcess as stackWorkersProcess, type RunningStack } from '../../cli/stack/stack.ts';

export function workersProcess(
  stack: RunningStack,
  options: { name: string; bundlePath: string; env: Record<string, string> },
): ManagedProcess {
  // Stray AWS_* variables would point the S3 client elsewhere (as in the stack's own children).
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
  return stackWorkersProcess(
    {
      ...clean,
      ...toolEnv(stack.tools),
      ...stack.env,
      CALLPIPE_WORKFLOW_BUNDLE: options.bundlePath,
      CALLPIPE_METRICS_PORT: '0',
      ...options.env,
    },
    join(stack.addresses.home, 'logs', `${options.name}.log`),
  );
}
