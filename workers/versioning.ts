/**
 * Worker Versioning (Temporal's Worker Deployments): every worker of callpipe belongs to one Worker
 * Deployment (named by the task-queue prefix, or `CALLPIPE_DEPLOYMENT_NAME`) as one Deployment Version:
 * its build id, `<package version>+<git commit>` (or `CALLPIPE_BUILD_ID`, as a container image sets it).
 * A recording call and every other workflow that ends within hours is PINNED: it runs to its end on the
 * version it started on, so a change to workflow code ships as a new version and never needs a patch.
 * Workflows that live for days and continue as new (backfill, watch, session budget, nightly, rescore)
 * are AUTO_UPGRADE: they move to the current version at their next workflow task. Each workflow declares
 * its behavior beside its definition (workflows/versioning-behavior.ts).
 *
 * New workflows start on the deployment's current version. `callpipe up` makes its build current as it
 * starts its workers; a worker process makes its own version current when the deployment has none (a
 * first deploy, a test's stack); a later build becomes current only when asked (`callpipe deploy`, or
 * `temporal worker deployment set-current-version`), which is the rainbow deploy of docs/operations.md.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import type { Worker, WorkerDeploymentOptions } from '@temporalio/worker';
import { PROCESS_ENV_VARS, processSettings } from '../schemas/process-settings.ts';
import { taskQueues, type Config } from '../schemas/config.ts';
import { connectClient, temporalClient } from './temporal-connection.ts';

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface DeploymentVersion {
  deploymentName: string;
  buildId: string;
}

/** A task queue a version must serve before it can take work, and the kind of task it is polled for. */
export interface VersionQueue {
  name: string;
  kind: 'workflow' | 'activity';
  /**
   * Polled only under a lease of the account's session budget (the asr queue under a shared account
   * limit: workers/session-slots.ts). The budget is a workflow, and a workflow runs on the current
   * version: with none current yet (a first deploy) these pollers cannot come before the version is made
   * current, so they are not waited for then; once it is, the budget runs and they poll.
   */
  leased?: boolean;
}

/** Whether `config`'s asr workers poll only under leases of the account's budget. */
const asrLeased = (config: Pick<Config, 'limits'>) => config.limits.asrAccountSessions !== undefined;

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(`${PROJECT_ROOT}package.json`, 'utf8')) as { version: string };
  return pkg.version;
}

function gitCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
  } catch {
    return undefined; // no git (a container image): CALLPIPE_BUILD_ID names the build there
  }
}

/**
 * This process's build id: `CALLPIPE_BUILD_ID`, else the package version and the commit, computed once
 * and then kept in the process's environment, so the children it starts (the stack's workers, a test's
 * worker processes) are the same build even when a commit lands in between.
 */
export function buildIdOf(env: NodeJS.ProcessEnv = process.env): string {
  const given = processSettings(env).buildId;
  if (given) return given;
  const commit = gitCommit();
  const buildId = commit ? `${packageVersion()}+${commit}` : packageVersion();
  env[PROCESS_ENV_VARS.buildId] = buildId;
  return buildId;
}

/** The deployment version the workers of `config` join. */
export function deploymentVersionOf(config: Config, env: NodeJS.ProcessEnv = process.env): DeploymentVersion {
  return {
    deploymentName: processSettings(env).deploymentName ?? config.temporal.taskQueuePrefix,
    buildId: buildIdOf(env),
  };
}

/** A worker's deployment options: versioned, PINNED unless the workflow says otherwise. */
export function workerDeploymentOptions(version: DeploymentVersion): WorkerDeploymentOptions {
  return { version, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' };
}

/** `name:buildId`, as the Web UI and the `temporal` CLI show a version. */
export function versionLabel(version: DeploymentVersion): string {
  return `${version.deploymentName}:${version.buildId}`;
}

/** temporal.api.enums.v1.TaskQueueType, as the server reports a version's queues. */
const TASK_QUEUE_TYPES = { workflow: 1, activity: 2 } as const;

/** The task queues (and kinds) the server has seen this version's workers poll. */
async function polledQueues(client: Client, version: DeploymentVersion): Promise<Set<string>> {
  try {
    const described = await client.workflowService.describeWorkerDeploymentVersion({
      namespace: client.options.namespace,
      deploymentVersion: version,
    });
    const infos = described.workerDeploymentVersionInfo?.taskQueueInfos ?? [];
    return new Set(infos.map((q) => `${q.name}/${Number(q.type)}`));
  } catch (err) {
    if (grpcCode(err) === NOT_FOUND) return new Set();
    throw err;
  }
}

const NOT_FOUND = 5;

function grpcCode(err: unknown): number | undefined {
  return (err as { code?: number }).code;
}

/** The deployment's current version's build id; undefined when it has none (or no deployment yet). */
export async function currentBuildId(client: Client, deploymentName: string): Promise<string | undefined> {
  try {
    const described = await client.workflowService.describeWorkerDeployment({
      namespace: client.options.namespace,
      deploymentName,
    });
    const current = described.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion;
    return current?.buildId || undefined;
  } catch (err) {
    if (grpcCode(err) === NOT_FOUND) return undefined;
    throw err;
  }
}

export interface MakeCurrentOptions {
  /** Queues the version must serve first: a version made current before its workers poll takes no work. */
  queues: VersionQueue[];
  /** Only when the deployment has no current version (a first deploy). */
  onlyIfNone?: boolean;
  /** How long to wait for the queues' pollers, ms (default 60 s). */
  waitMs?: number;
  identity?: string;
}

/**
 * Makes `version` the deployment's current version once the server has seen its workers poll every
 * queue of `queues`: new workflows then start on it, AUTO_UPGRADE ones move to it, PINNED ones stay
 * where they started. Returns what was done. Throws, naming the queues, when the pollers never came.
 */
export async function makeVersionCurrent(
  client: Client,
  version: DeploymentVersion,
  options: MakeCurrentOptions,
): Promise<'made current' | 'already current' | 'another version is current'> {
  const current = await currentBuildId(client, version.deploymentName);
  if (current === version.buildId) return 'already current';
  if (current && options.onlyIfNone) return 'another version is current';
  const wanted = options.queues
    .filter((q) => current || !q.leased)
    .map((q) => `${q.name}/${TASK_QUEUE_TYPES[q.kind]}`);
  const deadline = Date.now() + (options.waitMs ?? 60_000);
  for (;;) {
    const polled = await polledQueues(client, version);
    const missing = wanted.filter((q) => !polled.has(q));
    if (missing.length === 0) break;
    if (Date.now() > deadline) {
      throw new Error(`version ${versionLabel(version)} has no worker polling ${missing.join(', ')}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await client.workflowService.setWorkerDeploymentCurrentVersion({
    namespace: client.options.namespace,
    deploymentName: version.deploymentName,
    buildId: version.buildId,
    identity: options.identity ?? 'callpipe',
  });
  return 'made current';
}

/** The queues (and kinds) `workers` poll: what their version must list before it is made current. */
export function queuesOf(workers: Worker[], config: Pick<Config, 'limits' | 'temporal'>): VersionQueue[] {
  const asr = taskQueues(config).asr;
  return workers.flatMap((w) => {
    const { taskQueue, workflowBundle, workflowsPath, activities } = w.options;
    const leased = taskQueue === asr && asrLeased(config);
    return [
      ...(workflowBundle || workflowsPath ? [{ name: taskQueue, kind: 'workflow' as const }] : []),
      ...(activities.size > 0
        ? [{ name: taskQueue, kind: 'activity' as const, ...(leased ? { leased } : {}) }]
        : []),
    ];
  });
}

/** temporal.api.enums.v1.WorkerDeploymentVersionStatus, as the server reports a version. */
const VERSION_STATUS = { inactive: 1, current: 2, ramping: 3, draining: 4, drained: 5 } as const;

/** The version's status: `drained` once it was replaced and no pinned workflow is left open on it. */
async function versionStatus(
  client: Client,
  version: DeploymentVersion,
): Promise<keyof typeof VERSION_STATUS | undefined> {
  const described = await client.workflowService.describeWorkerDeploymentVersion({
    namespace: client.options.namespace,
    deploymentVersion: version,
  });
  const status = Number(described.workerDeploymentVersionInfo?.status);
  return (Object.keys(VERSION_STATUS) as (keyof typeof VERSION_STATUS)[]).find(
    (k) => VERSION_STATUS[k] === status,
  );
}

/** Whether `version` was current once and has been replaced, with no pinned workflow left open on it. */
export async function isDrained(client: Client, version: DeploymentVersion): Promise<boolean> {
  return (await versionStatus(client, version)) === 'drained';
}

export interface VersionLifecycle {
  stop(): void;
}

/**
 * A worker process's part in its version's life: once its workers poll, it makes its version current
 * when the deployment has none (a first deploy); then, every `everyMs`, it asks the version's status, and
 * once it has seen the version take work (current, ramping or draining) and then drained (another
 * version is current and no pinned run is left here), calls `drained`, which shuts the workers down. A
 * version drained before this process started (workers started again for a rollback) is not a reason
 * to stop: it may be made current again. A question the server cannot answer is logged and asked again.
 */
export function followVersion(
  client: Client,
  version: DeploymentVersion,
  workers: Worker[],
  options: {
    config: Pick<Config, 'limits' | 'temporal'>;
    drained: () => void;
    log: (msg: string, meta: object) => void;
    everyMs?: number;
  },
): VersionLifecycle {
  // A test's own unversioned worker (test/helpers/stuck-worker.ts) has no version to follow.
  if (!workers.some((w) => w.options.workerDeploymentOptions?.useWorkerVersioning)) return { stop() {} };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const label = versionLabel(version);
  let active = false;
  const check = async () => {
    try {
      const status = await versionStatus(client, version);
      if (status === 'current' || status === 'ramping' || status === 'draining') active = true;
      if (active && status === 'drained') {
        options.log('version drained: stopping', { version: label });
        options.drained();
        return;
      }
    } catch (err) {
      options.log('version drainage unknown', { version: label, error: (err as Error).message });
    }
    if (!stopped) timer = setTimeout(() => void check(), options.everyMs ?? 10_000);
  };
  void makeVersionCurrent(client, version, { queues: queuesOf(workers, options.config), onlyIfNone: true })
    .then((done) => options.log('worker deployment version', { version: label, done }))
    .catch((err: unknown) =>
      options.log('version not made current', { version: label, error: (err as Error).message }),
    )
    .finally(() => {
      if (!stopped) void check();
    });
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

/** Every queue the all-queues worker entry (workers/all.ts) polls, as its version must list them. */
export function allQueuesOf(config: Config): VersionQueue[] {
  const queues = taskQueues(config);
  return [
    { name: queues.workflows, kind: 'workflow' },
    { name: queues.workflows, kind: 'activity' },
    ...[queues.media, queues.probe, queues.asr, queues.nlp].map((name) => ({
      name,
      kind: 'activity' as const,
      ...(name === queues.asr && asrLeased(config) ? { leased: true } : {}),
    })),
  ];
}

/**
 * The version of `config`'s workers made current, once they poll every queue (`callpipe up`, the
 * tests' stack, `callpipe deploy`): what was done.
 */
export async function makeCurrent(
  config: Config,
  version: DeploymentVersion,
  queues: VersionQueue[] = allQueuesOf(config),
): Promise<string> {
  const connection = await connectClient(config.temporal);
  try {
    return await makeVersionCurrent(temporalClient(connection, config.temporal), version, { queues });
  } finally {
    await connection.close();
  }
}
