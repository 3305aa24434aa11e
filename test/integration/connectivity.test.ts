/**
 * Production connectivity, for real: workers and the `callpipe` command complete a call against an S3
 * server whose only identity comes from an AWS profile (a `credential_process` in a temp AWS config file).
 * Neither gets a key from callpipe's configuration; the stack's default keys are refused by that server,
 * so a fallback to them would fail the call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { ManagedProcess } from '../../cli/stack/process.ts';
import { resolvePorts } from '../../cli/stack/ports.ts';
import { s3ServerProcess, WEED_GRPC_OFFSET, type S3Identity } from '../../cli/stack/s3-server.ts';
import { workersProcess } from '../../cli/stack/stack.ts';
import { toolPaths } from '../../cli/tools/provision.ts';
import { createObjectStore, type ObjectStore } from '../../activities/storage/object-store.ts';
import { LOCAL_S3_ACCESS_KEY, LOCAL_S3_SECRET_KEY, loadConfig } from '../../schemas/config.ts';
import { callpipe } from '../helpers/cli.ts';
import { makeCall, uniquePrefix } from '../helpers/pipeline.ts';

const PROFILE = 'callpipe-archive';

/** The test stack's environment without anything that names S3 or its keys, and without AWS_* variables. */
function withoutS3(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      (e): e is [string, string] =>
        e[1] !== undefined && !e[0].startsWith('AWS_') && !e[0].startsWith('CALLPIPE_S3_'),
    ),
  );
}

describe('a call with S3 credentials only from an AWS profile', () => {
  const identity: S3Identity = {
    name: 'profile-only',
    accessKey: `AKIA${randomBytes(8).toString('hex').toUpperCase()}`,
    secretKey: randomBytes(20).toString('base64url'),
    actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
  };
  let home: string;
  let s3: ManagedProcess;
  let workers: ManagedProcess;
  let store: ObjectStore;
  let env: Record<string, string>;
  let endpoint: string;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'callpipe-connectivity-'));
    const { port } = await resolvePorts(
      { port: { port: 0, variable: '', offsets: [WEED_GRPC_OFFSET] } },
      'auto',
    );
    endpoint = `http://127.0.0.1:${port}`;
    // The harness alone knows the identity's keys (to start the server and read the result).
    const harness = loadConfig({
      env: {
        CALLPIPE_S3_ENDPOINT: endpoint,
        CALLPIPE_S3_ACCESS_KEY_ID: identity.accessKey,
        CALLPIPE_S3_SECRET_ACCESS_KEY: identity.secretKey,
      },
    }).s3;
    s3 = await s3ServerProcess({
      weed: toolPaths().weed,
      home,
      port,
      identities: [identity],
      config: harness,
      env: process.env,
    });
    await s3.start();
    store = createObjectStore(harness);

    // An AWS config file whose profile gets its keys from a process, as SSO helpers and vaults do.
    const helper = join(home, 'credentials-helper.mjs');
    writeFileSync(
      helper,
      `console.log(JSON.stringify({ Version: 1, AccessKeyId: ${JSON.stringify(identity.accessKey)}, SecretAccessKey: ${JSON.stringify(identity.secretKey)} }));\n`,
    );
    writeFileSync(
      join(home, 'aws-config'),
      `[profile ${PROFILE}]\nregion = eu-west-1\ncredential_process = ${process.execPath} ${helper}\n`,
    );
    writeFileSync(join(home, 'aws-credentials'), '');

    env = {
      ...withoutS3(inject('stackEnv')),
      // No stack file here: commands use the configuration below, not the test stack's.
      CALLPIPE_HOME: home,
      CALLPIPE_S3_ENDPOINT: endpoint,
      CALLPIPE_TASK_QUEUE_PREFIX: uniquePrefix('profile'),
      AWS_CONFIG_FILE: join(home, 'aws-config'),
      AWS_SHARED_CREDENTIALS_FILE: join(home, 'aws-credentials'),
      AWS_PROFILE: PROFILE,
      AWS_EC2_METADATA_DISABLED: 'true',
    };
    workers = workersProcess(
      {
        ...withoutS3(process.env),
        ...env,
        CALLPIPE_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
        CALLPIPE_METRICS_PORT: '0',
      },
      join(home, 'workers.log'),
    );
    await workers.start();
  });

  afterAll(async () => {
    await workers?.stop();
    await s3?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('is refused to the stack’s default keys and to no keys at all', async () => {
    const local = createObjectStore(
      loadConfig({
        env: {
          CALLPIPE_S3_ENDPOINT: endpoint,
          CALLPIPE_S3_ACCESS_KEY_ID: LOCAL_S3_ACCESS_KEY,
          CALLPIPE_S3_SECRET_ACCESS_KEY: LOCAL_S3_SECRET_KEY,
        },
      }).s3,
    );
    await expect(local.listPage('')).rejects.toMatchObject({ $metadata: { httpStatusCode: 403 } });
    expect((await store.listPage('')).objects).toEqual([]);
  });

  it('completes through the workers and `callpipe process`, with the secret in no log or output', async () => {
    const call = await makeCall(home, 'profile.wav', { durationSeconds: 6, seed: 14 });
    const run = await callpipe(['process', call.path, '--json'], {
      ...withoutS3(process.env),
      ...env,
    });
    expect(run.code, run.stderr).toBe(0);
    const [outcome] = JSON.parse(run.stdout.slice(run.stdout.indexOf('['))) as {
      status: string;
      resultKey: string;
    }[];
    expect(outcome!.status).toBe('done');
    const result = JSON.parse(await store.getText(outcome!.resultKey)) as { utterances: unknown[] };
    expect(result.utterances.length).toBeGreaterThan(0);
    const log = readFileSync(join(home, 'workers.log'), 'utf8');
    for (const text of [log, run.stdout, run.stderr]) expect(text).not.toContain(identity.secretKey);
  });
});
