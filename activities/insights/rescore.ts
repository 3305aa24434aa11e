/**
 * The activities of a rescore (task queue `callpipe`, beside the batches' other object-storage work):
 * score one page of stored results again with a rule file (score-call.ts, from result.json alone: no
 * recognition, no text analysis), and merge the report. Rows go to S3, never into the workflow's state.
 *
 * Exactly once per call: the rows of a page travel in its heartbeats, so a retried attempt resumes after
 * the last call it reported; a call written before the heartbeat that would have said so carries this
 * batch's id in `rules.rescoreBatchId`, and is reported, not written again. A call already scored with
 * the same rules is left alone (`current`) unless the batch is forced.
 */
import pLimit from 'p-limit';
import type { ZodError } from 'zod';
import { activityContext } from '../activity-context.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { callIdOf } from '../storage/call-id.ts';
import { callOutputKeys, normalizePrefix, RESULT_FILE, tablesLocationOf } from '../../schemas/call-keys.ts';
import { writeCallPage } from '../storage/results.ts';
import { createTableActivities } from '../tables/activities.ts';
import { manifestEntrySchema } from '../../schemas/manifest.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import type { BackfillCursor } from '../../schemas/backfill.ts';
import { resultDocumentSchema } from '../../schemas/result.ts';
import { FAILURE } from '../../schemas/retry-table.ts';
import {
  rescoreRowSchema,
  type RescoreCounters,
  type RescorePageOutput,
  type RescoreRow,
  type RescoreSource,
} from '../../schemas/rescore.ts';
import { storedRules } from './rules-file.ts';
import { matchedCategories, scoreCall } from './score-call.ts';

export interface RescorePageInput {
  batchId: string;
  source: RescoreSource;
  output: OutputLocation;
  cursor: BackfillCursor;
  pageSize: number;
  /** Manifest sources: the pages prepared by the backfill's `prepareManifest`. */
  manifest?: { pagesPrefix: string; pages: number } | undefined;
  rulesKey?: string | undefined;
  rulesDigest: string;
  force: boolean;
  concurrency: number;
  /** This page's rows go to `<partsPrefix>page-<n>.json`. */
  partsPrefix: string;
  /** The analysis tables (prefix, time zone) whose rows of a rescored call are replaced. */
  tables?: { prefix: string; timeZone: string } | undefined;
}

export interface WriteRescoreReportInput {
  output: OutputLocation;
  reportPrefix: string;
  partsPrefix: string;
  header: Record<string, unknown> & { counters: RescoreCounters };
}

/** What a page's heartbeat carries: the rows so far, so a retried attempt goes on after them. */
interface PageHeartbeat {
  page: number;
  rows: RescoreRow[];
}

const pageName = (n: number) => `page-${String(n).padStart(6, '0')}.json`;
const JSON_TYPE = { contentType: 'application/json; charset=utf-8' };

function schemaProblem(err: unknown): string {
  const issue = (err as ZodError).issues?.[0];
  return issue ? `${issue.path.join('.') || '(document)'}: ${issue.message}` : String(err);
}

export function createRescoreActivities({ store }: { store: ObjectStore }) {
  const tables = createTableActivities({ store });
  const rulesOf = storedRules(store);

  /** The result keys of one page, and the cursor after it. */
  async function listPage(
    input: RescorePageInput,
  ): Promise<{ calls: { callId: string; key: string }[]; cursor: BackfillCursor; listed: number }> {
    if (input.source.kind === 'prefix') {
      const prefix = normalizePrefix(input.source.prefix);
      const page = await store
        .withBucket(input.source.bucket)
        .listPage(prefix, input.cursor.token, input.pageSize);
      // `<prefix><callId>/result.json`, not a batch report or anything deeper.
      const calls = page.objects.flatMap((o) => {
        const rest = o.key.slice(prefix.length).split('/');
        return rest.length === 2 && rest[1] === RESULT_FILE ? [{ callId: rest[0]!, key: o.key }] : [];
      });
      return {
        calls,
        cursor: { page: input.cursor.page + 1, token: page.next, finished: !page.next },
        listed: page.objects.length,
      };
    }
    const manifest = input.manifest!;
    const entries = manifestEntrySchema
      .array()
      .parse(
        JSON.parse(
          await store
            .withBucket(input.output.bucket)
            .getText(`${manifest.pagesPrefix}${pageName(input.cursor.page)}`),
        ),
      );
    const next = input.cursor.page + 1;
    const calls = entries
      .filter((e) => e.duplicateOf === undefined)
      .map((e) => {
        const callId = e.callId ?? callIdOf({ bucket: e.bucket, key: e.key });
        return { callId, key: callOutputKeys(input.output, callId).result };
      });
    return { calls, cursor: { page: next, finished: next >= manifest.pages }, listed: entries.length };
  }

  return {
    /** Scores one page of results again; see the module comment. */
    async rescorePage(input: RescorePageInput): Promise<RescorePageOutput> {
      const ctx = activityContext();
      const [rules, page] = await Promise.all([rulesOf(input.rulesKey), listPage(input)]);
      if (rules.digest !== input.rulesDigest) {
        // The shipped default changed under a running batch (workers upgraded): refuse, do not mix.
        throw Object.assign(
          new Error(
            `rules ${input.rulesKey ?? '(shipped default)'} are ${rules.digest}, not the batch's ${input.rulesDigest}`,
          ),
          { name: FAILURE.InvalidStepInput },
        );
      }
      const earlier = ctx?.info.heartbeatDetails as PageHeartbeat | undefined;
      const rows: RescoreRow[] = earlier?.page === input.cursor.page ? [...earlier.rows] : [];
      const done = new Set(rows.map((r) => r.resultKey));
      const results = store.withBucket(input.output.bucket);
      const limit = pLimit(input.concurrency);

      const scoreOne = async (call: { callId: string; key: string }): Promise<RescoreRow> => {
        const base = { callId: call.callId, resultKey: call.key };
        let text: string;
        try {
          text = await results.getText(call.key);
        } catch (err) {
          if ((err as { name?: string }).name === 'NoSuchKey' || !(await results.exists(call.key)))
            return { ...base, status: 'missing', reason: 'no result.json (not processed, or failed)' };
          throw err;
        }
        const parsed = resultDocumentSchema.safeParse(JSON.parse(text));
        if (!parsed.success)
          return {
            ...base,
            status: 'failed',
            reason: `result.json does not match its schema: ${schemaProblem(parsed.error)}`,
          };
        const doc = parsed.data;
        // What result.json feeds beside it: the call page and the call's rows in the analysis tables
        // (in the day it is already in). Idempotent, so a retried page writes them again.
        const refresh = async (d: typeof doc) => {
          const keys = callOutputKeys(input.output, call.callId);
          await writeCallPage(results, keys, d, input.tables?.timeZone ?? 'UTC');
          await tables.writeCallTables({
            callId: call.callId,
            result: { bucket: input.output.bucket, key: call.key },
            tables: tablesLocationOf(input.output, input.tables),
            keepDay: true,
          });
        };
        const scored = (d: typeof doc) => ({
          categories: matchedCategories({ categories: d.categories ?? [] }),
          ...(d.scorecard ? { score: d.scorecard.score, max: d.scorecard.max } : {}),
        });
        // Written by this batch already (an attempt that ended before its heartbeat said so).
        if (doc.rules?.rescoreBatchId === input.batchId && doc.rules.digest === rules.digest) {
          await refresh(doc);
          return { ...base, status: 'updated', ...scored(doc) };
        }
        if (!input.force && doc.rules?.digest === rules.digest)
          return { ...base, status: 'current', ...scored(doc) };
        const insights = scoreCall(doc, rules, { rescoreBatchId: input.batchId });
        const next = resultDocumentSchema.parse({ ...doc, ...insights });
        await results.put(call.key, `${JSON.stringify(next, null, 2)}\n`, JSON_TYPE);
        await refresh(next);
        return { ...base, status: 'updated', ...scored(next) };
      };

      await Promise.all(
        page.calls
          .filter((c) => !done.has(c.key))
          .map((c) =>
            limit(async () => {
              rows.push(await scoreOne(c));
              ctx?.heartbeat({ page: input.cursor.page, rows } satisfies PageHeartbeat);
            }),
          ),
      );
      if (rows.length > 0)
        await store
          .withBucket(input.output.bucket)
          .put(`${input.partsPrefix}${pageName(input.cursor.page)}`, JSON.stringify(rows), JSON_TYPE);
      const count = (status: RescoreRow['status']) => rows.filter((r) => r.status === status).length;
      return {
        cursor: page.cursor,
        counters: {
          listed: page.calls.length,
          updated: count('updated'),
          current: count('current'),
          missing: count('missing'),
          failed: count('failed'),
        },
      };
    },

    /** Merges the pages' rows into report.json and report.csv beside them. */
    async writeRescoreReport(
      input: WriteRescoreReportInput,
    ): Promise<{ jsonKey: string; csvKey: string; rows: number }> {
      const bucket = store.withBucket(input.output.bucket);
      const rows: RescoreRow[] = [];
      let next: string | undefined;
      do {
        const page = await bucket.listPage(input.partsPrefix, next);
        for (const o of page.objects) {
          if (!/\/page-\d+\.json$/.test(o.key) || o.key.slice(input.partsPrefix.length).includes('/'))
            continue;
          rows.push(...rescoreRowSchema.array().parse(JSON.parse(await bucket.getText(o.key))));
        }
        next = page.next;
      } while (next);
      rows.sort((a, b) => a.callId.localeCompare(b.callId));
      const jsonKey = `${input.reportPrefix}report.json`;
      const csvKey = `${input.reportPrefix}report.csv`;
      await bucket.put(
        jsonKey,
        JSON.stringify({ ...input.header, finishedAt: new Date().toISOString(), rows }, null, 2),
        JSON_TYPE,
      );
      const cell = (v: unknown) => {
        const s = v === undefined ? '' : Array.isArray(v) ? v.join(' ') : String(v);
        return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
      };
      const columns = ['callId', 'status', 'categories', 'score', 'max', 'reason', 'resultKey'] as const;
      const csv = [columns.join(','), ...rows.map((r) => columns.map((c) => cell(r[c])).join(','))].join(
        '\n',
      );
      await bucket.put(csvKey, `${csv}\n`, { contentType: 'text/csv; charset=utf-8' });
      return { jsonKey, csvKey, rows: rows.length };
    },
  };
}

export type RescoreActivities = ReturnType<typeof createRescoreActivities>;
