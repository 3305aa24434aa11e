/**
 * What a batch costs to run: Temporal actions, object-store requests, service requests and CPU, and the
 * price table a deployment sets (`CALLPIPE_PRICES`) to turn them into an amount. callpipe ships no price
 * as fact: providers' prices change and differ by region, plan and volume.
 *
 * A Temporal action is what Temporal Cloud bills (https://docs.temporal.io/cloud/actions): a workflow
 * started (by a client, a parent as a child workflow, or continue-as-new), each activity attempt started
 * (the first and every retry), each activity heartbeat that reaches the server (the SDK throttles them:
 * at most one per 80 % of the heartbeat timeout, capped by the worker's throttle interval), a timer
 * started, a signal, a query, an update, a search-attribute upsert, a memo change, a workflow reset, a
 * local-activity marker, a side-effect marker. Replay is not billed. Heartbeats and queries leave no
 * event in a history: heartbeats are counted by the workers (activities/cost/heartbeat-meter.ts).
 */
import { z } from 'zod';

export type ActionKind =
  | 'workflowStarted'
  | 'activityStarted'
  | 'activityRetried'
  | 'activityHeartbeat'
  | 'timerStarted'
  | 'signal'
  | 'update'
  | 'searchAttributesUpsert'
  | 'memoUpsert'
  | 'marker'
  | 'workflowReset';
export type ActionCounts = Partial<Record<ActionKind, number>>;

/**
 * S3 operations by the request class they are priced in: PUT, COPY, POST and LIST requests in the
 * first, GET and the others in the second; DELETE is free.
 */
const S3_PUT_CLASS = [
  'PutObject',
  'CopyObject',
  'CreateMultipartUpload',
  'UploadPart',
  'CompleteMultipartUpload',
  'ListObjectsV2',
  'CreateBucket',
];
const S3_FREE = ['DeleteObject', 'DeleteObjects', 'AbortMultipartUpload'];
export type S3Class = 'put' | 'get' | 'free';
export function s3ClassOf(operation: string): S3Class {
  if (S3_PUT_CLASS.includes(operation)) return 'put';
  return S3_FREE.includes(operation) ? 'free' : 'get';
}

const price = z.number().finite().nonnegative();

/**
 * A deployment's prices, each optional (an unpriced item is shown as a count, not an amount). JSON in
 * `CALLPIPE_PRICES` or the config file's `prices`, for example
 * `{"currency":"USD","temporalActionPer1M":50,"s3PutPer1k":0.005,"s3GetPer1k":0.0004,"serviceAudioHour":1,"cpuCoreHour":0.04}`.
 */
const pricesSchema = z
  .object({
    /** ISO 4217 code the amounts are in. */
    currency: z.string().regex(/^[A-Z]{3}$/, 'currency must be a three-letter ISO 4217 code such as USD'),
    /** Per million Temporal actions. */
    temporalActionPer1M: price.optional(),
    /** Per thousand S3 requests of the PUT class (PUT, COPY, POST, LIST). */
    s3PutPer1k: price.optional(),
    /** Per thousand S3 requests of the GET class (GET, HEAD and the rest). */
    s3GetPer1k: price.optional(),
    /** Per hour of audio streamed to the recognition service (restarts included). */
    serviceAudioHour: price.optional(),
    /** Per core-hour of the workers' CPU (their ffmpeg included). */
    cpuCoreHour: price.optional(),
    /** Audio hours a month the forecast is for; default: this batch's audio every day of a 30-day month. */
    audioHoursPerMonth: price.optional(),
  })
  .strict();
export type Prices = z.infer<typeof pricesSchema>;

/** `CALLPIPE_PRICES` as given: JSON text from the environment, an object from the config file. */
export const pricesInputSchema = z.preprocess((value) => {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    // The schema's own message follows: "expected object".
    return `not JSON`;
  }
}, pricesSchema);

/** What a batch used: every figure optional, since each comes from its own source. */
export interface CostFigures {
  /** Audio hours of the calls processed (done or partial). */
  audioHours: number;
  calls: number;
  /** Temporal actions by kind (heartbeats estimated where the workers' count is not at hand). */
  actions: Record<string, number>;
  /** Calls whose histories were read for `actions` (all of them or an even sample, scaled up). */
  historiesRead: number;
  /** History events per call's workflow: mean and largest. */
  historyEventsPerCall?: { mean: number; max: number };
  /** Heartbeats: `counted` by the workers, or `estimated` from each activity's run time and throttle. */
  heartbeats?: 'counted' | 'estimated';
  /** Object-store requests by operation. */
  s3Requests?: Record<string, number>;
  /** Service requests by endpoint (asr, nlp/<step>…). */
  serviceRequests?: Record<string, number>;
  /** Audio seconds streamed to recognition, restarts included. */
  audioSecondsStreamed?: number;
  /** CPU seconds of the workers (their children included). */
  cpuSeconds?: number;
}
