/**
 * The boundaries of a backfill: what a client starts it with (a prefix or a manifest, filters, how many
 * calls at once), what one listed page hands the workflow, and the rows of the batch report.
 *
 * Glossary: a *batch* is one backfill (id `CallpipeBatchId`), made of *runs* (continue-as-new); each run
 * lists *pages* of recordings and starts one `processRecording` child per recording that is not done.
 */
import { z } from 'zod';
import { RECORDING_EXTENSIONS } from './media-formats.ts';
import { callSpecSchema, type CallSpec } from './call-spec.ts';
import { OUTCOMES, outputLocationSchema, type RecordingSource } from './recording.ts';

/**
 * Extensions taken by default without reading the object (containers and headerless telephony formats,
 * schemas/media-formats.ts); with the default list, any other object is sniffed by its first bytes
 * (activities/media/sniff.ts) and taken when its content is audio, or reported as skipped and why.
 */
export const DEFAULT_EXTENSIONS = RECORDING_EXTENSIONS;

/** Recordings per listed page (S3 ListObjectsV2 returns at most 1,000). */
const DEFAULT_PAGE_SIZE = 200;
/** Children running at once (`callpipe backfill --concurrency`). */
export const DEFAULT_CONCURRENCY = 20;
/**
 * Children per run before continue-as-new. Each child costs about 6 history events in the parent
 * (initiated, started, completed and the workflow tasks around them); 500 keeps a run near 4,000 events,
 * far under Temporal's limit of 51,200 events (or 50 MB) per workflow history.
 */
export const DEFAULT_CHILDREN_PER_RUN = 500;

export const backfillFiltersSchema = z.object({
  /**
   * File extensions to take, lower case without the dot. Default: {@link DEFAULT_EXTENSIONS}, and any
   * other object whose content is audio. Given: exactly these, nothing sniffed.
   */
  extensions: z.array(z.string().min(1)).optional(),
  /** Smallest and largest object size in bytes. */
  minBytes: z.number().int().nonnegative().optional(),
  maxBytes: z.number().int().positive().optional(),
  /**
   * Only recordings from this instant on / before this instant (ISO 8601). The date is the manifest's
   * `started_at` when given, else the object's last-modified time.
   */
  from: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
});
export type BackfillFilters = z.infer<typeof backfillFiltersSchema>;

const backfillSourceSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('prefix'), bucket: z.string().min(1), prefix: z.string() }),
  /** A CSV manifest in object storage (the CLI uploads local ones first). */
  z.object({ kind: z.literal('manifest'), bucket: z.string().min(1), key: z.string().min(1) }),
]);
export type BackfillSource = z.infer<typeof backfillSourceSchema>;

const backfillInputFields = z.object({
  /** Names the batch: search attribute, report folder. Derived from the source by the CLI. */
  batchId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/),
  source: backfillSourceSchema,
  output: outputLocationSchema,
  filters: backfillFiltersSchema.default({}),
  /** Children running at once (the sliding window); default {@link DEFAULT_CONCURRENCY}. */
  concurrency: z.number().int().positive().max(1000).optional(),
  /**
   * @deprecated The name of `concurrency` in 0.1: still accepted (schedules created before, scripts)
   * and read as `concurrency`, which wins when both are given.
   */
  window: z.number().int().positive().max(1000).optional(),
  pageSize: z.number().int().positive().max(1000).default(DEFAULT_PAGE_SIZE),
  /** Children started per run before continue-as-new (rounded up to whole pages). */
  childrenPerRun: z.number().int().positive().max(1500).default(DEFAULT_CHILDREN_PER_RUN),
  /** Process calls again even when their result.json exists. */
  redo: z.boolean().default(false),
  /** The settings of every child (schemas/call-spec.ts `callSpecOf`); a manifest row may add its speakers. */
  spec: callSpecSchema,
  /** Task queue of the children and of the batch's own activities; default: the batch's. */
  taskQueue: z.string().optional(),
  /** Start paused (tests, or to look at the listing first). */
  paused: z.boolean().optional(),
});

/** A backfill's input, parsed: defaults filled in, the deprecated `window` read as `concurrency`. */
export const backfillInputSchema = backfillInputFields.transform(({ window, concurrency, ...input }) => ({
  ...input,
  concurrency: concurrency ?? window ?? DEFAULT_CONCURRENCY,
}));
/** What a client passes (defaults optional); parse it with the schema before starting the workflow. */
export type BackfillRequest = z.input<typeof backfillInputSchema>;
/** What the workflow gets: every default filled in by the client, so workflow code needs no zod. */
export type BackfillInput = z.output<typeof backfillInputSchema>;
/**
 * What a backfill workflow may be started with: a {@link BackfillInput}, or one that spells `concurrency`
 * by its 0.1 name `window`. The workflow reads it with the same rule as the schema: `concurrency`, else
 * `window`.
 */
export type StoredBackfillInput = Omit<BackfillInput, 'concurrency' | 'spec'> & {
  concurrency?: number;
  /** @deprecated 0.1's name of `concurrency`. */
  window?: number;
  spec?: CallSpec;
};

/** One recording the batch will start a child for. */
export interface BackfillItem {
  callId: string;
  workflowId: string;
  source: RecordingSource;
  metadata?: Record<string, string>;
  /** Channel → speaker mapping from the manifest, e.g. ['customer', 'agent']. */
  speakers?: string[];
}

/** Where listing stands: an S3 continuation token, or the next manifest page. */
export interface BackfillCursor {
  page: number;
  token?: string;
  finished: boolean;
}

export interface BackfillPage {
  items: BackfillItem[];
  cursor: BackfillCursor;
  listed: number;
  /** Left out by the filters (not in the report). */
  filtered: number;
  /** Done before (result.json exists): in the report as `skipped`, no child started. */
  skipped: number;
  /** Manifest rows naming objects that do not exist: in the report as `missing`. */
  missing: number;
}

/** A call's outcome (schemas/recording.ts), or what the batch alone can say of a row. */
const REPORT_STATUSES = [...OUTCOMES, 'missing', 'cancelled'] as const;

export const reportRowSchema = z.object({
  callId: z.string(),
  source: z.string(),
  status: z.enum(REPORT_STATUSES),
  reason: z.string().optional(),
  stage: z.string().optional(),
  durationSeconds: z.number().optional(),
  sessions: z.number().int().optional(),
  /** Wall time of the call's workflow as the batch saw it, seconds. */
  wallSeconds: z.number().optional(),
  requests: z.number().int().optional(),
  workflowId: z.string().optional(),
  resultKey: z.string().optional(),
  /** The day (tables partition) the call's rows were written to. */
  dt: z.string().optional(),
  /** Why the call's rows are not in the analysis tables (the call is still done). */
  tablesError: z.string().optional(),
});
export type ReportRow = z.infer<typeof reportRowSchema>;

/** Columns of report.csv, in order. */
export const REPORT_COLUMNS = [
  'callId',
  'source',
  'status',
  'reason',
  'stage',
  'durationSeconds',
  'sessions',
  'wallSeconds',
  'requests',
  'workflowId',
  'resultKey',
] as const satisfies readonly (keyof ReportRow)[];

/** Counters of a batch: the `progress` query and the head of report.json. */
export interface BackfillCounters {
  listed: number;
  filtered: number;
  skipped: number;
  missing: number;
  started: number;
  /** Children that ended `done`, `partial` (written, a text step failed) or `failed`. */
  done: number;
  partial: number;
  failed: number;
  cancelled: number;
  audioSeconds: number;
}
