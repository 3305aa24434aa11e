/**
 * The production topology's Temporal: the Temporal server (`go.temporal.io/server`, all four
 * services in one process) on PostgreSQL (`cli/stack/postgresql.ts`), its schema set up by
 * temporal-sql-tool from the schema the server's module ships, the namespace and callpipe's search
 * attributes registered, and the Web UI server when it was built. Same addresses as the dev server's:
 * the frontend on the stack's Temporal port, the UI on its UI port.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import { msToTs } from '@temporalio/common';
import type { TemporalServerTools } from '../tools/temporal-server.ts';
import { PINNED_TEMPORAL_SERVER } from '../tools/temporal-server.ts';
import { SEARCH_ATTRIBUTES } from '../../schemas/search-attributes.ts';
import type { TemporalConfig } from '../../schemas/config.ts';
import { connectClient } from '../../workers/temporal-connection.ts';
import { freePortWith } from './ports.ts';
import { httpAnswers, ManagedProcess } from './process.ts';
import { POSTGRES_ROLE, postgresqlProcess } from './postgresql.ts';

/** History shards: fixed for the life of a cluster; 4 is plenty for one machine's load. */
const HISTORY_SHARDS = 4;
const DATABASES = { default: 'temporal', visibility: 'temporal_visibility' } as const;
/** How long a finished workflow's history is kept. */
const RETENTION = '3 days';

/** Temporal's `IndexedValueType` (temporal.api.enums.v1), by the names schemas/search-attributes.ts uses. */
const INDEXED_VALUE_TYPE = {
  Text: 1,
  Keyword: 2,
  Int: 3,
  Double: 4,
  Bool: 5,
  Datetime: 6,
  KeywordList: 7,
} as const;

/**
 * Dynamic configuration the topology relies on (as the dev server sets it): updates (the session budget's
 * leases), and search attributes visible at once after registration. Priorities within a task queue
 * (longest first) need `matching.useNewMatcher`, on by default in this version.
 */
const DYNAMIC_CONFIG = {
  'frontend.enableUpdateWorkflowExecution': [{ value: true }],
  'system.forceSearchAttributesCacheRefreshOnRead': [{ value: true }],
  // A replaced Worker Deployment Version reports "drained" within seconds (workers/versioning.ts).
  'matching.wv.VersionDrainageStatusVisibilityGracePeriod': [{ value: '5s' }],
  'matching.wv.VersionDrainageStatusRefreshInterval': [{ value: '2s' }],
};

export interface TemporalServerOptions {
  tools: TemporalServerTools;
  home: string;
  /** Frontend gRPC port (the stack's Temporal port). */
  port: number;
  /** Web UI port (the stack's UI port). */
  uiPort: number;
  /** The codec server's endpoint for the Web UI (token in its path), when the stack runs one. */
  codecEndpoint?: string | undefined;
  temporal: TemporalConfig;
  env: NodeJS.ProcessEnv;
  onSpawn: (name: string) => (pid: number) => void;
  log: (line: string) => void;
}

export interface RunningTemporalServer {
  /** In start order: postgresql, temporal (the server), temporal-ui when built. */
  processes: ManagedProcess[];
  server: ManagedProcess;
  webUi: boolean;
}

function serverConfig(options: TemporalServerOptions, pgPort: number, ports: Record<string, number>) {
  const store = (databaseName: string) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `127.0.0.1:${pgPort}`,
      connectProtocol: 'tcp',
      user: POSTGRES_ROLE,
      password: '',
      maxConns: databaseName === DATABASES.default ? 20 : 10,
      maxIdleConns: databaseName === DATABASES.default ? 20 : 10,
      maxConnLifetime: '1h',
    },
  });
  const rpc = (name: string) => ({
    rpc: {
      grpcPort: ports[`${name}Grpc`],
      membershipPort: ports[`${name}Membership`],
      bindOnIP: '127.0.0.1',
      ...(name === 'frontend' ? { httpPort: ports.frontendHttp } : {}),
    },
  });
  return {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'default',
      visibilityStore: 'visibility',
      numHistoryShards: HISTORY_SHARDS,
      datastores: { default: store(DATABASES.default), visibility: store(DATABASES.visibility) },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
    services: {
      frontend: rpc('frontend'),
      history: rpc('history'),
      matching: rpc('matching'),
      worker: rpc('worker'),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `127.0.0.1:${options.port}`,
          httpAddress: `127.0.0.1:${ports.frontendHttp}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: {
      history: { state: 'disabled', enableRead: false },
      visibility: { state: 'disabled', enableRead: false },
    },
    namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
    dynamicConfigClient: {
      filepath: join(options.home, 'temporal-server', 'dynamicconfig.yaml'),
      pollInterval: '10s',
    },
  };
}

/** temporal-sql-tool: both databases created and brought to the module's latest schema, once per home. */
function setupSchema(options: TemporalServerOptions, pgPort: number): void {
  const { tools, home, env, log } = options;
  const marker = join(home, 'postgresql', `callpipe-schema-${PINNED_TEMPORAL_SERVER.server.version}`);
  if (existsSync(marker)) return;
  const sql = (database: string, ...args: string[]) => {
    const res = spawnSync(
      tools.sqlTool,
      [
        '--plugin',
        'postgres12',
        '--ep',
        '127.0.0.1',
        '-p',
        String(pgPort),
        '-u',
        POSTGRES_ROLE,
        '--db',
        database,
        ...args,
      ],
      { encoding: 'utf8', env },
    );
    if (res.status !== 0)
      throw new Error(
        `temporal-sql-tool ${args[0]} (${database}) failed: ${(res.stderr || res.stdout).trim().slice(-800)}`,
      );
  };
  for (const [store, database] of [
    ['temporal', DATABASES.default],
    ['visibility', DATABASES.visibility],
  ] as const) {
    log(`setting up Temporal's ${database} schema (temporal-sql-tool)…`);
    sql(database, 'create-database');
    sql(database, 'setup-schema', '-v', '0.0');
    sql(database, 'update-schema', '-d', join(tools.postgresSchema, store, 'versioned'));
  }
  writeFileSync(marker, new Date().toISOString());
}

/** The namespace and callpipe's search attributes (schemas/search-attributes.ts), once each. */
async function register(temporal: TemporalConfig, log: (line: string) => void): Promise<void> {
  const connection = await connectClient(temporal, { connectTimeout: 5000 });
  try {
    const { namespace } = temporal;
    const service = connection.workflowService;
    const exists = await service.describeNamespace({ namespace }).then(
      () => true,
      () => false,
    );
    if (!exists) {
      log(`registering namespace ${namespace}…`);
      await service.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs(RETENTION),
      });
    }
    // The frontend learns of a new namespace from its cache, refreshed every few seconds.
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
        const missing = Object.entries(SEARCH_ATTRIBUTES).filter(
          ([name]) => !(name in (customAttributes ?? {})),
        );
        if (missing.length === 0) return;
        await connection.operatorService.addSearchAttributes({
          namespace,
          searchAttributes: Object.fromEntries(
            missing.map(([name, type]) => [name, INDEXED_VALUE_TYPE[type]]),
          ),
        });
      } catch (err) {
        if (Date.now() > deadline)
          throw new Error(`could not register callpipe's search attributes: ${(err as Error).message}`);
      }
      await sleep(1000);
    }
  } finally {
    await connection.close();
  }
}

/** The frontend answers gRPC health checks with SERVING. */
export async function temporalHealthy(temporal: TemporalConfig): Promise<boolean> {
  const connection = await connectClient(temporal, { connectTimeout: 1000 });
  try {
    return (await connection.healthService.check({})).status === 1; // SERVING
  } finally {
    await connection.close();
  }
}

/**
 * Starts PostgreSQL, sets up the schema, starts the server and registers what callpipe needs, then the
 * Web UI server when it was built. On failure, stops what it started and throws.
 */
export async function startTemporalServer(options: TemporalServerOptions): Promise<RunningTemporalServer> {
  const { tools, home, env, onSpawn, log } = options;
  const taken = new Set([options.port, options.uiPort]);
  const free = () => freePortWith([], taken);
  // Temporal's SQL schema keeps membership ports in a smallint: below 32768.
  const membershipPort = () => freePortWith([], taken, 32768);
  const pgPort = await free();
  const ports: Record<string, number> = { frontendGrpc: options.port, frontendHttp: await free() };
  for (const name of ['frontend', 'history', 'matching', 'worker']) {
    if (name !== 'frontend') ports[`${name}Grpc`] = await free();
    ports[`${name}Membership`] = await membershipPort();
  }
  const processes: ManagedProcess[] = [];
  try {
    log(`starting PostgreSQL (${tools.postgresBin}) on 127.0.0.1:${pgPort}…`);
    const postgresql = postgresqlProcess({ bin: tools.postgresBin, home, port: pgPort, env });
    await postgresql.start(onSpawn('postgresql'));
    processes.push(postgresql);
    setupSchema(options, pgPort);

    const root = join(home, 'temporal-server');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'config.yaml'), stringify(serverConfig(options, pgPort, ports)));
    writeFileSync(join(root, 'dynamicconfig.yaml'), stringify(DYNAMIC_CONFIG));
    log(
      `starting Temporal server ${PINNED_TEMPORAL_SERVER.server.version} on ${options.temporal.address} (PostgreSQL, ${HISTORY_SHARDS} shards)…`,
    );
    const server = new ManagedProcess({
      name: 'temporal',
      command: tools.server,
      // No authorizer: the frontend listens on loopback only, as the dev server does.
      args: ['--config-file', join(root, 'config.yaml'), '--allow-no-auth', 'start'],
      env,
      logFile: join(home, 'logs', 'temporal.log'),
      healthCheck: () => temporalHealthy(options.temporal),
      startTimeoutMs: 120_000,
    });
    await server.start(onSpawn('temporal'));
    processes.push(server);
    await register(options.temporal, log);

    let webUi = false;
    if (tools.uiServer) {
      const uiRoot = join(home, 'temporal-ui');
      mkdirSync(join(uiRoot, 'config'), { recursive: true });
      writeFileSync(
        join(uiRoot, 'config', 'production.yaml'),
        stringify({
          temporalGrpcAddress: options.temporal.address,
          host: '127.0.0.1',
          port: options.uiPort,
          enableUi: true,
          defaultNamespace: options.temporal.namespace,
          // No news from the internet, as `callpipe up` starts the dev server's UI.
          disableNewsFetch: true,
          cors: { allowOrigins: [`http://127.0.0.1:${options.uiPort}`] },
          // The stack's codec server, so the UI shows encrypted payloads decoded.
          ...(options.codecEndpoint ? { codec: { endpoint: options.codecEndpoint } } : {}),
        }),
      );
      log(`starting Temporal Web UI server ${PINNED_TEMPORAL_SERVER.ui.version} on :${options.uiPort}…`);
      const ui = new ManagedProcess({
        name: 'temporal-ui',
        command: tools.uiServer,
        args: ['--root', uiRoot, '--env', 'production', 'start'],
        env,
        logFile: join(home, 'logs', 'temporal-ui.log'),
        healthCheck: () => httpAnswers(`http://127.0.0.1:${options.uiPort}/`),
        startTimeoutMs: 30_000,
      });
      await ui.start(onSpawn('temporal-ui'));
      processes.push(ui);
      webUi = true;
    }
    return { processes, server, webUi };
  } catch (err) {
    for (const p of [...processes].reverse()) await p.stop().catch(() => undefined);
    throw err;
  }
}
