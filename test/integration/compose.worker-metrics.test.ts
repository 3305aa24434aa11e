/**
 * A worker started the way docker-compose.yml starts it (its command, the image's ENV and the service's
 * environment) answers /metrics and /readyz from outside loopback, and the compose healthcheck's own command
 * says it is ready (readiness following the workers' state is test/unit/workers.metrics-server.test.ts). Only what names compose's hosts (temporal, s3, emulator) points at the test stack
 * instead, the metrics port is a free one (9464 may be taken on a shared machine; the compose unit test
 * checks the container port is the published one), and the task queues are this test's own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { ManagedProcess } from '../../cli/stack/process.ts';
import { PROJECT_ROOT } from '../../cli/tools/provision.ts';
import { typeScriptNode } from '../../scripts/node-runtime.mjs';
import { freeLoopbackPort } from '../../workers/runtime.ts';
import { ensurePayloadKeysFile } from '../../workers/payload-codec.ts';
import { ensureDigestKeyFile } from '../../schemas/personal-digest.ts';
import { composeFile, containerEnv } from '../helpers/compose.ts';
import { uniquePrefix } from '../helpers/pipeline.ts';

/** An address of this machine that is not loopback: what a scraper in another container would use. */
function outsideAddress(): string {
  const found = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && !a.internal && a.family === 'IPv4');
  if (!found) throw new Error('this machine has no non-loopback IPv4 address to probe the metrics port from');
  return found.address;
}

/** The compose healthcheck's command, run here with the container's environment. */
async function healthcheckPasses(test: string[], env: NodeJS.ProcessEnv): Promise<boolean> {
  const [kind, command, ...args] = test;
  if (kind !== 'CMD' || command !== 'node') throw new Error(`unexpected healthcheck ${test.join(' ')}`);
  return promisify(execFile)(process.execPath, args, { cwd: PROJECT_ROOT, env }).then(
    () => true,
    () => false,
  );
}

describe('a worker as docker-compose.yml starts it', () => {
  const service = composeFile().services['worker-nlp']!;
  const stackEnv = inject('stackEnv');
  const host = outsideAddress();
  let home: string;
  let worker: ManagedProcess;
  let env: NodeJS.ProcessEnv;
  let port: number;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'callpipe-compose-'));
    port = await freeLoopbackPort();
    ensurePayloadKeysFile(join(home, 'payload-keys'));
    ensureDigestKeyFile(join(home, 'digest-key'));
    const container = containerEnv(service);
    const hosts: Record<string, string> = {
      CALLPIPE_TEMPORAL_ADDRESS: stackEnv.CALLPIPE_TEMPORAL_ADDRESS!,
      CALLPIPE_S3_ENDPOINT: stackEnv.CALLPIPE_S3_ENDPOINT!,
      CALLPIPE_SERVICE_URL: stackEnv.CALLPIPE_SERVICE_URL!,
      CALLPIPE_AUTH_URL: stackEnv.CALLPIPE_AUTH_URL!,
    };
    for (const name of Object.keys(hosts))
      expect(container[name], `${name} names a compose host`).toMatch(/temporal:|s3:|emulator:/);
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...container,
      ...hosts,
      // The compose stack's key files (Docker secrets under /run/secrets), made here as the operator would.
      CALLPIPE_PAYLOAD_KEYS_FILE: join(home, 'payload-keys'),
      CALLPIPE_DIGEST_KEY_FILE: join(home, 'digest-key'),
      CALLPIPE_METRICS_PORT: String(port),
      CALLPIPE_TASK_QUEUE_PREFIX: uniquePrefix('compose'),
    };
    const [command, ...args] = service.command!;
    expect(command).toBe('node');
    worker = new ManagedProcess({
      name: 'worker-nlp',
      command: typeScriptNode(),
      args,
      env,
      cwd: PROJECT_ROOT,
      logFile: join(home, 'worker.log'),
      healthCheck: () => healthcheckPasses(service.healthcheck!.test!, env),
      startTimeoutMs: 120_000,
    });
    await worker.start();
  });

  afterAll(async () => {
    await worker?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('answers /metrics, /readyz and /livez on an address that is not loopback', async () => {
    const base = `http://${host}:${port}`;
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toContain('# TYPE callpipe_service_requests_total counter');
    expect(text).toMatch(/^temporal_\w+/m);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await fetch(`${base}/livez`)).status).toBe(200);
  });

  it('while a worker on the default (loopback) address is out of reach from there', async () => {
    const stackMetrics = new URL(inject('stack').metricsUrl!);
    expect((await fetch(stackMetrics)).status).toBe(200);
    await expect(fetch(`http://${host}:${stackMetrics.port}/metrics`)).rejects.toThrow();
  });
});
