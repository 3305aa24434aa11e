/**
 * Production connectivity, for real: workers and the `callpipe` command complete a call
 * - against an S3 server whose only identity comes from an AWS profile (a `credential_process` in a temp
 *   AWS config file): neither gets a key from callpipe's configuration, and the stack's default keys are
 *   refused by that server, so a fallback to them would fail the call;
 * - with Temporal reached only through a TLS endpoint that requires a client certificate of a throwaway CA
 *   and an API key (a proxy of ours in front of the dev server, which serves plain gRPC only): the address,
 *   server name, CA and client pair come from a Temporal TOML profile, the API key from TEMPORAL_API_KEY, and
 *   no CALLPIPE_TEMPORAL_* variable names the dev server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { ManagedProcess } from '../../cli/stack/process.ts';
import { resolvePorts } from '../../cli/stack/ports.ts';
import { s3ServerProcess, WEED_GRPC_OFFSET, type S3Identity } from '../../cli/stack/s3-server.ts';
import { workersProcess } from '../../cli/stack/stack.ts';
import { toolPaths } from '../../cli/tools/provision.ts';
import { createObjectStore, type ObjectStore } from '../../activities/storage/object-store.ts';
import { LOCAL_S3_ACCESS_KEY, LOCAL_S3_SECRET_KEY } from '../../schemas/config.ts';
import { loadConfig } from '../../schemas/config-loader.ts';
import { callpipe } from '../helpers/cli.ts';
import { makeCall, uniquePrefix } from '../helpers/pipeline.ts';
import { makePki, type Pki } from '../helpers/throwaway-pki.ts';
import { startTlsProxy, type TlsProxy } from '../helpers/tls-proxy.ts';
import { connectClient } from '../../workers/temporal-connection.ts';

const PROFILE = 'callpipe-archive';
const TEMPORAL_PROFILE = 'secure';

/** An environment without anything that names S3, its keys or a Temporal server (AWS_*, TEMPORAL_* included). */
function withoutConnections(env: Record<string, string | undefined>): Record<string, string> {
  const names = /^(AWS_|TEMPORAL_|CALLPIPE_S3_|CALLPIPE_TEMPORAL_)/;
  return Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && !names.test(e[0])),
  );
}

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
let pki: Pki;
let proxy: TlsProxy;
const apiKey = `cp-${randomBytes(16).toString('hex')}`;

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

  // Temporal behind TLS with client certificates and an API key, described by a TOML profile.
  pki = makePki(join(home, 'pki'), 'temporal.test');
  proxy = await startTlsProxy({ target: inject('stack').temporalAddress, pki, apiKey });
  writeFileSync(
    join(home, 'temporal.toml'),
    [
      `[profile.${TEMPORAL_PROFILE}]`,
      `address = "${proxy.address}"`,
      `namespace = "${inject('stack').namespace}"`,
      `[profile.${TEMPORAL_PROFILE}.tls]`,
      `server_name = "${pki.serverName}"`,
      `server_ca_cert_path = "${pki.caCert}"`,
      `client_cert_path = "${pki.clientCert}"`,
      `client_key_path = "${pki.clientKey}"`,
      '',
    ].join('\n'),
  );

  env = {
    ...withoutConnections(inject('stackEnv')),
    // No stack file here: commands use the configuration below, not the test stack's.
    CALLPIPE_HOME: home,
    CALLPIPE_S3_ENDPOINT: endpoint,
    CALLPIPE_TASK_QUEUE_PREFIX: uniquePrefix('profile'),
    AWS_CONFIG_FILE: join(home, 'aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(home, 'aws-credentials'),
    AWS_PROFILE: PROFILE,
    AWS_EC2_METADATA_DISABLED: 'true',
    TEMPORAL_CONFIG_FILE: join(home, 'temporal.toml'),
    TEMPORAL_PROFILE,
    TEMPORAL_API_KEY: apiKey,
  };
  workers = workersProcess(
    {
      ...withoutConnections(process.env),
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
  await proxy?.close();
  await s3?.stop();
  rmSync(home, { recursive: true, force: true });
});

describe('a call with S3 credentials only from an AWS profile and Temporal only through mTLS', () => {
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

  it('refuses Temporal clients without a client certificate, or without the API key', async () => {
    const secure = loadConfig({ env }).temporal;
    expect(secure.address).toBe(proxy.address);
    const { clientCert: _c, clientKey: _k, ...noPair } = secure.tls!;
    await expect(connectClient({ ...secure, tls: noPair }, { connectTimeout: 5000 })).rejects.toThrow();
    const refused = proxy.refused;
    const withoutKey = await connectClient({ ...secure, apiKey: undefined }).then(
      () => undefined,
      (err: unknown) => err,
    );
    // The SDK wraps the server's answer: UNAUTHENTICATED with the proxy's reason, down the causes.
    const causes: string[] = [];
    for (let e = withoutKey; e instanceof Error; e = e.cause) causes.push(e.message);
    expect(causes.join(' / ')).toMatch(/missing or wrong API key/);
    expect(proxy.refused).toBeGreaterThan(refused);
  });

  it('completes through the workers and `callpipe process`, with no secret in a log or an output', async () => {
    const before = { worker: proxy.callsByClient.get('callpipe-worker') ?? 0, refused: proxy.refused };
    const call = await makeCall(home, 'profile.wav', { durationSeconds: 6, seed: 14 });
    const run = await callpipe(['process', call.path, '--json'], {
      ...withoutConnections(process.env),
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
    // Every call of the workers and the command went through the proxy, certified and with the key.
    expect(proxy.callsByClient.get('callpipe-worker')! - before.worker).toBeGreaterThan(10);
    expect(proxy.refused).toBe(before.refused);
    const log = readFileSync(join(home, 'workers.log'), 'utf8');
    for (const text of [log, run.stdout, run.stderr]) {
      expect(text).not.toContain(identity.secretKey);
      expect(text).not.toContain(apiKey);
    }
  });
});

describe('the S3 server of this file, stopped', () => {
  it('leaves none of its gRPC sockets in /tmp, where SeaweedFS puts them whatever TMPDIR says', async () => {
    const socket = `/tmp/seaweedfs-s3-grpc-${Number(new URL(endpoint).port) + WEED_GRPC_OFFSET}.sock`;
    expect(existsSync(socket)).toBe(true);
    await s3.stop();
    expect(existsSync(socket)).toBe(false);
  });
});
