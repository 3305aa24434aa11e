/**
 * Configuration of callpipe: one schema, read from `CALLPIPE_*` environment variables, the standard
 * variables of the tools callpipe talks to (`AWS_*`, `TEMPORAL_*`), an optional JSON config file
 * (`CALLPIPE_CONFIG`, or `callpipe.config.json` in the working directory), those tools' own files (the AWS
 * shared files, read by the AWS SDK; Temporal's TOML profile) and defaults. Precedence, as AWS's and
 * Temporal's own tools rank theirs (variables over files): CALLPIPE_* variable > standard variable >
 * config file > the tool's file > default. An empty CALLPIPE_* variable (or `null`/`""` in the file) clears
 * the value beneath it; an empty AWS_* or TEMPORAL_* variable is unset. The table of every source is in
 * docs/configuration.md.
 *
 * S3 credentials are one group: the strongest source that says anything about them (keys, a session
 * token or a profile) decides all of them, so a key from one source never pairs with a secret from
 * another. When callpipe's own sources name no keys, the S3 client gets none and the AWS SDK's default
 * provider chain finds them the way the AWS CLI does (AWS_* keys, AWS_PROFILE and the shared files with
 * SSO and credential_process, web identity, container and instance roles).
 *
 * Temporal's sources (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*,
 * TEMPORAL_GRPC_META_*, TEMPORAL_PROFILE and the TOML file of TEMPORAL_CONFIG_FILE or
 * ~/.config/temporalio/temporal.toml) are read by Temporal's own `@temporalio/envconfig`, so callpipe
 * resolves a connection exactly as the `temporal` CLI does; CALLPIPE_TEMPORAL_ADDRESS and _NAMESPACE stay
 * as overrides.
 *
 * Every value fails fast with the name of the variable that carried it, so a typo in a nightly cron
 * environment stops the run at start-up rather than at 3 a.m. in the middle of a batch.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { loadClientConfigProfile, type ClientConfigProfile } from '@temporalio/envconfig';
import { LIMIT_DEFAULTS, SERVICE_MAX_SESSION_SECONDS } from './limits.ts';
import type { PlanOptions } from './plan.ts';
import { isTimeZone } from './tables.ts';
import {
  tablesLocationOf,
  unredactedLocationOf,
  type OutputLocation,
  type TablesLocation,
} from './call-keys.ts';
import { DEFAULT_TEXT_GRAINS, TEXT_GRAINS, type TextGrains } from './text-grains.ts';
import type { RedactionInput } from './recording.ts';
import { redactionRulesSchema } from './redaction.ts';
import { retentionDaysSchema } from './lifecycle.ts';
import { DEFAULT_TASK_QUEUE_PREFIX, taskQueuesOf } from './task-queues.ts';
import { pricesInputSchema } from './cost.ts';
import { DEFAULT_FILE_RTF, RECOGNITION_MODES } from './recognition.ts';
import { EVENTS_DEFAULTS, EVENTS_ENV_VARS, eventsConfigSchema } from './events.ts';

// 0 means "any free port" (the test harness uses it so it never takes the dev stack's ports).
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const positive = z.coerce.number().positive();
const bool = z.union([
  z.boolean(),
  z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1'),
]);

const serviceConfigSchema = z.object({
  /** Base URL of the text-analysis family; the client appends `/nlp/v1/...` (spec 01, Versioning). */
  baseUrl: z.url(),
  /** Base URL of the speech-recognition family (`/asr/v1/...`); defaults to `baseUrl`. */
  asrBaseUrl: z.url().optional(),
  /** Token endpoint (spec 01, Authentication). */
  authUrl: z.url(),
  clientId: z.string().min(1),
  clientSecret: z.string().min(1),
  /** Recognition model id (spec 02, Recognition models); 8 kHz telephone audio by default. */
  model: z.string().min(1),
  /** Domain id, 8 alphanumerics (spec 02). */
  domainId: z.string().regex(/^[A-Za-z0-9]{8}$/, 'must be 8 alphanumeric characters'),
  /**
   * Client pacing: audio is sent at real time × speed; 1 against the real service. `auto` starts at real
   * time and finds the fastest pace the service accepts, up to `speedMax` (service/pace.ts; each step
   * back costs one session restart).
   */
  speed: z.union([z.literal('auto'), positive]),
  /** The fastest pace `auto` tries, × real time; default {@link DEFAULT_SPEED_MAX}. */
  speedMax: positive.min(1).optional(),
  /**
   * How speech is recognized (schemas/recognition.ts): `stream` (default: paced sessions), `file`
   * (pieces of at most 58 s cut in silence, one request each, unpaced) or `auto` (file while the
   * service answers file requests faster than real time).
   */
  recognition: z.enum(RECOGNITION_MODES).optional(),
});

export const DEFAULT_SPEED_MAX = 32;

/** The slowest pace a configured speed may send at: what time limits must allow for. */
export function slowestPace(speed: number | 'auto'): number {
  return speed === 'auto' ? 1 : speed;
}

const s3ConfigSchema = z
  .object({
    /**
     * S3 endpoint URL (an S3-compatible server); none: AWS's endpoint for the region, or the profile's
     * `endpoint_url`, as the SDK resolves it.
     */
    endpoint: z.url().optional(),
    /** None: the profile's `region` as the SDK resolves it, else `us-east-1`. */
    region: z.string().min(1).optional(),
    bucket: z.string().min(3),
    inputPrefix: z.string(),
    outputPrefix: z.string(),
    stagingPrefix: z.string(),
    /** Analysis tables (Parquet), at the root of the output bucket: `<tablesPrefix><table>/dt=…/`. */
    tablesPrefix: z.string(),
    /** Static keys; none (and no profile): the AWS SDK's default provider chain. Never logged. */
    accessKeyId: z.string().min(1).optional(),
    secretAccessKey: z.string().min(1).optional(),
    /** Temporary credentials' session token, with the keys. */
    sessionToken: z.string().min(1).optional(),
    /** A profile of the AWS shared config and credentials files, for credentials and region. */
    profile: z.string().min(1).optional(),
    /** Path-style addressing; default: on when an endpoint is set (S3-compatible servers want it), else off. */
    forcePathStyle: bool,
    /** Keep a call's staged audio and intermediate documents after success (for debugging); default: delete. */
    keepStaging: bool,
  })
  .superRefine((s3, ctx) => {
    if (!s3.accessKeyId !== !s3.secretAccessKey)
      ctx.addIssue({
        code: 'custom',
        path: [s3.accessKeyId ? 'secretAccessKey' : 'accessKeyId'],
        message: 'an access key id and a secret access key go together',
      });
    if (s3.sessionToken && !s3.accessKeyId)
      ctx.addIssue({ code: 'custom', path: ['sessionToken'], message: 'a session token needs the keys' });
    if (s3.profile && s3.accessKeyId)
      ctx.addIssue({ code: 'custom', path: ['profile'], message: 'set either keys or a profile, not both' });
  });

/** A certificate or key: a file (`…_PATH`, `…_path`) or the PEM itself (`…_DATA`, `…_data`). */
const dataSource = z.union([
  z.strictObject({ path: z.string().min(1) }),
  // Temporal's envconfig hands the PEM of a `…_data` setting over as bytes.
  z.strictObject({ data: z.union([z.string().min(1), z.instanceof(Uint8Array)]) }),
]);

const temporalConfigSchema = z.object({
  /** Frontend `host:port`. */
  address: z.string().min(1),
  namespace: z.string().min(1),
  /** Prefix of every task queue: `callpipe`, `callpipe-media`, `callpipe-probe`, `callpipe-asr`, `callpipe-nlp`. */
  taskQueuePrefix: z.string().min(1),
  /** API key (Temporal Cloud), sent as `authorization: Bearer …`; turns TLS on. Never logged. */
  apiKey: z.string().min(1).optional(),
  /** TLS; present (and not `disabled`) means TLS with the system's roots unless a CA is given. */
  tls: z
    .object({
      disabled: z.boolean().optional(),
      /** Name the server's certificate must carry, when it is not the address's host. */
      serverName: z.string().min(1).optional(),
      serverCACert: dataSource.optional(),
      /** Client certificate and key (mTLS), together. */
      clientCert: dataSource.optional(),
      clientKey: dataSource.optional(),
    })
    .refine((tls) => !tls.clientCert === !tls.clientKey, {
      message: 'a client certificate and its key go together',
    })
    .optional(),
  /** gRPC metadata sent with every call (the profile's `grpc_meta`, `TEMPORAL_GRPC_META_*`). */
  grpcMeta: z.record(z.string(), z.string()).optional(),
  /**
   * Keys of the payload codec (workers/payload-codec.ts): `<key id>:<base64 of 32 bytes>` entries, comma-
   * or line-separated; the first encrypts, all decrypt. A secret: never logged, never in stack.json.
   */
  payloadKeys: z.string().min(1).optional(),
  /** A file of such entries, one a line (read at start; `payloadKeys` wins when both are set). */
  payloadKeysFile: z.string().min(1).optional(),
});

const limitsConfigSchema = z.object({
  /**
   * Recognition sessions one asr worker process opens at once (its activity slots); the balanced plan's
   * budget too. With one asr worker, the account's limit (spec 02: 550 No Resource beyond it).
   */
  asrConcurrentSessions: positiveInt,
  /**
   * The account's concurrent recognition sessions, shared by every asr worker process through one budget
   * workflow per account (workflows/session-budget.ts): the sum of open sessions never exceeds it, however
   * many workers run. Unset (the default): each process keeps to `asrConcurrentSessions` alone.
   */
  asrAccountSessions: positiveInt.optional(),
  /** How long the account's budget keeps the leases of a worker it no longer hears from (a killed one). */
  asrLeaseSeconds: positive,
  /** Text-analysis requests per second across all workers (Temporal task-queue rate limit). */
  nlpRequestsPerSecond: positive,
  /** Text-analysis requests in flight per process (p-limit). */
  nlpConcurrency: positiveInt,
  /** ffmpeg processes per media worker: about one per core. */
  mediaConcurrency: positiveInt,
  /**
   * Probes per media worker, on a queue of their own (`<prefix>-probe`): a night's flood of new calls'
   * probes (each a download and a full decode) never holds the slots that plan and transcode the calls
   * already under way, which feed the recognition sessions.
   */
  probeConcurrency: positiveInt,
  /** Longest recognition session in seconds, at most the service's (spec 02, Limits). */
  maxSessionSeconds: positive.max(SERVICE_MAX_SESSION_SECONDS),
  /**
   * Session planning: `balanced` cuts each recording into sessions of about duration × tracks ÷
   * `asrConcurrentSessions` (so a long call finishes in a fraction of its length instead of holding the
   * night back); `fixed` cuts at `maxSessionSeconds` (fewest sessions). Default `balanced`.
   */
  planStrategy: z.enum(['fixed', 'balanced']),
  /** balanced: shortest session worth its start, stop and transcode (a shorter track stays whole). */
  minSessionSeconds: positive,
});

const stackConfigSchema = z.object({
  /** State folder of the local stack: databases, S3 data, logs. */
  home: z.string().min(1),
  temporalPort: port,
  temporalUiPort: port,
  s3Port: port,
  emulatorPort: port,
  metricsPort: port,
  /**
   * Address the workers' metrics and health endpoint binds to: loopback by default, so a developer's
   * machine exposes nothing; `0.0.0.0` in a container (the Dockerfile and docker-compose.yml set it), or a
   * scraper and the orchestrator's probes outside the container reach nothing.
   */
  metricsHost: z.string().min(1),
  /** `fixed`: refuse taken ports; `auto`: take free ones. */
  ports: z.enum(['fixed', 'auto']),
  emulatorSpeed: positive,
  /** The stack's emulator answers a file request after this × its audio seconds (÷ speed). */
  emulatorFileRtf: z.number().nonnegative(),
  emulatorPhrasebook: z.string().optional(),
  emulatorFaults: z.string().optional(),
  /** Accounts file of the emulator (credentials, rate limit, sessions); default: one local account. */
  emulatorAccounts: z.string().optional(),
});

const insightsConfigSchema = z.object({
  /** Rule file of call insights (YAML or JSON, schemas/rules.ts); default the shipped Japanese one. */
  rules: z.string().min(1).optional(),
  /**
   * Custom vocabulary: a dictionary file (notation, TAB, reading, optionally TAB and weight per line,
   * spec 02) sent as the temporary dictionary of every recognition session, checked before any starts.
   */
  dictionary: z.string().min(1).optional(),
  /** Sentiment per utterance, turn or window (schemas/text-grains.ts); default window. */
  sentimentGrain: z.enum(TEXT_GRAINS),
  /** Dialog acts (`/nlp/v1/sentence_type`) per utterance, turn or window, or `off`; default turn. */
  dialogActs: z.enum([...TEXT_GRAINS, 'off']),
  /** Length of a window, and the longest turn, in seconds. */
  windowSeconds: positive,
  /**
   * Roles of a stereo call's channels: `evidence` (default) swaps the channel map when what is said
   * contradicts it with high confidence; `fixed` keeps the map whatever is said (plan.channels.roles).
   */
  speakerRoles: z.enum(['evidence', 'fixed']),
  /**
   * `separate` (default): a mono call's voices are told apart by the voice and named; `line`: by how each
   * utterance sounds, line included (cheaper, for legs that differ by their line); `off`: one `mixed`.
   */
  separateVoices: z.enum(['separate', 'line', 'off']),
});

/**
 * Personal data (docs/personal-data.md). Text is always redacted; what a deployment chooses is the masks,
 * its own terms and patterns, whether an unredacted copy is kept (and where), and whether a redacted copy
 * of the audio is written. Rules may also come from a file of their own (`rulesFile`, JSON of
 * `schemas/redaction.ts` redactionRulesSchema), which then replaces the inline `masks`, `terms` and
 * `patterns`: a list of customers' names is better kept apart from the rest of the configuration.
 */
const redactionConfigSchema = redactionRulesSchema.extend({
  rulesFile: z.string().min(1).optional(),
  /**
   * Secret of the keyed digests `callpipe find` matches personal values by (schemas/personal-digest.ts):
   * at least 16 bytes. A secret: never logged, never in stack.json. Unset with no `digestKeyFile`: the
   * local stack makes one in its home; elsewhere no digest is written.
   */
  digestKey: z.string().min(1).optional(),
  /** A file holding that secret (read at start; `digestKey` wins when both are set). */
  digestKeyFile: z.string().min(1).optional(),
  /**
   * Manifest columns that hold personal data, beyond the common names (schemas/personal-columns.ts):
   * column → kind (`phone`, `email`, `name`, `customer`, …). Their values are masked in stored outputs
   * and kept as keyed digests for `callpipe find`.
   */
  personalColumns: z.record(z.string().min(1), z.string().regex(/^[a-z][A-Za-z0-9]{0,31}$/)).optional(),
  /**
   * Where unredacted `result.json` and `transcript.vtt` go: `s3://bucket/prefix` or a key prefix of the
   * output bucket, never the output prefix itself nor inside it. Unset (the default): nowhere.
   */
  unredactedPrefix: z.string().min(1).optional(),
  /**
   * Write a redacted copy of each recording (`audio.redacted.flac` beside result.json, every channel, each
   * redacted utterance's time range masked), only once it checked out. Default false.
   */
  audio: bool,
  /** What covers a redacted span in that copy: a 1-kHz tone (default) or silence. */
  audioMask: z.enum(['tone', 'silence']),
});

/** Call ids from file names: see {@link configSchema} `callIds`. */
const CALL_ID_MODES = ['auto', 'slug', 'hash'] as const;

const configSchema = z.object({
  service: serviceConfigSchema,
  s3: s3ConfigSchema,
  temporal: temporalConfigSchema,
  limits: limitsConfigSchema,
  insights: insightsConfigSchema,
  redaction: redactionConfigSchema,
  stack: stackConfigSchema,
  /**
   * The call center's time zone (IANA): the day a call belongs to in the analysis tables (their `dt`
   * partitions) and the times the night report shows. Default UTC.
   */
  timeZone: z.string().refine(isTimeZone, 'must be an IANA time zone such as Asia/Tokyo or UTC'),
  /**
   * How call ids are made from file names (activities/storage/call-id.ts): `auto` (default) pseudonymous
   * when the name holds a run of 7+ digits or an e-mail address, `hash` always, `slug` never.
   */
  callIds: z.enum(CALL_ID_MODES),
  /**
   * How long calls are kept, per kind (schemas/lifecycle.ts, `parseRetentionDays`): `365`, or
   * `results=365,unredacted=30,redacted-audio=90,staging=7,recordings=365`. Unset: kept until erased.
   * Enforced by the retention Schedule (`callpipe schedule retention`).
   */
  retentionDays: retentionDaysSchema.optional(),
  logLevel: z.enum(['debug', 'info', 'warn', 'error']),
  /** The deployment's prices (schemas/cost.ts): the batch report's cost in money. None by default. */
  prices: pricesInputSchema.optional(),
  /** Call events and their sinks (schemas/events.ts, docs/events.md). */
  events: eventsConfigSchema,
});

export type Config = z.infer<typeof configSchema>;
export type CallIdMode = (typeof CALL_ID_MODES)[number];
export type ServiceConfig = z.infer<typeof serviceConfigSchema>;
export type S3Config = z.infer<typeof s3ConfigSchema>;
export type TemporalConfig = z.infer<typeof temporalConfigSchema>;

export type RedactionConfig = z.infer<typeof redactionConfigSchema>;

/** Credentials of the local emulator's default account; only ever used against the local stack. */
export const LOCAL_CLIENT_ID = 'callpipe-local';
export const LOCAL_CLIENT_SECRET = 'callpipe-local-secret';
export const LOCAL_DOMAIN_ID = 'cpdomain';
/** Credentials of the local stack's S3 server: the stack and the tests set them explicitly. */
export const LOCAL_S3_ACCESS_KEY = 'callpipe';
export const LOCAL_S3_SECRET_KEY = 'callpipe-secret';

/** Defaults describe the local stack, so that `callpipe demo` works with no configuration at all. */
export const DEFAULTS = {
  service: {
    baseUrl: 'http://127.0.0.1:8787/api/dev',
    authUrl: 'http://127.0.0.1:8787/v1/oauth/accesstokens',
    clientId: LOCAL_CLIENT_ID,
    clientSecret: LOCAL_CLIENT_SECRET,
    model: 'ja-gen_tf-08',
    domainId: LOCAL_DOMAIN_ID,
    speed: 1,
    speedMax: DEFAULT_SPEED_MAX,
    recognition: 'stream',
  },
  // S3 as AWS's tools default: AWS's endpoint, the SDK's region and credentials. The local stack sets its
  // own endpoint and keys.
  s3: {
    bucket: 'callpipe',
    inputPrefix: 'input/',
    outputPrefix: 'results/',
    stagingPrefix: 'staging/',
    tablesPrefix: 'tables/',
    keepStaging: false,
  },
  temporal: { address: '127.0.0.1:7233', namespace: 'default', taskQueuePrefix: DEFAULT_TASK_QUEUE_PREFIX },
  limits: LIMIT_DEFAULTS,
  insights: {
    sentimentGrain: DEFAULT_TEXT_GRAINS.sentiment,
    dialogActs: DEFAULT_TEXT_GRAINS.dialogActs,
    windowSeconds: DEFAULT_TEXT_GRAINS.windowSeconds,
    speakerRoles: 'evidence',
    separateVoices: 'separate',
  },
  redaction: { masks: {}, terms: [], patterns: [], audio: false, audioMask: 'tone' },
  stack: {
    home: '.callpipe',
    temporalPort: 7233,
    temporalUiPort: 8233,
    s3Port: 8333,
    emulatorPort: 8787,
    metricsPort: 9464,
    metricsHost: '127.0.0.1',
    ports: 'fixed',
    emulatorSpeed: 1,
    emulatorFileRtf: DEFAULT_FILE_RTF,
  },
  timeZone: 'UTC',
  callIds: 'auto',
  logLevel: 'info',
  events: EVENTS_DEFAULTS,
} as const;

/** Environment variable → config path. The table is the documentation (docs/configuration.md, .env.example). */
export const ENV_VARS: Record<string, string> = {
  CALLPIPE_SERVICE_URL: 'service.baseUrl',
  CALLPIPE_ASR_URL: 'service.asrBaseUrl',
  CALLPIPE_AUTH_URL: 'service.authUrl',
  CALLPIPE_CLIENT_ID: 'service.clientId',
  CALLPIPE_CLIENT_SECRET: 'service.clientSecret',
  CALLPIPE_MODEL: 'service.model',
  CALLPIPE_DOMAIN_ID: 'service.domainId',
  CALLPIPE_SERVICE_SPEED: 'service.speed',
  CALLPIPE_SERVICE_SPEED_MAX: 'service.speedMax',
  CALLPIPE_RECOGNITION: 'service.recognition',
  CALLPIPE_S3_ENDPOINT: 's3.endpoint',
  CALLPIPE_S3_REGION: 's3.region',
  CALLPIPE_S3_BUCKET: 's3.bucket',
  CALLPIPE_S3_INPUT_PREFIX: 's3.inputPrefix',
  CALLPIPE_S3_OUTPUT_PREFIX: 's3.outputPrefix',
  CALLPIPE_S3_STAGING_PREFIX: 's3.stagingPrefix',
  CALLPIPE_S3_TABLES_PREFIX: 's3.tablesPrefix',
  CALLPIPE_S3_ACCESS_KEY_ID: 's3.accessKeyId',
  CALLPIPE_S3_SECRET_ACCESS_KEY: 's3.secretAccessKey',
  CALLPIPE_S3_SESSION_TOKEN: 's3.sessionToken',
  CALLPIPE_S3_PROFILE: 's3.profile',
  CALLPIPE_S3_FORCE_PATH_STYLE: 's3.forcePathStyle',
  CALLPIPE_KEEP_STAGING: 's3.keepStaging',
  CALLPIPE_TEMPORAL_ADDRESS: 'temporal.address',
  CALLPIPE_TEMPORAL_NAMESPACE: 'temporal.namespace',
  CALLPIPE_TASK_QUEUE_PREFIX: 'temporal.taskQueuePrefix',
  CALLPIPE_PAYLOAD_KEYS: 'temporal.payloadKeys',
  CALLPIPE_PAYLOAD_KEYS_FILE: 'temporal.payloadKeysFile',
  CALLPIPE_ASR_CONCURRENT_SESSIONS: 'limits.asrConcurrentSessions',
  CALLPIPE_ASR_ACCOUNT_SESSIONS: 'limits.asrAccountSessions',
  CALLPIPE_ASR_LEASE_SECONDS: 'limits.asrLeaseSeconds',
  CALLPIPE_NLP_RPS: 'limits.nlpRequestsPerSecond',
  CALLPIPE_NLP_CONCURRENCY: 'limits.nlpConcurrency',
  CALLPIPE_MEDIA_CONCURRENCY: 'limits.mediaConcurrency',
  CALLPIPE_PROBE_CONCURRENCY: 'limits.probeConcurrency',
  CALLPIPE_MAX_SESSION_SECONDS: 'limits.maxSessionSeconds',
  CALLPIPE_PLAN_STRATEGY: 'limits.planStrategy',
  CALLPIPE_MIN_SESSION_SECONDS: 'limits.minSessionSeconds',
  CALLPIPE_RULES: 'insights.rules',
  CALLPIPE_DICTIONARY: 'insights.dictionary',
  CALLPIPE_SENTIMENT_GRAIN: 'insights.sentimentGrain',
  CALLPIPE_DIALOG_ACTS: 'insights.dialogActs',
  CALLPIPE_TEXT_WINDOW_SECONDS: 'insights.windowSeconds',
  CALLPIPE_SPEAKER_ROLES: 'insights.speakerRoles',
  CALLPIPE_SEPARATE_VOICES: 'insights.separateVoices',
  CALLPIPE_REDACTION_RULES: 'redaction.rulesFile',
  CALLPIPE_DIGEST_KEY: 'redaction.digestKey',
  CALLPIPE_DIGEST_KEY_FILE: 'redaction.digestKeyFile',
  CALLPIPE_UNREDACTED_PREFIX: 'redaction.unredactedPrefix',
  CALLPIPE_REDACT_AUDIO: 'redaction.audio',
  CALLPIPE_REDACT_AUDIO_MASK: 'redaction.audioMask',
  CALLPIPE_HOME: 'stack.home',
  CALLPIPE_TEMPORAL_PORT: 'stack.temporalPort',
  CALLPIPE_TEMPORAL_UI_PORT: 'stack.temporalUiPort',
  CALLPIPE_S3_PORT: 'stack.s3Port',
  CALLPIPE_EMULATOR_PORT: 'stack.emulatorPort',
  CALLPIPE_METRICS_PORT: 'stack.metricsPort',
  CALLPIPE_METRICS_HOST: 'stack.metricsHost',
  CALLPIPE_PORTS: 'stack.ports',
  CALLPIPE_EMULATOR_SPEED: 'stack.emulatorSpeed',
  CALLPIPE_EMULATOR_FILE_RTF: 'stack.emulatorFileRtf',
  CALLPIPE_EMULATOR_PHRASEBOOK: 'stack.emulatorPhrasebook',
  CALLPIPE_EMULATOR_FAULTS: 'stack.emulatorFaults',
  CALLPIPE_EMULATOR_ACCOUNTS: 'stack.emulatorAccounts',
  CALLPIPE_TIME_ZONE: 'timeZone',
  CALLPIPE_CALL_ID: 'callIds',
  CALLPIPE_RETENTION_DAYS: 'retentionDays',
  CALLPIPE_LOG_LEVEL: 'logLevel',
  CALLPIPE_PRICES: 'prices',
  ...EVENTS_ENV_VARS,
};

/**
 * Variables of one process rather than of a deployment: where its external tools are, debugging, the
 * local stack's hand-over to its children, and the emulator command's own settings. Read here by
 * {@link processSettings}, apart from `loadConfig`: a worker must find ffmpeg, and `callpipe emulator`
 * its settings, whatever else the environment holds. An empty variable is unset. None is a secret.
 */
export const PROCESS_ENV_VARS = {
  /** ffmpeg and ffprobe binaries (see {@link mediaTools}). */
  ffmpeg: 'CALLPIPE_FFMPEG',
  ffprobe: 'CALLPIPE_FFPROBE',
  /** Chromium for the browser tests (cli/tools/provision.ts looks for Debian's otherwise). */
  chromium: 'CALLPIPE_CHROMIUM',
  /** A sox that writes AMR-NB, for the AMR fixtures (else the one on PATH). */
  sox: 'CALLPIPE_SOX',
  /** The Go toolchain that builds the pinned Temporal server (else the one on PATH or in /usr/local/go). */
  go: 'CALLPIPE_GO',
  /** Any value: the command prints an error's stack under its one line. */
  debug: 'CALLPIPE_DEBUG',
  /** A prebuilt workflow bundle for the workers (tests, production images); unset: bundled from source. */
  workflowBundle: 'CALLPIPE_WORKFLOW_BUNDLE',
  /** Set by the stack on its children: `stdin` means "stop when stdin closes" (workers/parent-watch.ts). */
  stopWithParent: 'CALLPIPE_STOP_WITH_PARENT',
  /** `callpipe emulator`: its time scale, as the stack's (`stack.emulatorSpeed`). */
  emulatorSpeed: 'CALLPIPE_EMULATOR_SPEED',
  /** `callpipe emulator`: a file request's processing time × its audio seconds, as the stack's. */
  emulatorFileRtf: 'CALLPIPE_EMULATOR_FILE_RTF',
  /** `callpipe emulator`: the fastest pace it accepts, × real time. */
  emulatorCeiling: 'CALLPIPE_EMULATOR_CEILING',
  /** `callpipe emulator`: slack on the spec's deadlines between requests, ms. */
  emulatorDeadlineSlackMs: 'CALLPIPE_EMULATOR_DEADLINE_SLACK_MS',
  /** `callpipe emulator`: its phrasebook and fault file, as the stack's. */
  emulatorPhrasebook: 'CALLPIPE_EMULATOR_PHRASEBOOK',
  emulatorFaults: 'CALLPIPE_EMULATOR_FAULTS',
  /** The build id a worker's Deployment Version carries (workers/versioning.ts); unset: version + commit. */
  buildId: 'CALLPIPE_BUILD_ID',
  /** The Worker Deployment a worker joins; unset: named by the task-queue prefix. */
  deploymentName: 'CALLPIPE_DEPLOYMENT_NAME',
} as const;

export type ProcessSettings = { -readonly [K in keyof typeof PROCESS_ENV_VARS]?: string };

/** The variables of {@link PROCESS_ENV_VARS} that are set (not empty), by their names there. */
export function processSettings(env: NodeJS.ProcessEnv = process.env): ProcessSettings {
  const settings: ProcessSettings = {};
  for (const [key, name] of Object.entries(PROCESS_ENV_VARS) as [keyof ProcessSettings, string][]) {
    const value = env[name];
    if (value) settings[key] = value;
  }
  return settings;
}

/**
 * The stack's home as a worker process sees it (`CALLPIPE_HOME`, which the stack hands its children), or
 * undefined when unset: where a worker keeps its private local folders and looks for a full disk.
 */
export function stackHomeOf(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.CALLPIPE_HOME || undefined;
}

/**
 * The ffmpeg and ffprobe a process runs: the variables when set, else the builds the tools module
 * provides (`provided`: the local stack, tests), else the ones on PATH. The stack hands its choice to its
 * children in the same variables.
 */
export function mediaTools(
  env: NodeJS.ProcessEnv = process.env,
  provided?: { ffmpeg: string; ffprobe: string },
): { ffmpeg: string; ffprobe: string } {
  const { ffmpeg, ffprobe } = processSettings(env);
  return {
    ffmpeg: ffmpeg ?? provided?.ffmpeg ?? 'ffmpeg',
    ffprobe: ffprobe ?? provided?.ffprobe ?? 'ffprobe',
  };
}

/**
 * Standard AWS variables callpipe reads itself, beneath CALLPIPE_* and above the config file; the first
 * listed for a path wins (AWS_ENDPOINT_URL_S3 over AWS_ENDPOINT_URL, AWS_REGION over AWS_DEFAULT_REGION, as
 * in the AWS CLI). AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true drops the endpoint ones, as in the SDK.
 */
const AWS_VARS: [name: string, path: string][] = [
  ['AWS_ENDPOINT_URL_S3', 's3.endpoint'],
  ['AWS_ENDPOINT_URL', 's3.endpoint'],
  ['AWS_REGION', 's3.region'],
  ['AWS_DEFAULT_REGION', 's3.region'],
];

/**
 * AWS variables that choose credentials. callpipe does not read their values: the SDK's provider chain
 * does (AWS_PROFILE over the keys, as in the AWS CLI). Their presence only outranks the config file's keys.
 */
const AWS_CREDENTIAL_VARS = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_PROFILE',
];

/** The S3 credential settings, decided together by the strongest source that names any of them. */
const CREDENTIAL_KEYS = ['accessKeyId', 'secretAccessKey', 'sessionToken', 'profile'] as const;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Tree = Record<string, unknown>;

function setPath(tree: Tree, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = tree;
  for (const part of parts.slice(0, -1)) {
    node[part] = { ...((node[part] as Tree | undefined) ?? {}) };
    node = node[part] as Tree;
  }
  node[parts.at(-1)!] = value;
}

function getPath(tree: Tree, path: string): unknown {
  return path.split('.').reduce<unknown>((node, part) => (node as Tree | undefined)?.[part], tree);
}

/**
 * `over` on `base`; an `undefined` in `over` clears what `base` had. A certificate given as a file or as
 * PEM (`{ path }`, `{ data }`) is one value: a stronger source's file replaces a weaker one's PEM.
 */
function mergeDeep(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key];
    out[key] = isSubtree(value) && isSubtree(prev) ? mergeDeep(prev as Tree, value as Tree) : value;
  }
  return out;
}

function isSubtree(value: unknown): boolean {
  return (
    !!value && typeof value === 'object' && !Array.isArray(value) && !('path' in value) && !('data' in value)
  );
}

/** A Temporal profile as a config tree, only what it sets (an `undefined` would clear a weaker source). */
function temporalTree(profile: ClientConfigProfile): Tree {
  const defined = (tree: object): Tree =>
    Object.fromEntries(Object.entries(tree).filter(([, value]) => value !== undefined));
  const { address, namespace, apiKey, tls, grpcMeta } = profile;
  const values = defined({ address, namespace, apiKey, tls: tls && defined(tls), grpcMeta });
  return Object.keys(values).length ? { temporal: values } : {};
}

/**
 * Temporal's own sources, read by `@temporalio/envconfig` as the `temporal` CLI reads them, apart: the TOML
 * profile (rank: the tool's file) and the TEMPORAL_* variables (rank: standard variables), so callpipe's
 * config file ranks between them. Empty variables count as unset.
 */
function temporalSources(env: NodeJS.ProcessEnv): { file: Tree; variables: Tree; profile: string } {
  const vars = Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''),
  );
  const profile = vars.TEMPORAL_PROFILE ?? 'default';
  let fromFile: ClientConfigProfile;
  try {
    fromFile = loadClientConfigProfile({
      profile: vars.TEMPORAL_PROFILE,
      disableEnv: true,
      overrideEnvVars: vars,
    });
  } catch (err) {
    const where = vars.TEMPORAL_CONFIG_FILE ?? 'the Temporal config file';
    throw new ConfigError(`Temporal profile '${profile}' in ${where}: ${(err as Error).message}`);
  }
  const fromEnv = loadClientConfigProfile({ disableFile: true, overrideEnvVars: vars });
  return { file: temporalTree(fromFile), variables: temporalTree(fromEnv), profile };
}

/** Which TEMPORAL_* variable carries a setting, for error messages. */
const TEMPORAL_VARS: Record<string, string> = {
  'temporal.address': 'TEMPORAL_ADDRESS',
  'temporal.namespace': 'TEMPORAL_NAMESPACE',
  'temporal.apiKey': 'TEMPORAL_API_KEY',
  'temporal.tls': 'TEMPORAL_TLS_*',
  'temporal.grpcMeta': 'TEMPORAL_GRPC_META_*',
};

/** A config file's `null` and `""` clear a value, like an empty variable: both become `undefined`. */
function clearEmpty(tree: Tree): Tree {
  return Object.fromEntries(
    Object.entries(tree).map(([key, value]) => [
      key,
      value === null || value === ''
        ? undefined
        : value && typeof value === 'object' && !Array.isArray(value)
          ? clearEmpty(value as Tree)
          : value,
    ]),
  );
}

/**
 * One source's values as a tree to merge. When it names any S3 credential setting, it decides them all:
 * the ones it does not set are cleared.
 */
function layer(values: Tree, claimsCredentials: boolean): Tree {
  if (!claimsCredentials) return values;
  const s3 = (values.s3 as Tree | undefined) ?? {};
  const cleared = Object.fromEntries(CREDENTIAL_KEYS.map((key) => [key, s3[key]]));
  return { ...values, s3: { ...s3, ...cleared } };
}

function namesCredentials(tree: Tree): boolean {
  const s3 = tree.s3 as Tree | undefined;
  return !!s3 && CREDENTIAL_KEYS.some((key) => key in s3);
}

/** Bytes of a config file callpipe reads: 10,000 inline redaction terms of 200 characters fit. */
export const CONFIG_FILE_MAX_BYTES = 8 * 1024 * 1024;

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  /** Config file path; default `CALLPIPE_CONFIG` or `./callpipe.config.json` when present. */
  file?: string;
  /** Values that win over everything (used by the local stack and tests). */
  overrides?: Tree;
}

/** Reads and validates the configuration. Throws {@link ConfigError} naming the variable at fault. */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  let tree: Tree = structuredClone(DEFAULTS) as unknown as Tree;
  const origin = new Map<string, string>();

  // The tools' own files callpipe reads itself: Temporal's TOML profile (the AWS SDK reads AWS's files).
  const temporal = temporalSources(env);
  tree = mergeDeep(tree, temporal.file);
  for (const path of Object.keys(TEMPORAL_VARS))
    if (hasPath(temporal.file, path)) origin.set(path, `Temporal profile '${temporal.profile}'`);

  // The config file: beneath every variable.
  const file =
    options.file ??
    env.CALLPIPE_CONFIG ??
    (existsSync('callpipe.config.json') ? 'callpipe.config.json' : undefined);
  if (file) {
    let parsed: unknown;
    try {
      // Bounded before it is read (docs/input-limits.md): inline redaction terms fit well inside.
      const stat = statSync(resolve(file));
      if (!stat.isFile()) throw new Error('not a regular file');
      if (stat.size > CONFIG_FILE_MAX_BYTES)
        throw new Error(
          `the file is ${stat.size} bytes, more than the ${CONFIG_FILE_MAX_BYTES} callpipe reads`,
        );
      parsed = JSON.parse(readFileSync(resolve(file), 'utf8'));
    } catch (err) {
      throw new ConfigError(`config file ${file}: ${(err as Error).message}`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new ConfigError(`config file ${file}: not a JSON object`);
    const values = clearEmpty(parsed as Tree);
    tree = mergeDeep(tree, layer(values, namesCredentials(values)));
    for (const path of Object.values(ENV_VARS)) {
      if (hasPath(values, path)) origin.set(path, `${file}: ${path}`);
    }
  }

  // The standard AWS variables: over the file, as AWS's tools rank their variables over their files.
  const aws: Tree = {};
  const ignoreEndpoints = env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS === 'true';
  for (const [name, path] of [...AWS_VARS].reverse()) {
    const value = env[name];
    if (!value || (ignoreEndpoints && path === 's3.endpoint')) continue;
    setPath(aws, path, value);
    origin.set(path, name);
  }
  const awsNamesCredentials = AWS_CREDENTIAL_VARS.some((name) => env[name]);
  tree = mergeDeep(tree, layer(aws, awsNamesCredentials));
  // The TEMPORAL_* variables, likewise over the file.
  tree = mergeDeep(tree, temporal.variables);
  for (const [path, name] of Object.entries(TEMPORAL_VARS))
    if (hasPath(temporal.variables, path)) origin.set(path, name);

  // CALLPIPE_* variables: over everything but the caller's overrides; empty clears.
  const own: Tree = {};
  for (const [name, path] of Object.entries(ENV_VARS)) {
    const value = env[name];
    if (value === undefined) continue;
    setPath(own, path, value === '' ? undefined : value);
    origin.set(path, name);
  }
  tree = mergeDeep(tree, layer(own, namesCredentials(own)));
  if (options.overrides)
    tree = mergeDeep(tree, layer(options.overrides, namesCredentials(options.overrides)));

  // Path-style addressing follows the endpoint unless a source set it: S3-compatible servers want it.
  const s3 = tree.s3 as Tree;
  if (s3.forcePathStyle === undefined) s3.forcePathStyle = s3.endpoint !== undefined;

  const result = configSchema.safeParse(tree);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = issue.path.join('.');
    // The source of the value, or of the nearest setting around it (`temporal.tls` for a certificate).
    const parts = issue.path.map(String);
    const around = parts.map((_, i) => parts.slice(0, parts.length - i).join('.'));
    const where = around.map((p) => origin.get(p)).find(Boolean) ?? envNameOf(path) ?? path;
    // Never echo the value: it may be a secret.
    const message = /received undefined/.test(issue.message)
      ? 'required, and it is empty or unset'
      : issue.message;
    throw new ConfigError(`invalid configuration ${where}: ${message}`);
  }
  return result.data;
}

function hasPath(tree: Tree, path: string): boolean {
  const parts = path.split('.');
  const parent = parts.length > 1 ? getPath(tree, parts.slice(0, -1).join('.')) : tree;
  return !!parent && typeof parent === 'object' && parts.at(-1)! in parent;
}

function envNameOf(path: string): string | undefined {
  return Object.entries(ENV_VARS).find(([, p]) => p === path)?.[0];
}

/**
 * Session planning from configuration. The budget is the asr worker's concurrent sessions: each call is
 * cut as if it had the whole budget to itself. Several calls share it in a batch, but that costs the
 * makespan bound nothing: a call's longest session (its session audio ÷ budget) never exceeds the
 * batch's total session audio ÷ budget, so `max(longest session, total ÷ budget)` stays at its floor;
 * the price is a few more sessions (a start and a stop request, an ffmpeg run each) for short calls,
 * held back by `minSessionSeconds`. Planning for the whole batch would need every call probed first.
 */
export function planOptionsOf(config: Pick<Config, 'limits' | 'insights'>): Required<
  Pick<PlanOptions, 'maxSessionSeconds' | 'budget' | 'minSessionSeconds'>
> & {
  strategy: Config['limits']['planStrategy'];
} & Pick<PlanOptions, 'channels'> {
  const { speakerRoles: roles, separateVoices: voices } = config.insights;
  return {
    strategy: config.limits.planStrategy,
    maxSessionSeconds: config.limits.maxSessionSeconds,
    budget: config.limits.asrConcurrentSessions,
    minSessionSeconds: config.limits.minSessionSeconds,
    // Only when chosen: a call's spec names the finer settings a deployment changed (schemas/call-spec.ts).
    ...(roles !== 'evidence' || voices !== 'separate' ? { channels: { roles, voices } } : {}),
  };
}

/** Grains of the per-sentence text steps from configuration (every call's `text` input). */
export function textGrainsOf(config: Pick<Config, 'insights'>): TextGrains {
  return {
    sentiment: config.insights.sentimentGrain,
    dialogActs: config.insights.dialogActs,
    windowSeconds: config.insights.windowSeconds,
  };
}

/**
 * What a call's workflow is told about redaction, for results going to `output`: where unredacted copies
 * go (checked against `output`: throws a KeyError when it is the same place) and whether to redact the
 * audio. The rules stay with the workers.
 */
export function redactionInputOf(config: Pick<Config, 'redaction'>, output: OutputLocation): RedactionInput {
  const { unredactedPrefix, audio, audioMask } = config.redaction;
  return {
    ...(unredactedPrefix ? { unredacted: unredactedLocationOf(unredactedPrefix, output) } : {}),
    ...(audio ? { audio: { mask: audioMask } } : {}),
  };
}

/** Task queue names of this deployment (schemas/task-queues.ts): the workflows' own and one per kind of activity. */
export function taskQueues(config: Pick<Config, 'temporal'>) {
  return taskQueuesOf(config.temporal.taskQueuePrefix);
}

/** Where the analysis tables of `output` go (its bucket, the configured prefix) and their time zone. */
export function tablesOf(config: Pick<Config, 's3' | 'timeZone'>, output: OutputLocation): TablesLocation {
  return tablesLocationOf(output, { prefix: config.s3.tablesPrefix, timeZone: config.timeZone });
}
