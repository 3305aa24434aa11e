/**
 * What a recognition benchmark without Temporal needs: an S3 server (SeaweedFS) and the emulator as a
 * process of its own (its CPU not in the measured process), on free ports, and the service config of the
 * emulator's local account. `close()` stops both and removes the temp home.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTools } from '../../cli/tools/provision.ts';
import { resolvePorts } from '../../cli/stack/ports.ts';
import type { ManagedProcess } from '../../cli/stack/process.ts';
import { devServerProcess, emulatorProcess } from '../../cli/stack/stack.ts';
import { s3ServerProcess, WEED_GRPC_OFFSET } from '../../cli/stack/s3-server.ts';
import { loadConfig } from '../../schemas/config-loader.ts';
import {
  LOCAL_CLIENT_ID,
  LOCAL_CLIENT_SECRET,
  LOCAL_DOMAIN_ID,
  LOCAL_S3_ACCESS_KEY,
  LOCAL_S3_SECRET_KEY,
  type S3Config,
  type ServiceConfig,
  type TemporalConfig,
} from '../../schemas/config.ts';

export interface StreamStack {
  s3: S3Config;
  emulatorUrl: string;
  /** With `temporal: true`: a Temporal dev server of the stack's own (no Web UI). */
  temporal?: TemporalConfig;
  home: string;
  close(): Promise<void>;
}

/** `emulatorArgs`: `callpipe emulator` options besides the port (speed, ceiling, sessions…). */
export async function startStreamStack(
  label: string,
  emulatorArgs: string[],
  options: { temporal?: boolean } = {},
): Promise<StreamStack> {
  const home = mkdtempSync(join(tmpdir(), `callpipe-${label}-`));
  const tools = ensureTools({ log: () => {} });
  const ports = await resolvePorts(
    {
      s3: { port: 0, variable: '', offsets: [WEED_GRPC_OFFSET] },
      emulator: { port: 0, variable: '' },
      temporal: { port: 0, variable: '' },
    },
    'auto',
  );
  const s3: S3Config = {
    ...loadConfig({ env: {} }).s3,
    endpoint: `http://127.0.0.1:${ports.s3}`,
    region: 'us-east-1',
    accessKeyId: LOCAL_S3_ACCESS_KEY,
    secretAccessKey: LOCAL_S3_SECRET_KEY,
    forcePathStyle: true,
  };
  const processes: ManagedProcess[] = [];
  const close = async () => {
    for (const p of processes.reverse()) await p.stop();
    rmSync(home, { recursive: true, force: true });
  };
  try {
    const weed = await s3ServerProcess({
      weed: tools.weed,
      home,
      port: ports.s3,
      identities: [
        {
          name: 'bench',
          accessKey: LOCAL_S3_ACCESS_KEY,
          secretKey: LOCAL_S3_SECRET_KEY,
          actions: ['Admin', 'Read', 'Write', 'List'],
        },
      ],
      config: s3,
      env: process.env,
    });
    await weed.start();
    processes.push(weed);
    const emulatorUrl = `http://127.0.0.1:${ports.emulator}`;
    const emulator = emulatorProcess(ports.emulator, emulatorArgs, home, process.env);
    await emulator.start();
    processes.push(emulator);
    if (!options.temporal) return { s3, emulatorUrl, home, close };
    const temporal: TemporalConfig = {
      ...loadConfig({ env: {} }).temporal,
      address: `127.0.0.1:${ports.temporal}`,
    };
    const server = devServerProcess({ temporal }, { temporal: ports.temporal }, home, tools, process.env);
    await server.start();
    processes.push(server);
    return { s3, emulatorUrl, temporal, home, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The service config of the emulator's local account at `emulatorUrl`. */
export function emulatorServiceConfig(
  emulatorUrl: string,
  model: string,
  speed: ServiceConfig['speed'],
): ServiceConfig {
  return {
    ...loadConfig({ env: {} }).service,
    baseUrl: `${emulatorUrl}/api/dev`,
    asrBaseUrl: undefined,
    authUrl: `${emulatorUrl}/v1/oauth/accesstokens`,
    clientId: LOCAL_CLIENT_ID,
    clientSecret: LOCAL_CLIENT_SECRET,
    domainId: LOCAL_DOMAIN_ID,
    model,
    speed,
  };
}
