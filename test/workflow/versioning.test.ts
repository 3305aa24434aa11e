/**
 * Worker Versioning on the project's dev server (workers/versioning.ts): a call runs PINNED on the build
 * that was current when it started, even after another build is made current while it runs; new calls
 * go to the new build; the replaced build reports drained once its last pinned call is done. Two
 * versioned workers of one Worker Deployment (each test's own) serve one task queue, as two builds of a
 * rainbow deploy do.
 */
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { processRecording } from '../../workflows/process-recording.ts';
import {
  currentBuildId,
  isDrained,
  makeVersionCurrent,
  workerDeploymentOptions,
  type DeploymentVersion,
} from '../../workers/versioning.ts';
import { mockActivities, processInput, uniqueQueue, useTestEnv, waitFor, type Mocks } from './helpers.ts';

const testEnv = useTestEnv();

/** A versioned worker of `version` serving every workflow and mocked activity on `taskQueue`. */
async function versionedWorker(taskQueue: string, version: DeploymentVersion, mocks: Mocks) {
  const worker = await Worker.create({
    connection: testEnv().nativeConnection,
    namespace: testEnv().namespace ?? 'default',
    taskQueue,
    workflowBundle: { codePath: inject('workflowTestServer').bundlePath },
    activities: mocks.activities,
    shutdownGraceTime: '2 seconds',
    workerDeploymentOptions: workerDeploymentOptions(version),
  });
  return { worker, running: worker.run() };
}

/** The run's versioning behavior and the build it is on, as the server describes it. */
async function versioningOf(handle: WorkflowHandle) {
  const info = (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
  return { behavior: Number(info?.behavior), buildId: info?.deploymentVersion?.buildId ?? undefined };
}

/** The build of every workflow task the run completed (each worker stamps its own). */
async function taskBuilds(handle: WorkflowHandle): Promise<string[]> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).flatMap((e) => {
    const done = e.workflowTaskCompletedEventAttributes;
    return done ? [done.deploymentVersion?.buildId ?? done.workerVersion?.buildId ?? ''] : [];
  });
}

/** temporal.api.enums.v1.VersioningBehavior PINNED. */
const PINNED = 1;

describe('Worker Versioning: a rainbow deploy on one task queue', () => {
  it('a running call stays on its build after another is made current; new calls go to the new one; the old drains', async () => {
    const taskQueue = uniqueQueue('versions');
    const a: DeploymentVersion = { deploymentName: `${taskQueue}-deployment`, buildId: '1.0.0+aaaaaaaaaaaa' };
    const b: DeploymentVersion = { ...a, buildId: '1.0.0+bbbbbbbbbbbb' };
    const client = testEnv().client;
    const queues = [
      { name: taskQueue, kind: 'workflow' as const },
      { name: taskQueue, kind: 'activity' as const },
    ];
    // The first call's recognition waits until it is released: it is open across the version change.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const onA = mockActivities();
    const recognize = onA.recognizeSession.getMockImplementation()!;
    onA.recognizeSession.mockImplementation(async (input) => {
      await held;
      return recognize(input);
    });
    const onB = mockActivities();

    const workerA = await versionedWorker(taskQueue, a, onA);
    const workerB = await versionedWorker(taskQueue, b, onB);
    try {
      expect(await makeVersionCurrent(client, a, { queues })).toBe('made current');
      const first = await client.workflow.start(processRecording, {
        taskQueue,
        workflowId: `process-${taskQueue}-first`,
        args: [processInput(taskQueue, 'first-3f9a0c1e')],
      });
      await waitFor('the first call recognizing on A', () => onA.recognizeSession.mock.calls.length === 2);

      // B is made current while the first call runs; A stays as long as a call is pinned to it.
      expect(await makeVersionCurrent(client, b, { queues, onlyIfNone: true })).toBe(
        'another version is current',
      );
      expect(await makeVersionCurrent(client, b, { queues })).toBe('made current');
      expect(await currentBuildId(client, a.deploymentName)).toBe(b.buildId);
      const second = await client.workflow.start(processRecording, {
        taskQueue,
        workflowId: `process-${taskQueue}-second`,
        args: [processInput(taskQueue, 'second-3f9a0c1e')],
      });
      expect((await second.result()).status).toBe('done');
      expect(await versioningOf(second)).toEqual({ behavior: PINNED, buildId: b.buildId });
      expect(onB.probeSource).toHaveBeenCalledTimes(1);
      expect(await isDrained(client, a)).toBe(false);

      release();
      expect((await first.result()).status).toBe('done');
      expect(await versioningOf(first)).toEqual({ behavior: PINNED, buildId: a.buildId });
      // Every task of the first call ran on A, every activity too: none went to B's worker.
      expect(new Set(await taskBuilds(first))).toEqual(new Set([a.buildId]));
      expect(new Set(await taskBuilds(second))).toEqual(new Set([b.buildId]));
      expect(onA.publishResult).toHaveBeenCalledTimes(1);
      expect(onB.publishResult).toHaveBeenCalledTimes(1);
      // The server's drainage status (refreshed every 2 s on this server: global-setup.ts).
      await waitFor('A drained', () => isDrained(client, a), 60_000, 500);
    } finally {
      release();
      workerA.worker.shutdown();
      workerB.worker.shutdown();
      await Promise.all([workerA.running, workerB.running]);
    }
  });

  it('a first deploy is made current without the pollers that wait for leases; a later one waits for them', async () => {
    const taskQueue = uniqueQueue('leased');
    const a: DeploymentVersion = { deploymentName: `${taskQueue}-deployment`, buildId: '1.0.0+cccccccccccc' };
    const b: DeploymentVersion = { ...a, buildId: '1.0.0+dddddddddddd' };
    const client = testEnv().client;
    // The leased queue's pollers never come here, as an asr worker's do not before the session budget
    // runs (the budget is a workflow: it runs only on a current version).
    const queues = [
      { name: taskQueue, kind: 'workflow' as const },
      { name: `${taskQueue}-asr`, kind: 'activity' as const, leased: true },
    ];
    const workerA = await versionedWorker(taskQueue, a, mockActivities());
    const workerB = await versionedWorker(taskQueue, b, mockActivities());
    try {
      expect(await makeVersionCurrent(client, a, { queues, onlyIfNone: true })).toBe('made current');
      await expect(makeVersionCurrent(client, b, { queues, waitMs: 1000 })).rejects.toThrow(
        /no worker polling .*-asr/,
      );
      expect(await currentBuildId(client, a.deploymentName)).toBe(a.buildId);
    } finally {
      workerA.worker.shutdown();
      workerB.worker.shutdown();
      await Promise.all([workerA.running, workerB.running]);
    }
  });
});
