/**
 * `callpipe deploy`: the Worker Deployment's versions (workers/versioning.ts) and the one step of a
 * rainbow deploy that is not starting or stopping processes: making a build current (docs/operations.md,
 * "Deploying a new build"). The `temporal worker deployment` commands do the same; this one waits for the
 * build's workers to poll every queue first, so a build is never made current before it can take work.
 */
import { CliError, parseCommandArgs } from '../command.ts';
import { pipelineConfig } from '../stack-client.ts';
import { connectClient, temporalClient } from '../../workers/temporal-connection.ts';
import {
  allQueuesOf,
  buildIdOf,
  deploymentVersionOf,
  makeVersionCurrent,
  versionLabel,
} from '../../workers/versioning.ts';

export const summary =
  'shows the worker deployment\u2019s versions, or makes a build current (rainbow deploys)';

export const help = `Usage: callpipe deploy [status]
       callpipe deploy current [--build-id ID] [--wait SECONDS]

The workers of one build are one version of the Worker Deployment named by the task-queue prefix
(CALLPIPE_DEPLOYMENT_NAME overrides it). New calls start on the current version and stay on it to their
end (PINNED); batches, watches and the session budget move to it (AUTO_UPGRADE). A replaced version's
workers stop by themselves once no call pinned to it is open ("drained").

  status     the current version, and every version with its status and drainage
  current    make a build current once its workers poll every queue: a deploy, or a rollback to the
             build before (its workers must be running again first)

Options:
  --build-id ID    the build (default: CALLPIPE_BUILD_ID, else this checkout's ${'<version>+<commit>'})
  --wait SECONDS   how long to wait for the build's workers to poll (default 120)
`;

/** temporal.api.enums.v1.WorkerDeploymentVersionStatus and VersionDrainageStatus, as words. */
const STATUSES = ['unspecified', 'inactive', 'current', 'ramping', 'draining', 'drained'];
const DRAINAGE = ['', 'draining', 'drained'];

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('deploy', argv, {
    'build-id': { type: 'string' },
    wait: { type: 'string' },
  });
  const action = positionals[0] ?? 'status';
  if (!['status', 'current'].includes(action)) {
    throw new CliError(`deploy: unknown action '${action}' (status or current)`);
  }
  const wait = Number(values.wait ?? 120);
  if (!Number.isFinite(wait) || wait <= 0)
    throw new CliError(`deploy: --wait must be a positive number of seconds`);
  const { config } = pipelineConfig();
  const version = {
    ...deploymentVersionOf(config),
    buildId: values['build-id'] ?? buildIdOf(),
  };
  const connection = await connectClient(config.temporal);
  try {
    const client = temporalClient(connection, config.temporal);
    if (action === 'current') {
      const done = await makeVersionCurrent(client, version, {
        queues: allQueuesOf(config),
        waitMs: wait * 1000,
        identity: 'callpipe deploy',
      }).catch((err: unknown) => {
        throw new CliError(`deploy: ${(err as Error).message}`, 1);
      });
      console.log(`${versionLabel(version)}: ${done}`);
      return 0;
    }
    const described = await client.workflowService
      .describeWorkerDeployment({
        namespace: config.temporal.namespace,
        deploymentName: version.deploymentName,
      })
      .catch(() => undefined);
    const info = described?.workerDeploymentInfo;
    if (!info) {
      console.log(`no worker deployment ${version.deploymentName} yet (no versioned worker has polled)`);
      return 0;
    }
    console.log(`deployment ${version.deploymentName}`);
    for (const v of info.versionSummaries ?? []) {
      const status = STATUSES[Number(v.status)] ?? String(v.status);
      const drainage = DRAINAGE[Number(v.drainageStatus)] ?? '';
      console.log(
        `  ${v.deploymentVersion?.buildId}  ${status}${drainage && drainage !== status ? ` (${drainage})` : ''}`,
      );
    }
    return 0;
  } finally {
    await connection.close();
  }
}
