/**
 * Configuration of callpipe: the schema of every setting and its defaults (which describe the local
 * stack). Beside it, one module per concept, as schemas/events.ts keeps the events' settings: the
 * variable that carries each setting (config-variables.ts), where the values come from and which source
 * wins (config-loader.ts, `loadConfig`), one process's own variables (process-settings.ts), and what a call
 * is told, derived from a configuration (call-spec.ts).
 */
import { z } from 'zod';
import { LIMIT_DEFAULTS, SERVICE_MAX_SESSION_SECONDS } from './limits.ts';
import { isTimeZone } from './tables.ts';
import { DEFAULT_TEXT_GRAINS, TEXT_GRAINS } from './text-grains.ts';
import { DEFAULT_REASON_CHARS, DEFAULT_REASON_TEXT, REASON_TEXTS } from './reasons.ts';
import { DEFAULT_CHECK_BELOW, DEFAULT_REVIEW_BELOW } from './transcript-quality.ts';
import { redactionRulesSchema } from './redaction.ts';
import { retentionDaysSchema } from './lifecycle.ts';
import { DEFAULT_TASK_QUEUE_PREFIX, taskQueuesOf } from './task-queues.ts';
import { pricesInputSchema } from './cost.ts';
import { DEFAULT_FILE_RTF, RECOGNITION_MODES } from './recognition.ts';
import { EVENTS_DEFAULTS, eventsConfigSchema } from './events.ts';

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
   * probes (each a download, a read of its packets and a decode of its first seconds) never holds the
   * slots that plan and transcode the calls already under way, which feed the recognition sessions.
   * Two by default: a long recording's probe, mostly waiting on its download, does not hold back the
   * next call's, whose plan file recognition's sessions wait for.
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
  /**
   * Call reasons: the text classification model (spec 03) each call is classified with, trained by
   * `callpipe reasons train`; unset, calls are not classified (the rule file's `reasons.model` otherwise).
   */
  reasonsModel: z.string().min(1).optional(),
  /** What of a call is classified, and what `callId,class` training lines are built from (schemas/reasons.ts). */
  reasonsText: z.enum(REASON_TEXTS),
  /** Utterances recognized with a confidence below this are checked for misrecognition; 0: none. */
  misrecognitionBelow: z.number().min(0).max(1),
  /** A call whose transcript quality score is below this needs review (schemas/transcript-quality.ts). */
  reviewBelow: z.number().min(0).max(1),
  /** Characters of the customer's words read from the start of the call (schemas/reasons.ts). */
  reasonsChars: z.number().int().min(1).max(3000),
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

export const configSchema = z.object({
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
    reasonsText: DEFAULT_REASON_TEXT,
    reasonsChars: DEFAULT_REASON_CHARS,
    misrecognitionBelow: DEFAULT_CHECK_BELOW,
    reviewBelow: DEFAULT_REVIEW_BELOW,
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
/** Task queue names of this deployment (schemas/task-queues.ts): the workflows' own and one per kind of activity. */
export function taskQueues(config: Pick<Config, 'temporal'>) {
  return taskQueuesOf(config.temporal.taskQueuePrefix);
}
