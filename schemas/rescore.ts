/**
 * The boundaries of a rescore (`callpipe rescore`): stored results scored again with a rule file,
 * without recognizing or analysing anything again. What a client starts it with (the results under a
 * prefix, or the calls of a CSV manifest), what one page hands the workflow, and the rows of its report.
 *
 * Glossary: a *rescore* is one batch (id `CallpipeBatchId`, `rescore-…`), made of *runs*
 * (continue-as-new); each run scores *pages* of results, one activity a page.
 */
import { z } from 'zod';
import type { BackfillCursor } from './backfill.ts';
import { outputLocationSchema } from './recording.ts';
import { reasonsSettingsSchema } from './reasons.ts';

/** Objects listed per page of a prefix (S3 returns at most 1,000), or manifest rows per page. */
const DEFAULT_RESCORE_PAGE_SIZE = 1000;
/** Pages per run before continue-as-new: a page costs a handful of events, so a run stays small. */
const DEFAULT_RESCORE_PAGES_PER_RUN = 50;
/** Results read, scored and written at once within a page. */
const DEFAULT_RESCORE_CONCURRENCY = 8;

const rescoreSourceSchema = z.discriminatedUnion('kind', [
  /** Every `<prefix><callId>/result.json` (the output location the calls were processed to). */
  z.object({ kind: z.literal('prefix'), bucket: z.string().min(1), prefix: z.string() }),
  /** The calls of a CSV manifest (as `callpipe backfill --manifest` takes it), found in `output`. */
  z.object({ kind: z.literal('manifest'), bucket: z.string().min(1), key: z.string().min(1) }),
]);
export type RescoreSource = z.infer<typeof rescoreSourceSchema>;

export const rescoreInputSchema = z.object({
  /** Names the batch: search attribute, report folder (`<output>batches/<batchId>/`). */
  batchId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/),
  source: rescoreSourceSchema,
  /** Where the results are (and the report goes). */
  output: outputLocationSchema,
  /** The rule file as the CLI stored it (store's bucket); absent: the shipped default. */
  rulesKey: z.string().min(1).optional(),
  /** Its digest (`sha256:…`): a result already scored with it is left alone unless `force`. */
  rulesDigest: z.string().min(1),
  /** Write every result again, even one already scored with these rules (after an upgrade of callpipe). */
  force: z.boolean().default(false),
  pageSize: z.number().int().positive().max(1000).default(DEFAULT_RESCORE_PAGE_SIZE),
  pagesPerRun: z.number().int().positive().max(1000).default(DEFAULT_RESCORE_PAGES_PER_RUN),
  concurrency: z.number().int().positive().max(64).default(DEFAULT_RESCORE_CONCURRENCY),
  /** Task queue of the batch's activities; default: the workflow's. */
  taskQueue: z.string().optional(),
  /**
   * Task queue of the pages when they classify (`reasons`, or the rule file's classifier rules: given only
   * then): the text queue, so the classification requests are paced by its rate limit and its workers'
   * pacer like the pipeline's text requests; absent: `taskQueue`.
   */
  nlpTaskQueue: z.string().optional(),
  /** The analysis tables the rescored calls' rows are replaced in (prefix, time zone); default `tables/`, UTC. */
  tables: z.object({ prefix: z.string(), timeZone: z.string() }).optional(),
  /**
   * Call reasons: the model results are classified with (again, from their stored redacted text) unless
   * they already were with it; absent: reasons are left as they are.
   */
  reasons: reasonsSettingsSchema.optional(),
});

export type RescoreInput = z.output<typeof rescoreInputSchema>;

/** What happened to one call: written (`updated`), already scored with these rules (`current`), … */
const RESCORE_STATUSES = ['updated', 'current', 'missing', 'failed'] as const;
type RescoreStatus = (typeof RESCORE_STATUSES)[number];

export const rescoreRowSchema = z.object({
  callId: z.string(),
  resultKey: z.string(),
  status: z.enum(RESCORE_STATUSES),
  /** Matched categories after scoring. */
  categories: z.array(z.string()).optional(),
  score: z.number().optional(),
  max: z.number().optional(),
  reason: z.string().optional(),
});
export type RescoreRow = z.infer<typeof rescoreRowSchema>;

export type RescoreCounters = Record<RescoreStatus, number> & { listed: number };

export interface RescorePageOutput {
  cursor: BackfillCursor;
  counters: { listed: number; updated: number; current: number; missing: number; failed: number };
}
