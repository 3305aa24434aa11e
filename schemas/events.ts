/**
 * Call events (docs/events.md): what callpipe tells other systems, in CloudEvents 1.0 (JSON, structured
 * mode), and where it tells them (sinks).
 *
 * Glossary: an *event* is one fact about a call or a batch (`callpipe.call.completed`, …) with a stable
 * id; a *sink* is where events go: the NDJSON objects in S3 (every event, written before anything else),
 * the HTTP webhooks of `CALLPIPE_EVENTS_WEBHOOK_URL` (every event, signed the Standard Webhooks way) and
 * Slack (alerts only). A *delivery* is one event to one sink, retried with backoff until it succeeds or
 * its time is up.
 *
 * Event data holds nothing that `result.json` (redacted) or `error.json` does not already hold: ids, keys,
 * the outcome, the call's length, matched categories and alerts, the scorecard's totals and the sentiment
 * summary. Never a transcript, a summary's text or a manifest column.
 */
import { z } from 'zod';
import { ALERT_SEVERITIES } from './rules.ts';
import type { Backoff } from './retry-table.ts';

/** The event types, as CloudEvents' `type`. */
export const EVENT_TYPES = {
  callCompleted: 'callpipe.call.completed',
  callFailed: 'callpipe.call.failed',
  callAlert: 'callpipe.call.alert',
  batchCompleted: 'callpipe.batch.completed',
} as const;
export type EventType = (typeof EVENT_TYPES)[keyof typeof EVENT_TYPES];

/** CloudEvents' `dataschema` of callpipe's events: one version for every type. */
export const EVENT_DATA_VERSION = 1;

// --- configuration ------------------------------------------------------------------------------------------

/**
 * Standard Webhooks' secret: `whsec_` and the key in base64. The specification asks for 24 to 64 bytes of
 * key; shorter keys are refused rather than weakly signed.
 */
const WHSEC = /^whsec_([A-Za-z0-9+/]+={0,2})$/;
const WEBHOOK_SECRET_BYTES = { min: 24, max: 64 } as const;

function webhookSecretProblem(secret: string): string | undefined {
  const m = WHSEC.exec(secret);
  if (!m) return 'must be a Standard Webhooks secret: whsec_ followed by the key in base64';
  const bytes = Buffer.from(m[1]!, 'base64').length;
  if (bytes < WEBHOOK_SECRET_BYTES.min || bytes > WEBHOOK_SECRET_BYTES.max)
    return `the key of a whsec_ secret must be ${WEBHOOK_SECRET_BYTES.min} to ${WEBHOOK_SECRET_BYTES.max} bytes (base64), this one is ${bytes}`;
  return undefined;
}

/**
 * An http(s) URL with no user name or password in it (a secret in a URL ends up in proxies' logs; the
 * Standard Webhooks signature authenticates instead). Messages never echo a URL: a webhook URL can hold
 * a token (Slack's do).
 */
function webhookUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http:// or https:// URL';
  if (url.username || url.password) return 'must not hold a user name or password';
  if (url.hash) return 'must not hold a #fragment';
  return undefined;
}

/** A list of URLs: comma-separated in a variable, a list in the config file. */
const urlList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((u) => u.trim()).filter(Boolean))
  .superRefine((urls, ctx) => {
    urls.forEach((u, i) => {
      const problem = webhookUrlProblem(u);
      if (problem) ctx.addIssue({ code: 'custom', message: `URL ${i + 1} of ${urls.length} ${problem}` });
    });
  });

const seconds = z.coerce.number().positive();

export const eventsConfigSchema = z
  .object({
    /** Webhook receivers of every event (CALLPIPE_EVENTS_WEBHOOK_URL, comma-separated). Default none. */
    webhookUrls: urlList,
    /** The Standard Webhooks secret every webhook request is signed with (`whsec_…`). A secret: never logged. */
    webhookSecret: z.string().min(1).optional(),
    /** A Slack-compatible incoming webhook that gets a message per alert (CALLPIPE_EVENTS_SLACK_URL). */
    slackUrl: z.string().min(1).optional(),
    /** How long one request may take, answer included, before it counts as failed. Default 10 s. */
    requestTimeoutSeconds: seconds,
    /** The first retry's delay; each next one doubles, up to `retryMaxSeconds`. Default 5 s. */
    retryInitialSeconds: seconds,
    /** The longest delay between two attempts. Default 30 min. */
    retryMaxSeconds: seconds,
    /** How long a delivery is retried before it is given up and recorded as failed. Default 24 h. */
    deliverForSeconds: seconds,
  })
  .superRefine((c, ctx) => {
    if (c.webhookUrls.length && !c.webhookSecret)
      ctx.addIssue({
        code: 'custom',
        path: ['webhookSecret'],
        message: 'required with webhook URLs: a Standard Webhooks secret (whsec_…) to sign them with',
      });
    const secretProblem = c.webhookSecret ? webhookSecretProblem(c.webhookSecret) : undefined;
    if (secretProblem) ctx.addIssue({ code: 'custom', path: ['webhookSecret'], message: secretProblem });
    const slackProblem = c.slackUrl ? webhookUrlProblem(c.slackUrl) : undefined;
    if (slackProblem)
      ctx.addIssue({ code: 'custom', path: ['slackUrl'], message: `the URL ${slackProblem}` });
    if (c.retryMaxSeconds < c.retryInitialSeconds)
      ctx.addIssue({
        code: 'custom',
        path: ['retryMaxSeconds'],
        message: 'must be at least the first retry delay (CALLPIPE_EVENTS_RETRY_INITIAL_SECONDS)',
      });
  });
export type EventsConfig = z.infer<typeof eventsConfigSchema>;

export const EVENTS_DEFAULTS = {
  webhookUrls: [] as string[],
  requestTimeoutSeconds: 10,
  retryInitialSeconds: 5,
  retryMaxSeconds: 1800,
  deliverForSeconds: 86_400,
};

/** Environment variable → config path (merged into ENV_VARS, schemas/config-variables.ts). */
export const EVENTS_ENV_VARS = {
  CALLPIPE_EVENTS_WEBHOOK_URL: 'events.webhookUrls',
  CALLPIPE_EVENTS_WEBHOOK_SECRET: 'events.webhookSecret',
  CALLPIPE_EVENTS_SLACK_URL: 'events.slackUrl',
  CALLPIPE_EVENTS_REQUEST_TIMEOUT_SECONDS: 'events.requestTimeoutSeconds',
  CALLPIPE_EVENTS_RETRY_INITIAL_SECONDS: 'events.retryInitialSeconds',
  CALLPIPE_EVENTS_RETRY_MAX_SECONDS: 'events.retryMaxSeconds',
  CALLPIPE_EVENTS_DELIVER_FOR_SECONDS: 'events.deliverForSeconds',
} as const;

// --- sinks and deliveries -----------------------------------------------------------------------------------

/**
 * A sink as history names it: `webhook:<n>` (the n-th URL of the worker's configuration) or `slack`. Never
 * the URL itself: webhook URLs can hold tokens, and every worker reads the same configuration.
 */
export type SinkName = `webhook:${number}` | 'slack';

/** The sinks of an event type under a configuration: webhooks get every event, Slack the alerts. */
export function sinksFor(
  config: Pick<EventsConfig, 'webhookUrls' | 'slackUrl'>,
  type: EventType,
): SinkName[] {
  return [
    ...config.webhookUrls.map((_, i) => `webhook:${i}` as const),
    ...(config.slackUrl && type === EVENT_TYPES.callAlert ? (['slack'] as const) : []),
  ];
}

/** How a delivery is retried: from the emitting worker's configuration, into the delivery's history. */
export interface DeliveryPolicy {
  initialSeconds: number;
  maxSeconds: number;
  /** Give up this long after the first attempt. */
  forSeconds: number;
  /** One request's bound (the activity's start-to-close timeout is sized from it). */
  requestTimeoutSeconds: number;
}

/**
 * A delivery's waits between attempts: Temporal's retry policy of the delivery (workflows/activity-policies.ts
 * eventDeliveryRetry) and the attempt that judges whether the next wait passes its deadline read both
 * from here, computed as every backoff is (schemas/retry-table.ts backoffMs).
 */
export function deliveryBackoff(policy: DeliveryPolicy): Extract<Backoff, { kind: 'doubling' }> {
  return { kind: 'doubling', baseMs: policy.initialSeconds * 1000, maxMs: policy.maxSeconds * 1000 };
}

export function deliveryPolicyOf(config: EventsConfig): DeliveryPolicy {
  return {
    initialSeconds: config.retryInitialSeconds,
    maxSeconds: config.retryMaxSeconds,
    forSeconds: config.deliverForSeconds,
    requestTimeoutSeconds: config.requestTimeoutSeconds,
  };
}

/** An event stored in S3 (the NDJSON sink, and the claim check every delivery reads it from). */
export interface StoredEvent {
  id: string;
  type: EventType;
  bucket: string;
  key: string;
  /** The call's id (a call event) or the batch's (a batch event): what `events status` shows. */
  callId?: string;
  batchId?: string;
}

/** What emitting an event gives the workflow back: the stored event, where it goes, and how. */
export interface EmittedEvent {
  event: StoredEvent;
  sinks: SinkName[];
  policy: DeliveryPolicy;
}

// --- event data ---------------------------------------------------------------------------------------------

const aggregate = z.object({
  label: z.enum(['Positive', 'Negative', 'Neutral']).nullable(),
  meanValue: z.number().nullable(),
  utterances: z.number().int().nonnegative(),
});

export const callEventDataSchema = z.object({
  callId: z.string().min(1),
  batchId: z.string().optional(),
  outcome: z.enum(['done', 'partial', 'failed']),
  /** Where the call's outputs are: result.json and the call page (done), error.json (failed). */
  bucket: z.string(),
  resultKey: z.string().optional(),
  pageKey: z.string().optional(),
  errorKey: z.string().optional(),
  /** The stage that failed and why (error.json's), for a failed call. */
  stage: z.string().optional(),
  reason: z.string().optional(),
  durationSeconds: z.number().nonnegative().nullable(),
  /** Names of the categories the call matched. */
  categories: z.array(z.string()),
  /** The matched categories that the rule file marks as alerts. */
  alerts: z.array(z.object({ category: z.string(), severity: z.enum(ALERT_SEVERITIES) })),
  scorecard: z
    .object({
      name: z.string(),
      score: z.number(),
      max: z.number(),
      normalized: z.number().nullable(),
    })
    .nullable(),
  sentiment: z.object({ overall: aggregate, bySpeaker: z.record(z.string(), aggregate) }).nullable(),
  /** The rule file that scored the call (its name, version and digest). */
  rules: z.object({ name: z.string(), version: z.string(), digest: z.string() }).optional(),
  workflowId: z.string(),
  runId: z.string(),
});
export type CallEventData = z.infer<typeof callEventDataSchema>;

export const batchEventDataSchema = z.object({
  batchId: z.string().min(1),
  status: z.enum(['done', 'cancelled']),
  bucket: z.string(),
  reportJsonKey: z.string(),
  reportCsvKey: z.string(),
  reportHtmlKey: z.string().optional(),
  counters: z.record(z.string(), z.number()),
  startedAt: z.string(),
  workflowId: z.string(),
  runId: z.string(),
});

/** A delivery that was given up: what `events status` and the night report show. */
export const deliveryFailureSchema = z.object({
  eventId: z.string(),
  type: z.string(),
  sink: z.string(),
  callId: z.string().optional(),
  batchId: z.string().optional(),
  /** The stored event, to deliver it again by hand. */
  eventKey: z.string(),
  attempts: z.number().int().positive(),
  reason: z.string(),
  gaveUpAt: z.string(),
});
export type DeliveryFailure = z.infer<typeof deliveryFailureSchema>;
