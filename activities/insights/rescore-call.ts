/**
 * One call of a rescore: read its stored result.json, name its speakers again by the rule file's role cues
 * (speakers/rescore-roles.ts), classify what the batch's models have not (the call's reason, the lines
 * of the rule file's classifier rules) and score it again with the batch's rule file (score-call.ts,
 * from result.json alone: no recognition, no other text analysis) unless it is current, write it back,
 * and refresh what result.json feeds (the call page, the call's rows in the analysis tables).
 */
import type { CallIdMode } from '../../schemas/config.ts';
import type { ZodError } from 'zod';
import { callOutputKeys, tablesLocationOf } from '../../schemas/call-keys.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import type { RescoreRow } from '../../schemas/rescore.ts';
import { resultDocumentSchema, type ResultDocument } from '../../schemas/result.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { writeCallPage } from '../storage/result-activities.ts';
import type { TableActivities } from '../tables/table-activities.ts';
import type { RescoreCall } from './rescore-pages.ts';
import type { LoadedRules } from './rule-file.ts';
import { matchedCategories, scoreCall } from './score-call.ts';
import { rescoreRoles } from '../speakers/rescore-roles.ts';
import type { ResultClassifier } from '../reasons/classify-result.ts';
import type { ResultLineClassifier } from '../nlp/line-classes.ts';
import { reviewed, withRequestsSent } from '../storage/result-document.ts';
import { roleSettingsOf } from '../speakers/speakers-activities.ts';

/** What scoring one call needs of its batch. */
export interface RescoreCallContext {
  batchId: string;
  output: OutputLocation;
  rules: LoadedRules;
  force: boolean;
  tables?: { prefix: string; timeZone: string } | undefined;
  /** The output bucket's store. */
  results: ObjectStore;
  writeCallTables: TableActivities['writeCallTables'];
  /** The call id rule (config `callIds`): how the page shows the recording's key; default auto. */
  callIds?: CallIdMode;
  /** Classifies a stored result with the batch's reasons model (activities/reasons/classify-result.ts). */
  classify?: ResultClassifier | undefined;
  /** Classifies a stored result's lines with the rule file's classifier models (nlp/line-classes.ts). */
  classifyLines?: ResultLineClassifier | undefined;
}

const JSON_TYPE = { contentType: 'application/json; charset=utf-8' };

function schemaProblem(err: unknown): string {
  const issue = (err as ZodError).issues?.[0];
  return issue ? `${issue.path.join('.') || '(document)'}: ${issue.message}` : String(err);
}

/** The stored document, or the row that says why there is none to score. */
async function readStoredResult(
  results: ObjectStore,
  call: RescoreCall,
): Promise<{ doc: ResultDocument } | { row: Pick<RescoreRow, 'status' | 'reason'> }> {
  let text: string;
  try {
    text = await results.getText(call.key);
  } catch (err) {
    if ((err as { name?: string }).name === 'NoSuchKey' || !(await results.exists(call.key)))
      return { row: { status: 'missing', reason: 'no result.json (not processed, or failed)' } };
    throw err;
  }
  const parsed = resultDocumentSchema.safeParse(JSON.parse(text));
  if (parsed.success) return { doc: parsed.data };
  const reason = `result.json does not match its schema: ${schemaProblem(parsed.error)}`;
  return { row: { status: 'failed', reason } };
}

/**
 * What result.json feeds beside it: the call page and the call's rows in the analysis tables (in the
 * day it is already in). Idempotent, so a retried page writes them again.
 */
async function refreshOutputs(ctx: RescoreCallContext, call: RescoreCall, doc: ResultDocument) {
  const keys = callOutputKeys(ctx.output, call.callId);
  await writeCallPage(ctx.results, keys, doc, ctx.tables?.timeZone ?? 'UTC', ctx.callIds);
  await ctx.writeCallTables({
    callId: call.callId,
    result: { bucket: ctx.output.bucket, key: call.key },
    tables: tablesLocationOf(ctx.output, ctx.tables),
    keepDay: true,
  });
}

const scored = (doc: ResultDocument) => ({
  categories: matchedCategories({ categories: doc.categories ?? [] }),
  ...(doc.scorecard ? { score: doc.scorecard.score, max: doc.scorecard.max } : {}),
});

/** Scores one call again (or finds it current, or written by this batch already); its report row. */
export async function rescoreCall(ctx: RescoreCallContext, call: RescoreCall): Promise<RescoreRow> {
  const base = { callId: call.callId, resultKey: call.key };
  const stored = await readStoredResult(ctx.results, call);
  if ('row' in stored) return { ...base, ...stored.row };
  const { doc } = stored;
  const { rules } = ctx;
  // Written by this batch already (an attempt that ended before its heartbeat said so).
  if (doc.rules?.rescoreBatchId === ctx.batchId && doc.rules.digest === rules.digest) {
    await refreshOutputs(ctx, call, doc);
    return { ...base, status: 'updated', ...scored(doc) };
  }
  const reclassify = ctx.classify && (ctx.force || !ctx.classify.current(doc));
  const lines = ctx.classifyLines;
  if (!ctx.force && !reclassify && !(lines && !lines.current(doc)) && doc.rules?.digest === rules.digest)
    return { ...base, status: 'current', ...scored(doc) };
  // Roles first (text cues need no audio): the rules then read who said what as the new file names it.
  const roled = rescoreRoles(doc, roleSettingsOf(rules), { mode: doc.speakerRoles?.mode ?? 'evidence' }).doc;
  // The reason next: reason rules read it. A call with no text keeps none.
  const sent: Record<string, number> = {};
  if (reclassify) {
    const { reasons, requests } = await ctx.classify!.classify(roled);
    if (reasons) roled.reasons = reasons;
    else delete roled.reasons;
    sent.reasons = requests;
  }
  // Then the lines of the classifier rules' speakers as the roles now name them.
  if (lines && (ctx.force || !lines.current(roled))) {
    const { utterances, requests } = await lines.classify(roled, ctx.force);
    roled.utterances = utterances;
    sent.lineClasses = requests;
  }
  // The result's request counts say what the call cost, a rescore's requests included.
  roled.processing = withRequestsSent(roled.processing, sent);
  const insights = scoreCall(roled, rules, { rescoreBatchId: ctx.batchId });
  const scorecard = reviewed(insights.scorecard, roled.transcriptQuality);
  const next = resultDocumentSchema.parse({ ...roled, ...insights, scorecard });
  await ctx.results.put(call.key, `${JSON.stringify(next, null, 2)}\n`, JSON_TYPE);
  await refreshOutputs(ctx, call, next);
  return { ...base, status: 'updated', ...scored(next) };
}
