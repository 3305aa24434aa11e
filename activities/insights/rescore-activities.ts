/**
 * The activities of a rescore (task queue `callpipe`, beside the batches' other object-storage work):
 * score one page of stored results again with a rule file (rescore-call.ts, from result.json alone: no
 * recognition, no text analysis but the classifications the batch's models ask for), and merge the report
 * (rescore-report.ts). Rows go to S3, never into the workflow's state.
 *
 * Exactly once per call: the rows of a page travel in its heartbeats, so a retried attempt resumes after
 * the last call it reported; a call written before the heartbeat that would have said so carries this
 * batch's id in `rules.rescoreBatchId`, and is reported, not written again. A call already scored with
 * the same rules is left alone (`current`) unless the batch is forced.
 */
import type { CallIdRule } from '../storage/call-id.ts';
import pLimit from 'p-limit';
import { activityContext } from '../activity-context.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { createTableActivities } from '../tables/table-activities.ts';
import { FAILURE } from '../../schemas/retry-table.ts';
import type { RescorePageOutput, RescoreRow } from '../../schemas/rescore.ts';
import { rescoreCall, type RescoreCallContext } from './rescore-call.ts';
import { listRescorePage, pageName, type RescorePageRequest } from './rescore-pages.ts';
import { writeRescoreReport, type WriteRescoreReportInput } from './rescore-report.ts';
import { storedRules, type LoadedRules } from './rule-file.ts';
import { lineClassifiers } from '../../schemas/rules.ts';
import { resultLineClassifier } from '../nlp/line-classes.ts';
import type { ReasonsSettings } from '../../schemas/reasons.ts';
import type { ServiceClient } from '../../service/index.ts';
import { reasonsClassifier } from '../reasons/classify-result.ts';
import type { RequestPacer } from '../nlp/pacing.ts';

export type { WriteRescoreReportInput } from './rescore-report.ts';

export interface RescorePageInput extends RescorePageRequest {
  batchId: string;
  rulesKey?: string | undefined;
  rulesDigest: string;
  force: boolean;
  concurrency: number;
  /** This page's rows go to `<partsPrefix>page-<n>.json`. */
  partsPrefix: string;
  /** The analysis tables (prefix, time zone) whose rows of a rescored call are replaced. */
  tables?: { prefix: string; timeZone: string } | undefined;
  /** Classify the calls with this reasons model (unless they already were with it). */
  reasons?: ReasonsSettings | undefined;
}

/** What a page's heartbeat carries: the rows so far, so a retried attempt goes on after them. */
interface PageHeartbeat {
  page: number;
  rows: RescoreRow[];
}

const JSON_TYPE = { contentType: 'application/json; charset=utf-8' };

/** The shipped default changed under a running batch (workers upgraded): refuse, do not mix. */
function checkRules(input: RescorePageInput, rules: LoadedRules): void {
  if (rules.digest === input.rulesDigest) return;
  throw Object.assign(
    new Error(
      `rules ${input.rulesKey ?? '(shipped default)'} are ${rules.digest}, not the batch's ${input.rulesDigest}`,
    ),
    { name: FAILURE.InvalidStepInput },
  );
}

function countersOf(listed: number, rows: readonly RescoreRow[]): RescorePageOutput['counters'] {
  const count = (status: RescoreRow['status']) => rows.filter((r) => r.status === status).length;
  return {
    listed,
    updated: count('updated'),
    current: count('current'),
    missing: count('missing'),
    failed: count('failed'),
  };
}

export function createRescoreActivities({
  store,
  callIds = { mode: 'auto' },
  service,
  pacer,
}: {
  store: ObjectStore;
  /** How call ids are made from file names (config `callIds`). */
  callIds?: CallIdRule;
  /**
   * The service client a rescore with a reasons model or classifier rules classifies with (made when first
   * needed).
   */
  service?: (() => ServiceClient) | undefined;
  /** Paces the classification requests: the text workers' pacer, where the pages classify. */
  pacer?: RequestPacer | undefined;
}) {
  const tables = createTableActivities({ store, callIds: callIds.mode });
  const rulesOf = storedRules(store);

  return {
    /** Scores one page of results again; see the module comment. */
    async rescorePage(input: RescorePageInput): Promise<RescorePageOutput> {
      const heartbeat = activityContext();
      const [rules, page] = await Promise.all([
        rulesOf(input.rulesKey),
        listRescorePage(store, input, callIds),
      ]);
      checkRules(input, rules);
      const classifiers = lineClassifiers(rules.rules);
      const earlier = heartbeat?.info.heartbeatDetails as PageHeartbeat | undefined;
      const rows: RescoreRow[] = earlier?.page === input.cursor.page ? [...earlier.rows] : [];
      const done = new Set(rows.map((r) => r.resultKey));
      const results = store.withBucket(input.output.bucket);
      const ctx: RescoreCallContext = {
        ...input,
        rules,
        results,
        callIds: callIds.mode,
        writeCallTables: (i) => tables.writeCallTables(i),
        ...(input.reasons && service ? { classify: reasonsClassifier(service(), input.reasons, pacer) } : {}),
        ...(classifiers.length > 0 && service
          ? { classifyLines: resultLineClassifier(service(), classifiers, pacer) }
          : {}),
      };
      const limit = pLimit(input.concurrency);
      const todo = page.calls.filter((c) => !done.has(c.key));
      await Promise.all(
        todo.map((call) =>
          limit(async () => {
            rows.push(await rescoreCall(ctx, call));
            heartbeat?.heartbeat({ page: input.cursor.page, rows } satisfies PageHeartbeat);
          }),
        ),
      );
      if (rows.length > 0)
        await results.put(
          `${input.partsPrefix}${pageName(input.cursor.page)}`,
          JSON.stringify(rows),
          JSON_TYPE,
        );
      return { cursor: page.cursor, counters: countersOf(page.calls.length, rows) };
    },

    /** Merges the pages' rows into report.json and report.csv beside them. */
    writeRescoreReport: (input: WriteRescoreReportInput) => writeRescoreReport(store, input),
  };
}

export type RescoreActivities = ReturnType<typeof createRescoreActivities>;
