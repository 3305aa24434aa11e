/**
 * The workflow project's one Temporal dev server (the `temporal` binary `scripts/bootstrap.mjs`
 * provisions into `.tools/bin/`) and one prebuilt workflow bundle, shared by every test file. Test files
 * connect with `TestWorkflowEnvironment.createFromExistingServer` and run their own workers with mocked
 * activities on a task queue of their own. No S3, ffmpeg or emulator.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { writeWorkflowBundle } from '../../workers/runtime.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../workflows/search-attribute-keys.ts';

export interface WorkflowTestServer {
  address: string;
  namespace: string;
  bundlePath: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    workflowTestServer: WorkflowTestServer;
  }
}

const TEMPORAL = fileURLToPath(new URL('../../.tools/bin/temporal', import.meta.url));

export default async function setup(project: TestProject) {
  if (!existsSync(TEMPORAL)) {
    throw new Error(`${TEMPORAL} is missing: run \`node scripts/bootstrap.mjs\` first`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'callpipe-workflow-test-'));
  const [bundlePath, env] = await Promise.all([
    writeWorkflowBundle(dir),
    TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: TEMPORAL },
        ip: '127.0.0.1',
        // The same custom search attributes the stack registers (schemas/search-attributes.ts).
        searchAttributes: Object.values(SEARCH_ATTRIBUTE_KEYS),
        // A replaced Worker Deployment Version reports drained within seconds, as on the stack's server
        // (cli/stack/stack.ts): test/workflow/versioning.test.ts waits for it.
        extraArgs: [
          ...['--dynamic-config-value', 'matching.wv.VersionDrainageStatusVisibilityGracePeriod="5s"'],
          ...['--dynamic-config-value', 'matching.wv.VersionDrainageStatusRefreshInterval="2s"'],
        ],
      },
    }),
  ]);
  project.provide('workflowTestServer', {
    address: env.address,
    namespace: env.namespace ?? 'default',
    bundlePath,
  });

  return async () => {
    await env.teardown();
    rmSync(dir, { recursive: true, force: true });
  };
}
