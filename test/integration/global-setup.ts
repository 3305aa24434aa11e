/**
 * One isolated local stack for the whole integration run: free ports, a temp CALLPIPE_HOME, the same
 * `startStack` that `callpipe up` runs, and one prebuilt workflow bundle. Torn down even when tests fail
 * (vitest calls the returned teardown in every case).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { isolatedStackConfig, startStack, type StackAddresses } from '../../cli/stack/stack.ts';
import { writeWorkflowBundle } from '../../workers/runtime.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    stack: StackAddresses;
    stackEnv: Record<string, string>;
    workflowBundlePath: string;
  }
}

/** Emulator speed of the test stack: recognition runs 100× faster than real time. */
export const TEST_EMULATOR_SPEED = 100;
/** Wall-clock slack of the test emulator's deadlines (see `setup`). */
export const TEST_DEADLINE_SLACK_MS = 3000;

interface SharedStack {
  addresses: StackAddresses;
  env: Record<string, string>;
  workflowBundlePath: string;
  stop(): Promise<void>;
}

/**
 * The projects that share the stack (`integration` and `integration-alone`, vitest.config.ts) each run
 * this setup, in the one vitest process: the first starts the stack, the others use it, and the last
 * teardown stops it. Kept on globalThis, since each project loads this module anew.
 */
const shared = globalThis as typeof globalThis & {
  callpipeTestStack?: { started: Promise<SharedStack>; users: number };
};

async function startTestStack(): Promise<SharedStack> {
  const home = mkdtempSync(join(tmpdir(), 'callpipe-test-'));
  // At speed 100 the emulator's 1-s deadlines and idle timeout are 10 and 100 ms: one stall of a loaded
  // 2-core machine would end a session with 552 or 651 and spend a restart the test did not inject. The
  // deadlines have their exact contract tests on a manual clock; here they get seconds of slack.
  process.env.CALLPIPE_EMULATOR_DEADLINE_SLACK_MS ??= String(TEST_DEADLINE_SLACK_MS);
  const workflowBundlePath = await writeWorkflowBundle(home);

  // Under the emulator's default account rate (50 requests/s): sentiment is one request per utterance.
  const config = isolatedStackConfig(home, TEST_EMULATOR_SPEED, {
    limits: { nlpRequestsPerSecond: 45, nlpConcurrency: 8 },
  });
  const stack = await startStack({
    config,
    workflowBundlePath,
    // The tests that read payloads run codec servers of their own (test/integration/payload-codec.test.ts
    // sees the Web UI without one first); `callpipe up`'s is tested in stack.up-command.test.ts.
    codecServer: false,
    log: (l) => console.error(`[stack] ${l}`),
  });
  return {
    addresses: stack.addresses,
    env: stack.env,
    workflowBundlePath,
    async stop() {
      await stack.stop();
      if (!process.env.CALLPIPE_KEEP_TEST_HOME) rmSync(home, { recursive: true, force: true });
    },
  };
}

export default async function setup(project: TestProject) {
  shared.callpipeTestStack ??= { started: startTestStack(), users: 0 };
  const entry = shared.callpipeTestStack;
  entry.users++;
  const stack = await entry.started;
  project.provide('stack', stack.addresses);
  project.provide('stackEnv', stack.env);
  project.provide('workflowBundlePath', stack.workflowBundlePath);

  return async () => {
    if (--entry.users > 0) return;
    delete shared.callpipeTestStack;
    await stack.stop();
  };
}
