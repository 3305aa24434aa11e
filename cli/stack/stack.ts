/**
 * The local stack, in start order: Temporal dev server (SQLite under CALLPIPE_HOME, Web UI, our search
 * attributes) → S3 server (SeaweedFS, data under CALLPIPE_HOME, bucket created) → service emulator →
 * workers. Used by `callpipe up`, `callpipe demo` and the integration tests' global setup alike, so the
 * tests exercise the same code users run.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync } from 'node:fs';
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
  type Config,
} from '../../schemas/config.ts';
import { loadConfig } from '../../schemas/config-loader.ts';
import { S3_FALLBACK_REGION } from '../../activities/storage/object-store.ts';
import { writeTemporalProfile } from '../../workers/temporal-connection.ts';
import { buildIdOf, deploymentVersionOf, makeCurrent, versionLabel } from '../../workers/versioning.ts';
import { ensurePayloadKeysFile, payloadKeysOf } from '../../workers/payload-codec.ts';
import { digestKeyOf, ensureDigestKeyFile } from '../../schemas/personal-digest.ts';
import { ensurePrivateFile } from '../../schemas/private-file.ts';
import { typeScriptNode } from '../../scripts/node-runtime.mjs';
import { childEnv, SECRET_VARIABLES } from '../../schemas/child-env.ts';
import {
  liveStackOwner,
  processStartTicks,
  recordProcess,
  removeStackRecord,
  stopStaleStack,
  writeStackRecord,
  type SecretSource,
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
  /**
   * Start a codec server (`callpipe codec-server`) and point the Web UI at it, so the UI shows the
   * encrypted payloads decoded (default true).
   */
  codecServer?: boolean;
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
  /** The codec server the Web UI decodes payloads with (its token: `<home>/codec-server-token`). */
  codecServerUrl?: string;
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
    codecServer?: ManagedProcess;
  };
  /** Starts (or restarts) the workers process. */
  startWorkers(): Promise<ManagedProcess>;
  /** Starts a part again that ended (cli/stack/supervisor.ts), recording its new pid. */
  restart(part: keyof RunningStack['processes']): Promise<ManagedProcess>;
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
function stackTemporalProfile(home: string): string {
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
    CALLPIPE_PAYLOAD_KEYS: config.temporal.payloadKeys ?? '',
    CALLPIPE_PAYLOAD_KEYS_FILE: config.temporal.payloadKeysFile ?? '',
    CALLPIPE_DIGEST_KEY: config.redaction.digestKey ?? '',
    CALLPIPE_DIGEST_KEY_FILE: config.redaction.digestKeyFile ?? '',
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
    CALLPIPE_RECOGNITION: config.service.recognition ?? 'stream',
    // One build for every process of the stack, a test's own workers too (workers/versioning.ts).
    CALLPIPE_BUILD_ID: buildIdOf(),
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
  codecEndpoint?: string,
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
      // A replaced Worker Deployment Version reports "drained" within seconds of its last pinned run
      // (the server's defaults wait 3 + 3 minutes), so its workers stop soon after (workers/versioning.ts).
      ...['--dynamic-config-value', 'matching.wv.VersionDrainageStatusVisibilityGracePeriod="5s"'],
      ...['--dynamic-config-value', 'matching.wv.VersionDrainageStatusRefreshInterval="2s"'],
      ...(codecEndpoint && ports.temporalUi !== undefined ? ['--ui-codec-endpoint', codecEndpoint] : []),
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

/** What every step of starting a stack needs: where, on which ports, with which tools and environment. */
interface StackContext {
  options: StackOptions;
  home: string;
  config: Config;
  ports: StackPorts;
  tools: ToolPaths;
  env: Record<string, string>;
  launched: LaunchedProcesses;
  log: (line: string) => void;
}

type StackPorts = Awaited<ReturnType<typeof resolveStackPorts>>;

/**
 * The processes a stack started, in start order, and its record (stack.json): every pid is in the record
 * the moment it exists, so a stack killed while starting can be stopped by the next one.
 */
class LaunchedProcesses {
  readonly record: StackRecord;
  readonly #home: string;
  readonly #started: ManagedProcess[] = [];

  constructor(home: string) {
    this.#home = home;
    this.record = { pid: process.pid, startTicks: processStartTicks(process.pid), processes: [] };
    writeStackRecord(home, this.record);
  }

  /** The spawn callback of the process called `name`: records its pid. */
  onSpawn(name: string): (pid: number) => void {
    return (pid) => {
      this.record.processes = [
        ...this.record.processes.filter((p) => p.name !== name),
        recordProcess(name, pid),
      ];
      this.save();
    };
  }

  add(...procs: ManagedProcess[]): void {
    this.#started.push(...procs);
  }

  remove(proc: ManagedProcess): void {
    this.#started.splice(this.#started.indexOf(proc), 1);
  }

  save(): void {
    writeStackRecord(this.#home, this.record);
  }

  /** Stops every process, last started first, and removes the record. */
  async stopAll(): Promise<void> {
    for (const proc of [...this.#started].reverse()) await proc.stop().catch(() => {});
    removeStackRecord(this.#home);
  }
}

/**
 * Where each secret of the stack's environment comes from, for its record (which never holds the value):
 * the S3 key is the stack's own local server's; the client secret is the configuration's, which each
 * command reads for itself.
 */
const STACK_SECRET_SOURCES: Record<string, SecretSource> = {
  CALLPIPE_S3_SECRET_ACCESS_KEY: 'local-stack',
  CALLPIPE_CLIENT_SECRET: 'caller',
  CALLPIPE_PAYLOAD_KEYS: 'caller',
  CALLPIPE_DIGEST_KEY: 'caller',
};

/** The record's part that describes the stack's environment: its variables without secrets, and their sources. */
export function stackRecordOf(env: Record<string, string>): Pick<StackRecord, 'env' | 'secrets'> {
  const secrets = Object.fromEntries(
    Object.keys(env)
      .filter((name) => env[name] && STACK_SECRET_SOURCES[name])
      .map((name) => [name, STACK_SECRET_SOURCES[name]!]),
  );
  return { env: withoutSecrets(env), secrets };
}

/**
 * CALLPIPE_HOME and its logs folder, private to the user (0700): the stack's databases, stored
 * recordings, logs and record are the user's alone. A home made before, more open, is closed too when
 * it is the user's own.
 */
export function privateHome(home: string): void {
  for (const dir of [home, join(home, 'logs')]) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (statSync(dir).uid === process.getuid?.()) chmodSync(dir, 0o700);
  }
}

/** Refuses a home another live stack owns, and stops what a killed one left behind. */
async function claimHome(home: string, options: StackOptions, log: (line: string) => void): Promise<void> {
  privateHome(home);
  const owner = liveStackOwner(home);
  if (owner !== undefined) throw new StackRunningError(home, owner);
  // What a killed `up` left behind would hold this home's ports, data and locks: stop it first.
  const stale = await stopStaleStack(home);
  if (stale) (options.notice ?? log)(stale);
}

function resolveStackPorts(base: Config, mode: 'fixed' | 'auto') {
  return resolvePorts(
    {
      temporal: { port: base.stack.temporalPort, variable: 'CALLPIPE_TEMPORAL_PORT' },
      temporalUi: { port: base.stack.temporalUiPort, variable: 'CALLPIPE_TEMPORAL_UI_PORT' },
      s3: { port: base.stack.s3Port, variable: 'CALLPIPE_S3_PORT', offsets: [WEED_GRPC_OFFSET] },
      emulator: { port: base.stack.emulatorPort, variable: 'CALLPIPE_EMULATOR_PORT' },
      metrics: { port: base.stack.metricsPort, variable: 'CALLPIPE_METRICS_PORT' },
      // Any free port: the Web UI is given it, `up` prints it.
      codec: { port: 0, variable: 'the codec server port' },
    },
    mode,
  );
}

function emulatorUrlOf(ports: StackPorts): string {
  return `http://127.0.0.1:${ports.emulator}`;
}

/** The configuration that reaches the stack: its emulator, its S3 server, its dev server, its ports. */
function localStackConfig(base: Config, home: string, ports: StackPorts): Config {
  const emulatorUrl = emulatorUrlOf(ports);
  return {
    ...base,
    service: {
      ...base.service,
      baseUrl: `${emulatorUrl}/api/dev`,
      asrBaseUrl: undefined,
      authUrl: `${emulatorUrl}/v1/oauth/accesstokens`,
      // The stack's emulator runs at `speed`, so the client paces itself to match (docs/design.md).
      speed: base.stack.emulatorSpeed,
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
      payloadKeys: base.temporal.payloadKeys,
      payloadKeysFile: base.temporal.payloadKeysFile,
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
}

/**
 * The stack's payload keys (workers/payload-codec.ts), checked before anything starts: the configured
 * ones, else a keys file of the stack's own in its home, made once and kept (the stack's Temporal holds
 * what it encrypted). The record and the workers' environment name the file, never a key.
 */
function withPayloadKeys(config: Config): Config {
  if (payloadKeysOf(config.temporal)) return config;
  const payloadKeysFile = join(config.stack.home, 'payload-keys');
  ensurePayloadKeysFile(payloadKeysFile);
  return { ...config, temporal: { ...config.temporal, payloadKeysFile } };
}

/**
 * The stack's digest key (schemas/personal-digest.ts), as its payload keys: the configured one, else a
 * key file of the stack's own in its home, made once and kept (the stored digests were made with it).
 */
function withDigestKey(config: Config): Config {
  if (digestKeyOf(config.redaction)) return config;
  const digestKeyFile = join(config.stack.home, 'digest-key');
  ensureDigestKeyFile(digestKeyFile);
  return { ...config, redaction: { ...config.redaction, digestKeyFile } };
}

/**
 * The environment of the stack's servers (Temporal, SeaweedFS, PostgreSQL): the base a program needs,
 * none of callpipe's settings or secrets, no AWS_* (they would change SeaweedFS's auth) and no TEMPORAL_*
 * (an API key, a certificate or a profile meant for another cluster than the stack's).
 */
export function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  return childEnv({ extra });
}

/**
 * The environment of the stack's Node processes: callpipe's settings of this process (its secrets
 * excepted), then the stack's `env` and `extra`, as given. The workers get the stack's secrets that way,
 * by name; the emulator gets the stack's settings without them ({@link withoutSecrets}).
 */
export function workersEnv(env: Record<string, string>, extra: Record<string, string> = {}) {
  return childEnv({ groups: ['node', 'callpipe'], extra: { ...env, ...extra } });
}

/** What the codec server reads of the stack's settings: where its keys and token are, and its namespace. */
const CODEC_SERVER_VARIABLES = [
  'CALLPIPE_HOME',
  'CALLPIPE_CONFIG',
  'CALLPIPE_TEMPORAL_NAMESPACE',
  'CALLPIPE_PAYLOAD_KEYS',
  'CALLPIPE_PAYLOAD_KEYS_FILE',
] as const;

/**
 * The codec server's environment: a Node program's base and the payload keys it decodes with, nothing
 * else of the stack's (no service secret, no S3 key, no digest key): it answers a browser, and holds only
 * what decoding needs.
 */
function codecServerEnv(env: Record<string, string>): Record<string, string> {
  const own = Object.fromEntries(
    CODEC_SERVER_VARIABLES.flatMap((name) => {
      const value = env[name] ?? process.env[name];
      return value ? [[name, value]] : [];
    }),
  );
  return childEnv({ groups: ['node'], extra: own });
}

/** `env` without the variables that hold secrets. */
function withoutSecrets(env: Record<string, string>): Record<string, string> {
  const secrets: ReadonlySet<string> = new Set(SECRET_VARIABLES);
  return Object.fromEntries(Object.entries(env).filter(([name]) => !secrets.has(name)));
}

type TemporalProcesses = Pick<RunningStack['processes'], 'temporal' | 'postgresql' | 'temporalUi'>;

/** Temporal as `options.temporal` says: the dev server, or the server on PostgreSQL with its UI. */
async function startTemporal(ctx: StackContext): Promise<TemporalProcesses> {
  const { config, ports, home, launched, log } = ctx;
  writeTemporalProfile(stackTemporalProfile(home), config.temporal);
  chmodSync(stackTemporalProfile(home), 0o600);
  if (ctx.options.temporal === 'postgresql') {
    const server = await startTemporalServer({
      tools: ensureTemporalServer({ log }),
      home,
      port: ports.temporal,
      uiPort: ports.temporalUi,
      codecEndpoint: codecEndpointOf(ctx),
      temporal: config.temporal,
      env: serverEnv(),
      onSpawn: (name) => launched.onSpawn(name),
      log,
    });
    launched.add(...server.processes);
    return {
      temporal: server.server,
      postgresql: server.processes.find((p) => p.options.name === 'postgresql'),
      temporalUi: server.processes.find((p) => p.options.name === 'temporal-ui'),
    };
  }
  log(`starting Temporal dev server on ${config.temporal.address} (Web UI on :${ports.temporalUi})…`);
  const temporal = devServerProcess(config, ports, home, ctx.tools, serverEnv(), codecEndpointOf(ctx));
  await temporal.start(launched.onSpawn('temporal'));
  launched.add(temporal);
  return { temporal };
}

/** The codec server's token file: the one `callpipe codec-server` reads by default, made once (0600). */
function codecTokenFile(home: string): string {
  const file = join(home, 'codec-server-token');
  ensurePrivateFile(file, () => `${randomBytes(32).toString('base64url')}\n`);
  return file;
}

/**
 * Where the Web UI reaches the codec server: its token as the first path segment, since the UI cannot
 * add a header (cli/commands/codec-server.ts). The UI runs on loopback only, as the codec server does.
 */
function codecEndpointOf(ctx: StackContext): string | undefined {
  if (ctx.options.codecServer === false) return undefined;
  const token = readFileSync(codecTokenFile(ctx.home), 'utf8').trim();
  return `http://127.0.0.1:${ctx.ports.codec}/${encodeURIComponent(token)}`;
}

/** `callpipe codec-server` with the stack's payload keys, for the stack's Web UI. */
async function startCodecServer(ctx: StackContext): Promise<ManagedProcess> {
  const { ports, home } = ctx;
  const url = `http://127.0.0.1:${ports.codec}`;
  ctx.log(`starting codec server on ${url}…`);
  const codec = new ManagedProcess({
    name: 'codec-server',
    command: process.execPath,
    args: [
      join(PROJECT_ROOT, 'bin', 'callpipe.js'),
      'codec-server',
      '--port',
      String(ports.codec),
      '--origin',
      `http://127.0.0.1:${ports.temporalUi}`,
      '--origin',
      `http://localhost:${ports.temporalUi}`,
      '--token-file',
      codecTokenFile(home),
    ],
    env: codecServerEnv(ctx.env),
    logFile: join(home, 'logs', 'codec-server.log'),
    healthCheck: () => httpAnswers(`${url}/`),
    startTimeoutMs: 30_000,
  });
  await codec.start(ctx.launched.onSpawn('codec-server'));
  ctx.launched.add(codec);
  return codec;
}

async function startS3(ctx: StackContext): Promise<ManagedProcess> {
  ctx.log(`starting S3 server (SeaweedFS) on ${ctx.config.s3.endpoint}…`);
  const s3 = await s3ServerProcess({
    weed: ctx.tools.weed,
    home: ctx.home,
    port: ctx.ports.s3,
    identities: [
      {
        name: 'callpipe',
        accessKey: LOCAL_S3_ACCESS_KEY,
        secretKey: LOCAL_S3_SECRET_KEY,
        actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
      },
    ],
    config: ctx.config.s3,
    env: serverEnv(),
  });
  await s3.start(ctx.launched.onSpawn('s3'));
  ctx.launched.add(s3);
  return s3;
}

function emulatorRequestLog(home: string): string {
  return join(home, 'logs', 'emulator-requests.jsonl');
}

/** The service emulator at the stack's speed, with the phrasebook, faults and accounts configured. */
async function startStackEmulator(ctx: StackContext): Promise<ManagedProcess> {
  const { config } = ctx;
  const speed = config.stack.emulatorSpeed;
  ctx.log(`starting service emulator on ${emulatorUrlOf(ctx.ports)} (speed ${speed})…`);
  const args = [
    '--speed',
    String(speed),
    '--file-rtf',
    String(config.stack.emulatorFileRtf),
    '--request-log',
    emulatorRequestLog(ctx.home),
  ];
  if (config.stack.emulatorPhrasebook) args.push('--phrasebook', config.stack.emulatorPhrasebook);
  if (config.stack.emulatorFaults) args.push('--faults', config.stack.emulatorFaults);
  if (config.stack.emulatorAccounts) args.push('--accounts', config.stack.emulatorAccounts);
  const emulator = emulatorProcess(
    ctx.ports.emulator,
    args,
    ctx.home,
    workersEnv(withoutSecrets(ctx.env), toolEnv(ctx.tools)),
  );
  await emulator.start(ctx.launched.onSpawn('emulator'));
  ctx.launched.add(emulator);
  return emulator;
}

/** (Re)starts the workers process of the stack, stopping the one before. */
async function restartWorkers(
  ctx: StackContext,
  processes: RunningStack['processes'],
): Promise<ManagedProcess> {
  const { options, launched } = ctx;
  const previous = processes.workers;
  await previous?.stop();
  if (previous) launched.remove(previous);
  ctx.log('starting workers…');
  const workers = workersProcess(
    workersEnv(ctx.env, {
      ...toolEnv(ctx.tools),
      ...(options.workflowBundlePath ? { CALLPIPE_WORKFLOW_BUNDLE: options.workflowBundlePath } : {}),
      ...options.workerEnv,
    }),
    join(ctx.home, 'logs', 'workers.log'),
  );
  await workers.start(launched.onSpawn('workers'));
  launched.add(workers);
  processes.workers = workers;
  // New calls go to this build: made current once its workers poll every queue (a stack restarted on
  // new code replaces the build of the one before; calls pinned to it finish there or wait for it).
  const version = deploymentVersionOf(ctx.config, ctx.env);
  ctx.log(`making ${versionLabel(version)} current: ${await makeCurrent(ctx.config, version)}`);
  return workers;
}

function stackAddresses(ctx: StackContext, withEmulator: boolean): StackAddresses {
  const { config, ports } = ctx;
  return {
    home: ctx.home,
    temporalAddress: config.temporal.address,
    namespace: config.temporal.namespace,
    webUiUrl: `http://127.0.0.1:${ports.temporalUi}`,
    s3Endpoint: config.s3.endpoint!,
    bucket: config.s3.bucket,
    ...(withEmulator
      ? {
          emulatorUrl: emulatorUrlOf(ports),
          serviceBaseUrl: config.service.baseUrl,
          authUrl: config.service.authUrl,
          requestLog: emulatorRequestLog(ctx.home),
        }
      : {}),
    ...(ctx.options.workers !== false ? { metricsUrl: `http://127.0.0.1:${ports.metrics}/metrics` } : {}),
    ...(ctx.options.codecServer !== false ? { codecServerUrl: `http://127.0.0.1:${ports.codec}` } : {}),
  };
}

/** Starts every process of the stack in order; the addresses go into the record once all are up. */
async function startProcesses(ctx: StackContext): Promise<RunningStack> {
  const temporal = await startTemporal(ctx);
  const s3 = await startS3(ctx);
  const emulator = ctx.options.emulator !== false ? await startStackEmulator(ctx) : undefined;
  const codecServer = ctx.options.codecServer !== false ? await startCodecServer(ctx) : undefined;
  const processes: RunningStack['processes'] = { ...temporal, s3, emulator, codecServer };
  const startWorkers = () => restartWorkers(ctx, processes);
  if (ctx.options.workers !== false) await startWorkers();
  const restart = async (part: keyof RunningStack['processes']) => {
    if (part === 'workers') return startWorkers();
    const proc = processes[part];
    if (!proc) throw new Error(`this stack has no ${part}`);
    await proc.stop();
    await proc.start(ctx.launched.onSpawn(proc.options.name));
    return proc;
  };

  const addresses = stackAddresses(ctx, emulator !== undefined);
  Object.assign(ctx.launched.record, { addresses, ...stackRecordOf(ctx.env) });
  ctx.launched.save();
  return {
    addresses,
    config: ctx.config,
    env: ctx.env,
    tools: ctx.tools,
    processes,
    startWorkers,
    restart,
    stop: () => ctx.launched.stopAll(),
  };
}

export async function startStack(options: StackOptions = {}): Promise<RunningStack> {
  const log = options.log ?? (() => {});
  const base = options.config ?? loadConfig();
  const home = resolve(base.stack.home);
  await claimHome(home, options, log);
  const tools = ensureTools({ log });
  const ports = await resolveStackPorts(base, options.ports ?? base.stack.ports);
  const config = withDigestKey(withPayloadKeys(localStackConfig(base, home, ports)));
  const env = stackEnv(config);
  // From here on, every pid this stack starts is in stack.json the moment it exists.
  const launched = new LaunchedProcesses(home);
  const ctx: StackContext = {
    options,
    home,
    config,
    ports,
    tools,
    env,
    launched,
    log,
  };
  try {
    return await startProcesses(ctx);
  } catch (err) {
    await launched.stopAll();
    throw err;
  }
}
