/**
 * Deploy drill (issue 39): a rainbow deploy and a rollback on the real local stack (Temporal dev
 * server, S3, emulator, ffmpeg), with Worker Versioning (workers/versioning.ts).
 *
 * Build A is the checked-out code; build B is the same code whose recording workflow has one more step
 * (it asks again whether the call is done just before publishing: one `resultExists` more), bundled by
 * a webpack loader (bench/lib/extra-step-loader.cjs). Each build is its own worker process with its own
 * build id. The night, in four waves of calls:
 *
 *   1. A current; wave `a` submitted; once it streams, B is made current (B's workers already polling);
 *      wave `b` submitted. A's worker process must exit by itself once drained.
 *   2. A's workers started again; wave `b2` submitted on B; once it streams, A is made current again
 *      (the rollback); wave `r` submitted. B's worker process must exit once drained.
 *
 * Checked per call: done, one workflow and one result.json per call, every workflow task completed by
 * the build it started on (PINNED), the extra step in B's calls only, no failed workflow task (a
 * nondeterminism error is one), none in the workers' logs either. Figures: bench/README.md.
 *
 *   node scripts/on-node.mjs ts bench/deploy.ts [--calls 4] [--keep]
 */
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import { resolveSource } from '../cli/submit.ts';
import type { ManagedProcess } from '../cli/stack/process.ts';
import { processRecording } from '../workflows/process-recording.ts';
import { WORKFLOWS_PATH, writeWorkflowBundle } from '../workers/runtime.ts';
import { FAILURE_CONVERTER_PATH } from '../workers/payload-codec.ts';
import {
  allQueuesOf,
  currentBuildId,
  makeVersionCurrent,
  type DeploymentVersion,
} from '../workers/versioning.ts';
import { countResultFiles } from './lib/result-files.ts';
import { startBenchStack } from './lib/bench-stack.ts';
import { BENCH_CACHE, nightSpecs, renderCalls } from './lib/night-set.ts';
import { runCalls, type CallsRun } from './lib/run-calls.ts';
import { workersProcess } from './lib/workers-process.ts';

const SPEED = 25;
const BUDGET = 16;
const log = (line: string) => console.error(`[deploy] ${line}`);
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Build B's one change: a step before publish that build A does not have. */
const EXTRA_STEP = {
  from: 'const written = await publishStage(call, findings, insights);',
  to: "await isDone(call); // build B's extra step\n    const written = await publishStage(call, findings, insights);",
};

async function bundleBuildB(dir: string): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    failureConverterPath: FAILURE_CONVERTER_PATH,
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn: console.error, error: console.error },
    webpackConfigHook: (config) => {
      config.module ??= {};
      config.module.rules = [
        ...(config.module.rules ?? []),
        {
          test: /workflows[\\/]process-recording\.ts$/,
          enforce: 'pre',
          use: [
            {
              loader: fileURLToPath(new URL('./lib/extra-step-loader.cjs', import.meta.url)),
              options: EXTRA_STEP,
            },
          ],
        },
      ];
      return config;
    },
  });
  const path = join(dir, 'workflow-bundle-b.js');
  await writeFile(path, code);
  return path;
}

/** What one call's history and description say about where it ran. */
async function callFacts(handle: WorkflowHandle) {
  const described = await handle.describe();
  const info = described.raw.workflowExecutionInfo?.versioningInfo;
  const { events } = await handle.fetchHistory();
  const builds = new Set<string>();
  let failedTasks = 0;
  let doneChecks = 0;
  for (const e of events ?? []) {
    const done = e.workflowTaskCompletedEventAttributes;
    if (done) builds.add(done.deploymentVersion?.buildId ?? done.workerVersion?.buildId ?? '?');
    if (e.workflowTaskFailedEventAttributes) failedTasks += 1;
    if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'resultExists') doneChecks += 1;
  }
  return {
    status: described.status.name,
    buildId: info?.deploymentVersion?.buildId ?? undefined,
    behavior: Number(info?.behavior),
    builds: [...builds],
    failedTasks,
    // Calls are redone (no done-check at the start): one `resultExists` is build B's extra step.
    extraStep: doneChecks === 1,
    closedAt: described.closeTime?.getTime(),
  };
}

interface Wave {
  name: string;
  expected: string;
  run: CallsRun;
  facts: Awaited<ReturnType<typeof callFacts>>[];
  workflows: number;
  results: number;
}

function nondeterminismLines(process: ManagedProcess): number {
  const text = readFileSync(process.options.logFile, 'utf8');
  return text.split('\n').filter((l) => /nondetermini/i.test(l)).length;
}

async function run(): Promise<void> {
  const { values } = parseArgs({
    options: { calls: { type: 'string', default: '4' }, keep: { type: 'boolean', default: false } },
  });
  const calls = Number(values.calls);
  const specs = nightSpecs({ calls, minSeconds: 120, maxSeconds: 300, seed: 39 });
  const paths = await renderCalls(specs, join(BENCH_CACHE, 'deploy'), log);
  const bench = await startBenchStack({
    label: 'deploy',
    speed: SPEED,
    budget: BUDGET,
    workers: false,
    keep: values.keep,
    log,
  });
  const started: ManagedProcess[] = [];
  try {
    const { pc, stack } = bench;
    const bundleA = await writeWorkflowBundle(bench.home);
    const bundleB = await bundleBuildB(bench.home);
    const deploymentName = pc.config.temporal.taskQueuePrefix;
    const a: DeploymentVersion = { deploymentName, buildId: '1.0.0+drill-a' };
    const b: DeploymentVersion = { deploymentName, buildId: '1.0.0+drill-b' };
    const queues = allQueuesOf(pc.config);
    const workers = async (name: string, version: DeploymentVersion, bundlePath: string) => {
      const p = workersProcess(stack, { name, bundlePath, env: { CALLPIPE_BUILD_ID: version.buildId } });
      await p.start();
      started.push(p);
      return p;
    };
    const sources = await Promise.all(
      specs.map(async (spec, i) => ({
        name: spec.name,
        source: await resolveSource(paths[i]!, pc.store, pc.config),
      })),
    );
    const streamed = async () => {
      const res = await fetch(`${stack.addresses.emulatorUrl}/emulator/stats`);
      return ((await res.json()) as { audioSeconds: number }).audioSeconds;
    };
    /** Resolves once the emulator has received `seconds` more audio than when asked: the wave streams. */
    const streaming = async (seconds: number) => {
      const from = await streamed();
      const deadline = Date.now() + 300_000;
      while ((await streamed()) - from < seconds) {
        if (Date.now() > deadline) throw new Error('the wave never streamed');
        await sleep(100);
      }
    };
    const wave = (name: string, expected: string, during?: () => Promise<void>) =>
      runCalls(pc, sources, {
        prefix: `deploy/${name}/`,
        batchId: `deploy-${name}`,
        ...(during ? { during: () => during() } : {}),
      }).then(async (run): Promise<Wave> => {
        const facts = await Promise.all(run.calls.map((c) => callFacts(c.submitted.handle)));
        const workflows = (
          await pc.client.workflow.count(
            `WorkflowType = '${processRecording.name}' AND CallpipeBatchId = "deploy-${name}"`,
          )
        ).count;
        const results = await countResultFiles(pc.store, `deploy/${name}/`);
        return { name, expected, run, facts, workflows, results };
      });

    const workersA = await workers('workers-a', a, bundleA);
    await sleep(0);
    for (let i = 0; (await currentBuildId(pc.client, deploymentName)) !== a.buildId; i++) {
      if (i > 600) throw new Error('build A never became current');
      await sleep(100);
    }
    const workersB = await workers('workers-b', b, bundleB);
    log(`A current; B polling`);

    // 1. The deploy: B made current while wave a streams on A.
    let switchAt = 0;
    let openAtSwitch = 0;
    let waveB: Promise<Wave> | undefined;
    const waveA = await wave('a', a.buildId, async () => {
      await streaming(30);
      log(`wave a streaming: making B current (${await makeVersionCurrent(pc.client, b, { queues })})`);
      switchAt = Date.now();
      waveB = wave('b', b.buildId);
    });
    openAtSwitch = waveA.facts.filter((f) => (f.closedAt ?? 0) > switchAt).length;
    const waveBDone = await waveB!;
    const lastA = Math.max(...waveA.facts.map((f) => f.closedAt ?? 0));
    const aExit = await Promise.race([workersA.exitStatus(), sleep(180_000).then(() => undefined)]);
    const aExitedAt = Date.now();
    log(`A's workers: ${aExit ? `exited with code ${aExit.code}` : 'still running after 180 s'}`);

    // 2. The rollback: A started again and made current while wave b2 streams on B.
    const workersA2 = await workers('workers-a2', a, bundleA);
    let rollbackAt = 0;
    let waveR: Promise<Wave> | undefined;
    const waveB2 = await wave('b2', b.buildId, async () => {
      await streaming(30);
      log(`wave b2 streaming: rolling back to A (${await makeVersionCurrent(pc.client, a, { queues })})`);
      rollbackAt = Date.now();
      waveR = wave('r', a.buildId);
    });
    const openAtRollback = waveB2.facts.filter((f) => (f.closedAt ?? 0) > rollbackAt).length;
    const waveRDone = await waveR!;
    const lastB = Math.max(...[...waveBDone.facts, ...waveB2.facts].map((f) => f.closedAt ?? 0));
    const bExit = await Promise.race([workersB.exitStatus(), sleep(180_000).then(() => undefined)]);
    const bExitedAt = Date.now();

    const waves = [waveA, waveBDone, waveB2, waveRDone];
    const summary = waves.map((w) => ({
      wave: w.name,
      calls: w.facts.length,
      done: w.run.calls.filter((c) => c.result.status === 'done').length,
      failed: w.run.calls.filter((c) => c.result.status === 'failed').length,
      workflows: w.workflows,
      resultFiles: w.results,
      onExpectedBuild: w.facts.filter((f) => f.buildId === w.expected && f.builds.join() === w.expected)
        .length,
      pinned: w.facts.filter((f) => f.behavior === 1).length,
      extraStep: w.facts.filter((f) => f.extraStep).length,
      failedWorkflowTasks: w.facts.reduce((n, f) => n + f.failedTasks, 0),
      wallSeconds: round(w.run.wallSeconds),
    }));
    const nondeterminism = [workersA, workersB, workersA2].reduce((n, p) => n + nondeterminismLines(p), 0);
    const figures = {
      speed: SPEED,
      callSeconds: specs.map((s) => s.durationSeconds),
      waves: summary,
      deploy: {
        openOnAAtSwitch: openAtSwitch,
        aWorkersExit: aExit ? `code ${aExit.code}` : 'none within 180 s',
        aExitAfterLastACallSeconds: aExit ? round((aExitedAt - lastA) / 1000) : undefined,
      },
      rollback: {
        openOnBAtRollback: openAtRollback,
        bWorkersExit: bExit ? `code ${bExit.code}` : 'none within 180 s',
        bExitAfterLastBCallSeconds: bExit ? round((bExitedAt - lastB) / 1000) : undefined,
      },
      nondeterminismLogLines: nondeterminism,
    };
    console.log(JSON.stringify(figures, null, 2));
    const ok =
      summary.every(
        (w) =>
          w.done === w.calls &&
          w.workflows === w.calls &&
          w.resultFiles === w.calls &&
          w.onExpectedBuild === w.calls &&
          w.pinned === w.calls &&
          w.failedWorkflowTasks === 0 &&
          w.extraStep === (w.wave === 'b' || w.wave === 'b2' ? w.calls : 0),
      ) &&
      nondeterminism === 0 &&
      openAtSwitch > 0 &&
      openAtRollback > 0 &&
      aExit?.code === 0 &&
      bExit?.code === 0;
    log(ok ? 'drill passed' : 'drill FAILED');
    process.exitCode = ok ? 0 : 1;
  } finally {
    for (const p of started) await p.stop().catch(() => undefined);
    await bench.close();
  }
}

await run();
