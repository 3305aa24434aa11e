/**
 * The local stack, in start order: Temporal dev server (SQLite under CALLPIPE_HOME, Web UI, our search
 * attributes) → S3 server (SeaweedFS, data under CALLPIPE_HOME, bucket created) → service emulator →
 * workers. Used by `callpipe up`, `callpipe demo` and the integration tests' global setup alike, so the
 * tests exercise the same code users run.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureTools, PROJECT_ROOT, toolEnv, type ToolPaths } from '../tools/provision.ts';
import { httpAnswers, ManagedProcess } from './process.ts';
import { resolvePorts } from './ports.ts';
import { s3ServerProcess, WEED_GRPC_OFFSET } from './s3-server.ts';
import { startTemporalServer, temporalHealthy } from './temporal-server.ts';
import { ensureTemporalServer } from '../tools/temporal-server.ts';
import { SEARCH_ATTRIBUTES } from '../../schemas/search-attributes.ts';
import {
  DEFAULT_SPEED_MAX,
  LOCAL_S3_ACCESS_KEY,
  LOCAL_S3_SECRET_KEY,
  loadConfig,
  type Config,
} from '../../schemas/config.ts';
import { S3_FALLBACK_REGION } from '../../activities/storage/object-store.ts';
import { writeTemporalProfile } from '../../workers/temporal-connection.ts';
import { typeScriptNode } from '../../scripts/node-runtime.mjs';
import {
  liveStackOwner,
  processStartTicks,
  recordProcess,
  removeStackRecord,
  stopStaleStack,
  writeStackRecord,
  type StackRecord,
} from './stack-record.ts';

export interface StackOptions {
  /** Base configuration (ports, home, speeds); default: loadConfig(). */
  config?: Config;
  /** Override `stack.ports`. */
  ports?: 'fixed' | 'auto';
  /** Start the workers (default true). Tests that run their own workers turn this off. */
  workers?: boolean;
  /** Start the emulator (default true). */
  emulator?: boolean;
  /** Prebuilt workflow bundle for the workers (saves the bundling time). */
  workflowBundlePath?: string;
  /** Extra environment for the workers (e.g. short timeouts in tests). */
  workerEnv?: Record<string, string>;
  /**
   * Which Temporal: `dev` (default), the CLI's dev server on SQLite with its Web UI; or `postgresql`, the
   * production topology's Temporal server on a PostgreSQL cluster of the stack's own, with the UI server
   * when it builds (cli/stack/temporal-server.ts; the pinned Go builds are made on first use).
   */
  temporal?: 'dev' | 'postgresql';
  log?: (line: string) => void;
  /** Lines the user must see even when `log` is quiet (a stale stack stopped); default: `log`. */
  notice?: (line: string) => void;
}

/** Another live process owns a stack in this CALLPIPE_HOME (ready or still starting). */
export class StackRunningError extends Error {
  readonly home: string;
  readonly pid: number;
  constructor(home: string, pid: number) {
    super(`a stack is already running from ${home} (pid ${pid})`);
    this.home = home;
    this.pid = pid;
    this.name = 'StackRunningError';
  }
}

export interface StackAddresses {
  home: string;
  temporalAddress: string;
  namespace: string;
  webUiUrl: string;
  s3Endpoint: string;
  bucket: string;
  emulatorUrl?: string;
  serviceBaseUrl?: string;
  authUrl?: string;
  metricsUrl?: string;
  requestLog?: string;
}

export interface RunningStack {
  addresses: StackAddresses;
  /** Configuration that reaches this stack. */
  config: Config;
  /** CALLPIPE_* variables that reach this stack, for child processes and CLI commands. */
  env: Record<string, string>;
  tools: ToolPaths;
  processes: {
    temporal: ManagedProcess;
    /** With `temporal: 'postgresql'`: Temporal's database and, when it was built, the Web UI server. */
    postgresql?: ManagedProcess;
    temporalUi?: ManagedProcess;
    s3: ManagedProcess;
    emulator?: ManagedProcess;
    workers?: ManagedProcess;
  };
  /** Starts (or restarts) the workers process. */
  startWorkers(): Promise<ManagedProcess>;
  stop(): Promise<void>;
}

/**
 * The all-queues worker entry (`workers/all.ts`) as a child process: healthy once it prints its
 * `workers ready` line. The stack runs it, and tests run their own to SIGKILL one.
 */
export function workersProcess(env: NodeJS.ProcessEnv, logFile: string): ManagedProcess {
  return new ManagedProcess({
    name: 'workers',
    command: typeScriptNode(),
    args: [join(PROJECT_ROOT, 'workers', 'all.ts')],
    env,
    cwd: PROJECT_ROOT,
    logFile,
    readyWhenLogged: '"workers ready"',
    startTimeoutMs: 120_000,
  });
}

/** The Temporal config file of a stack: its dev server as the default profile (see startStack). */
export function stackTemporalProfile(home: string): string {
  return join(home, 'temporal.toml');
}

export function stackEnv(config: Config): Record<string, string> {
  return {
    CALLPIPE_HOME: config.stack.home,
    // Temporal's own sources point at the stack too: no profile of the user's is read by its processes.
    TEMPORAL_CONFIG_FILE: stackTemporalProfile(config.stack.home),
    CALLPIPE_TEMPORAL_ADDRESS: config.temporal.address,
    CALLPIPE_TEMPORAL_NAMESPACE: config.temporal.namespace,
    CALLPIPE_TASK_QUEUE_PREFIX: config.temporal.taskQueuePrefix,
    CALLPIPE_S3_ENDPOINT: config.s3.endpoint ?? '',
    CALLPIPE_S3_REGION: config.s3.region ?? '',
    CALLPIPE_S3_BUCKET: config.s3.bucket,
    CALLPIPE_S3_ACCESS_KEY_ID: config.s3.accessKeyId ?? '',
    CALLPIPE_S3_SECRET_ACCESS_KEY: config.s3.secretAccessKey ?? '',
    CALLPIPE_S3_SESSION_TOKEN: config.s3.sessionToken ?? '',
    CALLPIPE_S3_PROFILE: config.s3.profile ?? '',
    CALLPIPE_S3_FORCE_PATH_STYLE: String(config.s3.forcePathStyle),
    CALLPIPE_SERVICE_URL: config.service.baseUrl,
    CALLPIPE_AUTH_URL: config.service.authUrl,
    CALLPIPE_CLIENT_ID: config.service.clientId,
    CALLPIPE_CLIENT_SECRET: config.service.clientSecret,
    CALLPIPE_DOMAIN_ID: config.service.domainId,
    CALLPIPE_SERVICE_SPEED: String(config.service.speed),
    CALLPIPE_SERVICE_SPEED_MAX: String(config.service.speedMax ?? DEFAULT_SPEED_MAX),
    CALLPIPE_S3_INPUT_PREFIX: config.s3.inputPrefix,
    CALLPIPE_S3_OUTPUT_PREFIX: config.s3.outputPrefix,
    CALLPIPE_S3_STAGING_PREFIX: config.s3.stagingPrefix,
    CALLPIPE_MODEL: config.service.model,
    CALLPIPE_ASR_CONCURRENT_SESSIONS: String(config.limits.asrConcurrentSessions),
    CALLPIPE_NLP_RPS: String(config.limits.nlpRequestsPerSecond),
    CALLPIPE_NLP_CONCURRENCY: String(config.limits.nlpConcurrency),
    CALLPIPE_MEDIA_CONCURRENCY: String(config.limits.mediaConcurrency),
    CALLPIPE_PROBE_CONCURRENCY: String(config.limits.probeConcurrency),
    CALLPIPE_MAX_SESSION_SECONDS: String(config.limits.maxSessionSeconds),
    CALLPIPE_PLAN_STRATEGY: config.limits.planStrategy,
    CALLPIPE_MIN_SESSION_SECONDS: String(config.limits.minSessionSeconds),
    CALLPIPE_LOG_LEVEL: config.logLevel,
    CALLPIPE_METRICS_PORT: String(config.stack.metricsPort),
    CALLPIPE_METRICS_HOST: config.stack.metricsHost,
    CALLPIPE_EMULATOR_SPEED: String(config.stack.emulatorSpeed),
  };
}

/**
 * Configuration of a throw-away stack (tests, benchmarks): its own home, every port free, the emulator at
 * `emulatorSpeed`. Never touches the developer's `.callpipe/` or the default ports.
 */
export function isolatedStackConfig(
  home: string,
  emulatorSpeed: number,
  overrides: { limits?: Partial<Config['limits']>; stack?: Partial<Config['stack']> } = {},
): Config {
  return loadConfig({
    env: {},
    overrides: {
      limits: { ...overrides.limits },
      stack: {
        home,
        temporalPort: 0,
        temporalUiPort: 0,
        s3Port: 0,
        emulatorPort: 0,
        metricsPort: 0,
        ports: 'auto',
        emulatorSpeed,
        ...overrides.stack,
      },
    },
  });
}

/** `callpipe emulator` on `port` as a child process, healthy once its stats answer; `args`: its options. */
export function emulatorProcess(
  port: number,
  args: string[],
  home: string,
  env: NodeJS.ProcessEnv,
): ManagedProcess {
  return new ManagedProcess({
    name: 'emulator',
    command: process.execPath,
    args: [join(PROJECT_ROOT, 'bin', 'callpipe.js'), 'emulator', '--port', String(port), ...args],
    env,
    logFile: join(home, 'logs', 'emulator.log'),
    healthCheck: () => httpAnswers(`http://127.0.0.1:${port}/emulator/stats`),
    startTimeoutMs: 30_000,
  });
}

/**
 * The Temporal CLI's dev server: SQLite under the home, our search attributes registered, and its Web UI
 * unless no UI port is given (the benchmarks' stacks).
 */
export function devServerProcess(
  config: Pick<Config, 'temporal'>,
  ports: { temporal: number; temporalUi?: number },
  home: string,
  tools: Pick<ToolPaths, 'temporal'>,
  env: NodeJS.ProcessEnv,
): ManagedProcess {
  return new ManagedProcess({
    name: 'temporal',
    command: tools.temporal,
    args: [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(ports.temporal),
      ...(ports.temporalUi === undefined ? ['--headless'] : ['--ui-port', String(ports.temporalUi)]),
      '--db-filename',
      join(home, 'temporal.sqlite'),
      '--namespace',
      config.temporal.namespace,
      '--log-level',
      'warn',
      '--ui-disable-news-fetch',
      ...Object.entries(SEARCH_ATTRIBUTES).flatMap(([name, type]) => [
        '--search-attribute',
        `${name}=${type}`,
      ]),
    ],
    env,
    logFile: join(home, 'logs', 'temporal.log'),
    healthCheck: () => temporalHealthy(config.temporal),
    startTimeoutMs: 90_000,
  });
}

export async function startStack(options: StackOptions = {}): Promise<RunningStack> {
  const log = options.log ?? (() => {});
  const base = options.config ?? loadConfig();
  const home = resolve(base.stack.home);
  mkdirSync(join(home, 'logs'), { recursive: true });
  const owner = liveStackOwner(home);
  if (owner !== undefined) throw new StackRunningError(home, owner);
  // What a killed `up` left behind would hold this home's ports, data and locks: stop it first.
  const stale = await stopStaleStack(home);
  if (stale) (options.notice ?? log)(stale);
  const tools = ensureTools({ log });

  const ports = await resolvePorts(
    {
      temporal: { port: base.stack.temporalPort, variable: 'CALLPIPE_TEMPORAL_PORT' },
      temporalUi: { port: base.stack.temporalUiPort, variable: 'CALLPIPE_TEMPORAL_UI_PORT' },
      s3: { port: base.stack.s3Port, variable: 'CALLPIPE_S3_PORT', offsets: [WEED_GRPC_OFFSET] },
      emulator: { port: base.stack.emulatorPort, variable: 'CALLPIPE_EMULATOR_PORT' },
      metrics: { port: base.stack.metricsPort, variable: 'CALLPIPE_METRICS_PORT' },
    },
    options.ports ?? base.stack.ports,
  );
  const speed = base.stack.emulatorSpeed;
  const emulatorUrl = `http://127.0.0.1:${ports.emulator}`;
  const config: Config = {
    ...base,
    service: {
      ...base.service,
      baseUrl: `${emulatorUrl}/api/dev`,
      asrBaseUrl: undefined,
      authUrl: `${emulatorUrl}/v1/oauth/accesstokens`,
      // The stack's emulator runs at `speed`, so the client paces itself to match (DESIGN.md).
      speed,
    },
    s3: {
      ...base.s3,
      endpoint: `http://127.0.0.1:${ports.s3}`,
      region: base.s3.region ?? S3_FALLBACK_REGION,
      accessKeyId: LOCAL_S3_ACCESS_KEY,
      secretAccessKey: LOCAL_S3_SECRET_KEY,
      sessionToken: undefined,
      profile: undefined,
      forcePathStyle: true,
    },
    // The dev server on loopback: plain gRPC, whatever TLS or API key the configuration names for a cluster.
    temporal: {
      address: `127.0.0.1:${ports.temporal}`,
      namespace: base.temporal.namespace,
      taskQueuePrefix: base.temporal.taskQueuePrefix,
    },
    stack: {
      ...base.stack,
      home,
      temporalPort: ports.temporal,
      temporalUiPort: ports.temporalUi,
      s3Port: ports.s3,
      emulatorPort: ports.emulator,
      metricsPort: ports.metrics,
    },
  };
  const env = stackEnv(config);
  const childEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
    // Stray AWS_* variables would change SeaweedFS's auth or point the SDK elsewhere; TEMPORAL_* ones
    // (an API key, a client certificate, a profile) are meant for another cluster than the dev server.
    const clean = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_') && !k.startsWith('TEMPORAL_')),
    );
    return { ...clean, ...toolEnv(tools), ...env, ...extra };
  };

  // From here on, every pid this stack starts is in stack.json the moment it exists.
  const record: StackRecord = { pid: process.pid, startTicks: processStartTicks(process.pid), processes: [] };
  writeStackRecord(home, record);
  const onSpawn = (name: string) => (pid: number) => {
    record.processes = [...record.processes.filter((p) => p.name !== name), recordProcess(name, pid)];
    writeStackRecord(home, record);
  };
  const started: ManagedProcess[] = [];
  const stopAll = async () => {
    for (const proc of [...started].reverse()) await proc.stop().catch(() => {});
    removeStackRecord(home);
  };

  try {
    writeTemporalProfile(stackTemporalProfile(home), config.temporal);
    const extra: Pick<RunningStack['processes'], 'postgresql' | 'temporalUi'> = {};
    let temporal: ManagedProcess;
    if (options.temporal === 'postgresql') {
      const server = await startTemporalServer({
        tools: ensureTemporalServer({ log }),
        home,
        port: ports.temporal,
        uiPort: ports.temporalUi,
        temporal: config.temporal,
        env: childEnv(),
        onSpawn,
        log,
      });
      started.push(...server.processes);
      temporal = server.server;
      extra.postgresql = server.processes.find((p) => p.options.name === 'postgresql');
      extra.temporalUi = server.processes.find((p) => p.options.name === 'temporal-ui');
    } else {
      log(`starting Temporal dev server on ${config.temporal.address} (Web UI on :${ports.temporalUi})…`);
      temporal = devServerProcess(config, ports, home, tools, childEnv());
      await temporal.start(onSpawn('temporal'));
      started.push(temporal);
    }

    log(`starting S3 server (SeaweedFS) on ${config.s3.endpoint}…`);
    const s3 = await s3ServerProcess({
      weed: tools.weed,
      home,
      port: ports.s3,
      identities: [
        {
          name: 'callpipe',
          accessKey: LOCAL_S3_ACCESS_KEY,
          secretKey: LOCAL_S3_SECRET_KEY,
          actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
        },
      ],
      config: config.s3,
      env: childEnv(),
    });
    await s3.start(onSpawn('s3'));
    started.push(s3);

    let emulator: ManagedProcess | undefined;
    const requestLog = join(home, 'logs', 'emulator-requests.jsonl');
    if (options.emulator !== false) {
      log(`starting service emulator on ${emulatorUrl} (speed ${speed})…`);
      const args = ['--speed', String(speed), '--request-log', requestLog];
      if (config.stack.emulatorPhrasebook) args.push('--phrasebook', config.stack.emulatorPhrasebook);
      if (config.stack.emulatorFaults) args.push('--faults', config.stack.emulatorFaults);
      if (config.stack.emulatorAccounts) args.push('--accounts', config.stack.emulatorAccounts);
      emulator = emulatorProcess(ports.emulator, args, home, childEnv());
      await emulator.start(onSpawn('emulator'));
      started.push(emulator);
    }

    const processes: RunningStack['processes'] = { temporal, ...extra, s3, emulator };
    const startWorkers = async (): Promise<ManagedProcess> => {
      const previous = processes.workers;
      await previous?.stop();
      if (previous) started.splice(started.indexOf(previous), 1);
      log('starting workers…');
      const workers = workersProcess(
        childEnv({
          ...(options.workflowBundlePath ? { CALLPIPE_WORKFLOW_BUNDLE: options.workflowBundlePath } : {}),
          ...options.workerEnv,
        }),
        join(home, 'logs', 'workers.log'),
      );
      await workers.start(onSpawn('workers'));
      started.push(workers);
      processes.workers = workers;
      return workers;
    };
    if (options.workers !== false) await startWorkers();

    const addresses: StackAddresses = {
      home,
      temporalAddress: config.temporal.address,
      namespace: config.temporal.namespace,
      webUiUrl: `http://127.0.0.1:${ports.temporalUi}`,
      s3Endpoint: config.s3.endpoint!,
      bucket: config.s3.bucket,
      ...(emulator
        ? { emulatorUrl, serviceBaseUrl: config.service.baseUrl, authUrl: config.service.authUrl, requestLog }
        : {}),
      ...(options.workers !== false ? { metricsUrl: `http://127.0.0.1:${ports.metrics}/metrics` } : {}),
    };
    Object.assign(record, { addresses, env });
    writeStackRecord(home, record);

    return {
      addresses,
      config,
      env,
      tools,
      processes,
      startWorkers,
      async stop() {
        await stopAll();
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
