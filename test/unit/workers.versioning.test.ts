/** A worker's Deployment Version (workers/versioning.ts): its name and build id, and what overrides them. */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../schemas/config-loader.ts';
import {
  buildIdOf,
  deploymentVersionOf,
  versionLabel,
  workerDeploymentOptions,
} from '../../workers/versioning.ts';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

describe('a worker deployment version', () => {
  it('takes CALLPIPE_BUILD_ID when set, else the package version and the commit, kept for the children', () => {
    expect(buildIdOf({ CALLPIPE_BUILD_ID: '1.0.1+abc' })).toBe('1.0.1+abc');
    const env: NodeJS.ProcessEnv = {};
    const computed = buildIdOf(env);
    expect(computed).toMatch(new RegExp(`^${VERSION.replaceAll('.', '\\.')}(\\+[0-9a-f]{12})?$`));
    // Kept in the environment: the processes this one starts are the same build.
    expect(env.CALLPIPE_BUILD_ID).toBe(computed);
  });

  it('is named by the task-queue prefix unless CALLPIPE_DEPLOYMENT_NAME says otherwise; PINNED by default', () => {
    const config = loadConfig({ env: { CALLPIPE_TASK_QUEUE_PREFIX: 'night' } });
    const version = deploymentVersionOf(config, { CALLPIPE_BUILD_ID: 'b1' });
    expect(version).toEqual({ deploymentName: 'night', buildId: 'b1' });
    expect(
      deploymentVersionOf(config, { CALLPIPE_BUILD_ID: 'b1', CALLPIPE_DEPLOYMENT_NAME: 'x' }).deploymentName,
    ).toBe('x');
    expect(versionLabel(version)).toBe('night:b1');
    expect(workerDeploymentOptions(version)).toEqual({
      version,
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'PINNED',
    });
  });
});
