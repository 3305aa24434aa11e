/**
 * The local stack's S3 server: SeaweedFS's `weed mini` on loopback, its data and identities under a home
 * folder, ready once its bucket exists. The stack runs one with its local keys; tests run their own with
 * identities of their choosing (an identity only an AWS profile provides).
 */
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { httpAnswers, ManagedProcess } from './process.ts';
import { resolvePorts } from './ports.ts';
import { createObjectStore } from '../../activities/storage/object-store.ts';
import type { S3Config } from '../../schemas/config.ts';

/** A Unix socket's path must fit `sun_path` (108 bytes on Linux, with its terminating NUL). */
const MAX_SOCKET_PATH_BYTES = 107;

/** SeaweedFS binds gRPC at each HTTP port + 10000. */
export const WEED_GRPC_OFFSET = 10000;

/** One SeaweedFS identity (its `-s3.config` file): keys and the actions they may take. */
export interface S3Identity {
  name: string;
  accessKey: string;
  secretKey: string;
  /** e.g. `Admin`, `Read`, `Write`, `List`, `Tagging`; `Write:<bucket>` limits an action to one bucket. */
  actions: string[];
}

export interface S3ServerOptions {
  weed: string;
  /** Data under `<home>/s3`, identities in `<home>/s3-identities.json`, log in `<home>/logs/s3.log`. */
  home: string;
  port: number;
  identities: S3Identity[];
  /** Reaches this server with keys allowed to create its bucket (the health check creates it). */
  config: S3Config;
  env: NodeJS.ProcessEnv;
}

export async function s3ServerProcess(options: S3ServerOptions): Promise<ManagedProcess> {
  const { home, config } = options;
  // SeaweedFS's internal services (master, volume, filer, admin) need ports too; always free ones.
  const weedPorts = await resolvePorts(
    {
      master: { port: 0, variable: '', offsets: [WEED_GRPC_OFFSET] },
      volume: { port: 0, variable: '', offsets: [WEED_GRPC_OFFSET] },
      filer: { port: 0, variable: '', offsets: [WEED_GRPC_OFFSET] },
      admin: { port: 0, variable: '', offsets: [WEED_GRPC_OFFSET] },
    },
    'auto',
  );
  const dir = join(home, 's3');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const identities = join(home, 's3-identities.json');
  // Keys: readable by the user alone (the stack's are its fixed local ones; a test's may be others).
  writeFileSync(identities, JSON.stringify({ identities: options.identities.map(toWeedIdentity) }), {
    mode: 0o600,
  });
  chmodSync(identities, 0o600);
  // `weed mini` re-applies flags it saved in its data dir; remove them so this start's ports win.
  rmSync(join(dir, 'mini.options'), { force: true });
  // Its local sockets default to /tmp/seaweedfs-<kind>-<port>.sock, which it leaves behind: keep them in the
  // home with the rest of its state (when the path fits a socket address; else the default).
  const sockets = (['s3', 'filer'] as const).flatMap((kind) => {
    const path = resolve(home, `${kind}.sock`);
    return Buffer.byteLength(path) < MAX_SOCKET_PATH_BYTES ? [`-${kind}.localSocket=${path}`] : [];
  });
  // Its gRPC sockets are always /tmp/seaweedfs-<kind>-grpc-<gRPC port>.sock (no flag moves them), and it
  // leaves some behind when it stops: removed once it has exited. The ports are this start's own.
  const grpcSockets = Object.entries({ ...weedPorts, s3: options.port }).map(
    ([kind, port]) => `/tmp/seaweedfs-${kind}-grpc-${port + WEED_GRPC_OFFSET}.sock`,
  );
  return new ManagedProcess({
    name: 's3',
    command: options.weed,
    args: [
      'mini',
      `-dir=${dir}`,
      '-ip=127.0.0.1',
      '-ip.bind=127.0.0.1',
      `-s3.port=${options.port}`,
      `-s3.config=${identities}`,
      `-master.port=${weedPorts.master}`,
      `-volume.port=${weedPorts.volume}`,
      `-filer.port=${weedPorts.filer}`,
      `-admin.port=${weedPorts.admin}`,
      '-admin.ui=false',
      '-webdav=false',
      '-master.telemetry=false',
      '-s3.port.iceberg=0',
      '-s3.port.lance=0',
      `-bucket=${config.bucket}`,
      ...sockets,
    ],
    // Stray AWS_* variables would change how SeaweedFS authenticates.
    env: Object.fromEntries(Object.entries(options.env).filter(([k]) => !k.startsWith('AWS_'))),
    logFile: join(home, 'logs', 's3.log'),
    removeAfterExit: grpcSockets,
    healthCheck: async () => {
      if (!(await httpAnswers(`${config.endpoint}/`))) return false;
      await createObjectStore(config).ensureBucket();
      return true;
    },
    startTimeoutMs: 60_000,
  });
}

function toWeedIdentity(identity: S3Identity) {
  return {
    name: identity.name,
    credentials: [{ accessKey: identity.accessKey, secretKey: identity.secretKey }],
    actions: identity.actions,
  };
}
