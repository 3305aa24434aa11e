/**
 * A PostgreSQL cluster of a stack's own (the production topology's Temporal database): created with
 * `initdb` under `<home>/postgresql` on first start, served on loopback TCP only (no Unix socket, so no
 * system directory is needed), trust authentication for its one role, `temporal`, which only loopback
 * reaches. PostgreSQL refuses to run as root: when we are root, it runs as the `postgres` user Debian's
 * package creates, and owns its data directory.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ManagedProcess } from './process.ts';

/** The role Temporal connects as (superuser of this cluster: temporal-sql-tool creates the databases). */
export const POSTGRES_ROLE = 'temporal';
const SYSTEM_USER = 'postgres';

export interface PostgresqlOptions {
  /** Debian's PostgreSQL binaries (cli/tools/temporal-server.ts `ensurePostgresql`). */
  bin: string;
  home: string;
  port: number;
  env: NodeJS.ProcessEnv;
}

function userIds(name: string): { uid: number; gid: number } {
  const res = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (res.status !== 0 || gid.status !== 0)
    throw new Error(
      `PostgreSQL refuses to run as root and there is no '${name}' user to run it as (Debian's postgresql package creates it)`,
    );
  return { uid: Number(res.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** The cluster's data directory, created (initdb) when missing. */
function ensureCluster(options: PostgresqlOptions): string {
  const dir = join(options.home, 'postgresql');
  if (existsSync(join(dir, 'PG_VERSION'))) return dir;
  const root = process.getuid?.() === 0;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const args = [
    join(options.bin, 'initdb'),
    '--pgdata',
    dir,
    '--username',
    POSTGRES_ROLE,
    '--auth',
    'trust',
    '--encoding',
    'UTF8',
    '--no-locale',
    '--no-instructions',
  ];
  let command = args;
  if (root) {
    const { uid, gid } = userIds(SYSTEM_USER);
    // The postgres user must reach its directory through the home (a temp dir is 0700): traverse only.
    chmodSync(options.home, 0o711);
    chownSync(dir, uid, gid);
    command = [
      '/usr/bin/setpriv',
      '--reuid',
      SYSTEM_USER,
      '--regid',
      SYSTEM_USER,
      '--init-groups',
      '--',
      ...args,
    ];
  }
  const res = spawnSync(command[0]!, command.slice(1), { encoding: 'utf8', env: options.env });
  if (res.status !== 0)
    throw new Error(`initdb failed: ${(res.stderr || res.stdout || '').trim().slice(-800)}`);
  return dir;
}

function ready(bin: string, port: number): Promise<boolean> {
  const res = spawnSync(join(bin, 'pg_isready'), [
    '-q',
    '-h',
    '127.0.0.1',
    '-p',
    String(port),
    '-U',
    POSTGRES_ROLE,
  ]);
  return Promise.resolve(res.status === 0);
}

export function postgresqlProcess(options: PostgresqlOptions): ManagedProcess {
  const dir = ensureCluster(options);
  return new ManagedProcess({
    name: 'postgresql',
    command: join(options.bin, 'postgres'),
    args: [
      '-D',
      dir,
      '-p',
      String(options.port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      // Temporal's stores: 20 + 10 connections per server process, and the schema tool's.
      '-c',
      'max_connections=100',
    ],
    env: options.env,
    logFile: join(options.home, 'logs', 'postgresql.log'),
    healthCheck: () => ready(options.bin, options.port),
    startTimeoutMs: 60_000,
    ...(process.getuid?.() === 0 ? { user: SYSTEM_USER } : {}),
  });
}
