/**
 * The boundaries of a watch (`callpipe watch s3://bucket/prefix/`): what a client starts or updates it
 * with, what its listing and notification activities hand the workflow, and its status.
 *
 * Glossary: a *watch* is one long-running workflow per watched prefix and output (id `watch-…`, search
 * attribute `CallpipeBatchId`), made of *runs* (continue-as-new). It *discovers* objects by *scans* (keys
 * after its *watermark*), by *reconciliations* (the whole prefix, page by page, now and then) and, with
 * `sqs`, by S3 event *notifications*; a discovered object is *pending* until its size and ETag have been
 * stable for `settleSeconds`, then *admitted* (done-check, content check) and started as a
 * `processRecording` child with the call id, workflow id and output layout a backfill would give it.
 */
import { z } from 'zod';
import { callSpecSchema } from './call-spec.ts';
import { outputLocationSchema } from './recording.ts';
import { backfillFiltersSchema, DEFAULT_CHILDREN_PER_RUN, DEFAULT_CONCURRENCY } from './backfill.ts';
import {
  DEFAULT_MAX_PENDING,
  DEFAULT_POLL_SECONDS,
  DEFAULT_RECONCILE_SECONDS,
  DEFAULT_SETTLE_SECONDS,
  DEFAULT_WATCH_PAGE_SIZE,
} from './watch-bounds.ts';

export * from './watch-bounds.ts';

const watchSourceSchema = z.object({ bucket: z.string().min(1), prefix: z.string() });
export type WatchSource = z.infer<typeof watchSourceSchema>;

export const watchInputSchema = z.object({
  /**
   * The watch's workflow id, derived by the CLI from the prefix and the output (no personal data); also the
   * `CallpipeBatchId` of the watch and of its calls.
   */
  watchId: z.string().regex(/^watch-[A-Za-z0-9._:-]{1,200}$/),
  source: watchSourceSchema,
  output: outputLocationSchema,
  filters: backfillFiltersSchema.default({}),
  settleSeconds: z.number().nonnegative().max(86_400).default(DEFAULT_SETTLE_SECONDS),
  pollSeconds: z.number().positive().max(3600).default(DEFAULT_POLL_SECONDS),
  reconcileSeconds: z
    .number()
    .positive()
    .max(7 * 86_400)
    .default(DEFAULT_RECONCILE_SECONDS),
  /** Calls processed at once (children in flight). */
  concurrency: z.number().int().positive().max(1000).default(DEFAULT_CONCURRENCY),
  pageSize: z.number().int().positive().max(1000).default(DEFAULT_WATCH_PAGE_SIZE),
  maxPending: z.number().int().positive().max(10_000).default(DEFAULT_MAX_PENDING),
  /** Children started per run before continue-as-new. */
  childrenPerRun: z.number().int().positive().max(1500).default(DEFAULT_CHILDREN_PER_RUN),
  /** S3 event notifications (AWS format) from this SQS queue; the listing then only reconciles. */
  sqs: z.object({ queueUrl: z.url() }).optional(),
  /** The settings of every call (schemas/call-spec.ts `callSpecOf`). */
  spec: callSpecSchema,
  /** Task queue of the children and of the watch's activities; default: the watch's. */
  taskQueue: z.string().optional(),
});

export type WatchInput = z.output<typeof watchInputSchema>;

/** A listed (or notified) object: what settling compares. */
export interface WatchObject {
  key: string;
  etag?: string | undefined;
  size: number;
  /** Epoch milliseconds of the object's last modification, as the store says. */
  modifiedMs?: number | undefined;
}

/** What one listing activity found: objects in key order, and how far it got. */
export interface WatchListing {
  /** Not done yet (no result.json), in key order. */
  objects: WatchObject[];
  /** Listed objects left out because their call is done. */
  done: number;
  /** The last key listed (the next listing starts after it); undefined when nothing was listed. */
  lastKey?: string;
  /** True when the listing reached the end of the range (no more pages). */
  finished: boolean;
  /** The bucket does not exist (or cannot be listed): nothing is taken, the watch waits for it. */
  missing?: string;
}

/** What the notifications of one receive came to. */
export interface WatchNotifications {
  /** Objects created under the watched prefix, in the order notified. */
  created: WatchObject[];
  /** Keys removed under the prefix (a pending one is dropped). */
  removed: string[];
  /** Messages received (and deleted once read). */
  messages: number;
  /** Messages that were not S3 events of the watched bucket and prefix (test events, other buckets). */
  ignored: number;
  /** Messages whose body is not an S3 event notification at all. */
  unreadable: number;
}

/** One pending object's verdict at admission. */
export type AdmitVerdict =
  | { key: string; verdict: 'start'; callId: string; workflowId: string; etag?: string; size: number }
  /** Its size or ETag changed since it was seen: it settles again from now. */
  | { key: string; verdict: 'changed'; etag?: string | undefined; size: number }
  /** Deleted while settling. */
  | { key: string; verdict: 'gone' }
  /** result.json exists, or this version failed before (error.json), or not a recording, or filtered. */
  | { key: string; verdict: 'skipped'; why: 'done' | 'failed-before' | 'not-a-recording' | 'filtered' };

export interface WatchCounters {
  /** Distinct object versions discovered. */
  discovered: number;
  /** Settles restarted because the object changed while settling. */
  replaced: number;
  /** Deleted while settling. */
  vanished: number;
  started: number;
  done: number;
  partial: number;
  failed: number;
  /** Done before, failed before (same version), not a recording, or filtered: no child started. */
  skipped: number;
  /** Another workflow was already processing the call (a child of an earlier run or `callpipe process`). */
  alreadyRunning: number;
  cancelled: number;
  audioSeconds: number;
  notifications: number;
}

export type WatchPhase = 'watching' | 'draining' | 'stopping' | 'stopped';

/** The `status` query, `callpipe watch status`, and the workflow's result once stopped. */
export interface WatchStatus extends WatchCounters {
  watchId: string;
  phase: WatchPhase;
  source: string;
  output: string;
  mode: 'listing' | 'sqs';
  settleSeconds: number;
  pending: number;
  running: number;
  run: number;
  startedAt: string;
  /** When discovery last ran (ISO), and when the last complete reconciliation began. */
  lastScanAt?: string;
  lastReconciledAt?: string;
  /** Why the source cannot be listed now, when it cannot. */
  sourceProblem?: string;
}
