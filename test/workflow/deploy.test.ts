/**
 * `callpipe deploy` (cli/commands/deploy.ts) against the workflow project's real Temporal dev server: the
 * command makes a build current once its workers poll every queue of the deployment, shows the versions,
 * rolls back to the build before the same way, and refuses (exit 1, the reason) a build with no workers.
 * Two builds' versioned workers (no-op activities: nothing runs on them here) serve every task queue of one
 * task-queue prefix, as two builds of a rainbow deploy do.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { NativeConnection, Worker } from '@temporalio/worker';
import { loadConfig } from '../../schemas/config-loader.ts';
import {
  allQueuesOf,
  currentBuildId,
  workerDeploymentOptions,
  type DeploymentVersion,
} from '../../workers/versioning.ts';
import { callpipe } from '../helpers/cli.ts';
import { uniqueQueue, useTestEnv } from './helpers.ts';

const testEnv = useTestEnv();

describe('callpipe deploy', () => {
  const prefix = uniqueQueue('deploy');
  const home = mkdtempSync(join(tmpdir(), 'callpipe-deploy-test-'));
  const server = inject('workflowTestServer');
  // The command's environment: this server, this prefix, no stack of its own (an empty home).
  const env = {
    CALLPIPE_HOME: home,
    CALLPIPE_TEMPORAL_ADDRESS: server.address,
    CALLPIPE_TEMPORAL_NAMESPACE: server.namespace,
    CALLPIPE_TASK_QUEUE_PREFIX: prefix,
  };
  const config = loadConfig({ env });
  const deploymentName = prefix;
  const a: DeploymentVersion = { deploymentName, buildId: '1.0.0+aaaaaaaaaaaa' };
  const b: DeploymentVersion = { deploymentName, buildId: '1.0.0+bbbbbbbbbbbb' };
  const workers: { worker: Worker; running: Promise<void> }[] = [];
  let connection: NativeConnection;

  /** Every queue of the prefix served by `version`'s workers: the workflows' with the bundle. */
  async function startBuild(version: DeploymentVersion) {
    const activities = { noop: async () => undefined };
    for (const queue of allQueuesOf(config).filter((q) => q.kind === 'activity')) {
      const serveWorkflows = allQueuesOf(config).some((q) => q.kind === 'workflow' && q.name === queue.name);
      const worker = await Worker.create({
        connection,
        namespace: server.namespace,
        taskQueue: queue.name,
        activities,
        ...(serveWorkflows ? { workflowBundle: { codePath: server.bundlePath } } : {}),
        shutdownGraceTime: '2 seconds',
        workerDeploymentOptions: workerDeploymentOptions(version),
      });
      workers.push({ worker, running: worker.run() });
    }
  }

  beforeAll(async () => {
    connection = await NativeConnection.connect({ address: server.address });
    await startBuild(a);
    await startBuild(b);
  });

  afterAll(async () => {
    for (const w of workers) w.worker.shutdown();
    await Promise.all(workers.map((w) => w.running));
    await connection?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('makes a build current, shows it, rolls back to the one before, and refuses a build with no workers', async () => {
    const client = testEnv().client;
    const deploy = (...args: string[]) => callpipe(['deploy', ...args], env);

    const first = await deploy('current', '--build-id', a.buildId);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`${deploymentName}:${a.buildId}: made current`);
    expect(await currentBuildId(client, deploymentName)).toBe(a.buildId);

    // A deploy: B current, A still listed (its pinned calls, none here, would finish on it).
    const second = await deploy('current', '--build-id', b.buildId);
    expect(second.code, second.stderr).toBe(0);
    expect(await currentBuildId(client, deploymentName)).toBe(b.buildId);
    const status = await deploy('status');
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`deployment ${deploymentName}`);
    expect(status.stdout).toMatch(new RegExp(`${b.buildId.replace('+', '\\+')}\\s+current`));
    expect(status.stdout).toContain(a.buildId);

    // The rollback: the same command with the build before.
    const back = await deploy('current', '--build-id', a.buildId);
    expect(back.code, back.stderr).toBe(0);
    expect(await currentBuildId(client, deploymentName)).toBe(a.buildId);

    // A build whose workers never polled is not made current: exit 1 with the reason, A stays current.
    const none = await deploy('current', '--build-id', '1.0.0+cccccccccccc', '--wait', '3');
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/deploy: /);
    expect(await currentBuildId(client, deploymentName)).toBe(a.buildId);
  }, 300_000);
});
