/**
 * Every activity retry policy of the workflows, in one module: the recording workflow's table
 * ({@link ACTIVITY_POLICIES}, whose retry budget docs/retries.md computes: test/unit/retry-budget.test.ts)
 * and every other workflow's ({@link RETRY_POLICIES}, {@link eventDeliveryRetry}). Lint refuses a `retry:`
 * object literal anywhere else (eslint.config.js). A recording stage takes its proxy with {@link proxyOn}.
 */
import { proxyActivities, type ActivityOptions, type RetryPolicy } from '@temporalio/workflow';
import type { CallQueues } from '../schemas/task-queues.ts';
import { FAILURE, NON_RETRYABLE_TYPES } from '../schemas/retry-table.ts';
import { deliveryBackoff, type EmittedEvent } from '../schemas/events.ts';

/** Temporal's backoff for every activity: 1 s doubling to `maxInterval`; never a non-retryable type. */
function retry(maximumAttempts: number, maximumInterval: string): RetryPolicy {
  return {
    maximumAttempts,
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval,
    nonRetryableErrorTypes: NON_RETRYABLE_TYPES,
  };
}

/**
 * Heartbeat timeout of the short activities (probe, media, results, text): their workers heartbeat while
 * they run (activities/liveness-heartbeat.ts), so an activity of a worker that died is retried elsewhere
 * after this rather than after its start-to-close timeout. Changing it changes no command of a history.
 */
const LIVENESS_HEARTBEAT_TIMEOUT = '30 seconds';

/**
 * The recording workflow's proxies: each one's queue (of the call's `spec.queues`) and its policy. The
 * recognition timeouts are sized per session, from the call's pacing and heartbeat settings, where a
 * session is started.
 */
export const ACTIVITY_POLICIES = {
  /** ffprobe of one recording; its own queue, so new calls' probes never hold staging slots. */
  probe: {
    queue: 'probe',
    startToCloseTimeout: '15 minutes',
    heartbeatTimeout: LIVENESS_HEARTBEAT_TIMEOUT,
    retry: retry(5, '1 minute'),
  },
  /** Plan, merge, speakers, redacted audio: ffmpeg and small S3 objects. */
  media: {
    queue: 'media',
    startToCloseTimeout: '15 minutes',
    heartbeatTimeout: LIVENESS_HEARTBEAT_TIMEOUT,
    retry: retry(5, '1 minute'),
  },
  /** Done-check, insights, result and error writes, staging clean-up: S3 only, cheap to repeat. */
  results: {
    queue: 'media',
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: LIVENESS_HEARTBEAT_TIMEOUT,
    retry: retry(10, '1 minute'),
  },
  /**
   * The call's rows in the analysis tables: waits for the day's lease (heartbeating) behind other
   * calls of the night and a compaction, then a few small objects.
   */
  tables: {
    queue: 'media',
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '1 minute',
    retry: retry(10, '1 minute'),
  },
  /** Text steps: 99997 and quota waits come as `nextRetryDelay` (schemas/retry-table.ts). */
  nlp: {
    queue: 'nlp',
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: LIVENESS_HEARTBEAT_TIMEOUT,
    retry: retry(20, '1 minute'),
  },
  /** One recognition session; the timeout is sized per session (streaming is paced in real time). */
  asr: {
    queue: 'asr',
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: '30 seconds',
    retry: retry(5, '1 minute'),
  },
} satisfies Record<string, Omit<ActivityOptions, 'taskQueue'> & { queue: keyof CallQueues }>;

/** A policy of {@link ACTIVITY_POLICIES} on the queue the call names for it. */
export function proxyOn<T>(
  policy: (typeof ACTIVITY_POLICIES)[keyof typeof ACTIVITY_POLICIES],
  queues: CallQueues,
) {
  const { queue, ...options } = policy;
  return proxyActivities<T>({ ...options, taskQueue: queues[queue] });
}

/** Every other workflow's activity policies, by the proxy they are for. */
export const RETRY_POLICIES = {
  /** The recording's session room before a latency plan: two tries, then the plan goes without it. */
  sessionRoom: { maximumAttempts: 2, initialInterval: '1 second' },
  /** stackCheck's write and read back on the media workers. */
  stackCheck: { maximumAttempts: 5 },
  /** A batch's listing, report parts and report; a bad manifest is not retried. */
  backfill: { maximumAttempts: 10, initialInterval: '1 second', nonRetryableErrorTypes: ['ManifestError'] },
  /** The days a batch wrote, compacted at its end; and its night report. */
  batchEnd: { maximumAttempts: 5, initialInterval: '1 second', maximumInterval: '1 minute' },
  /** A watch's receives, listings and admissions: short, so an attempt lost with a worker is soon redone. */
  watch: { initialInterval: '1 second', maximumInterval: '1 minute' },
  /** A rescore's pages and report. */
  rescore: {
    maximumAttempts: 10,
    initialInterval: '1 second',
    maximumInterval: '1 minute',
    nonRetryableErrorTypes: [...NON_RETRYABLE_TYPES, 'ManifestError'],
  },
  /** forget's and retention's deletions and rewrites. */
  lifecycle: retry(8, '1 minute'),
  /** forget's verification waits for Temporal's visibility to drop deleted executions: more, slower. */
  lifecycleVerify: {
    ...retry(12, '30 seconds'),
    initialInterval: '2 seconds',
  },
  /** The session budget's failing of a lost worker's sessions. */
  failLostSessions: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    maximumAttempts: 5,
  },
  /** An event's line in the NDJSON sink, written by the call's or batch's workflow. */
  emitEvent: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 8,
  },
  /** A delivery given up, recorded beside the events. */
  recordDeliveryFailure: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 50 },
} satisfies Record<string, RetryPolicy>;

/** An event's delivery to a sink: the sink's own backoff, carried in the event; a give-up is final. */
export function eventDeliveryRetry(policy: EmittedEvent['policy']): RetryPolicy {
  const { baseMs, maxMs } = deliveryBackoff(policy);
  return {
    initialInterval: baseMs,
    backoffCoefficient: 2,
    maximumInterval: maxMs,
    nonRetryableErrorTypes: [FAILURE.EventDeliveryGaveUp],
  };
}
