/**
 * rescore: the stored results under a prefix (or of a manifest's calls) scored again with a rule file:
 * metrics, categories, scorecard and `rules` recomputed from each result.json, nothing recognized or
 * analysed again (the cloud suites' categories "cannot be applied retroactively"; ours can).
 *
 * Batched like backfill: one activity per page of results (activities/insights/rescore-activities.ts, which makes
 * each call's write exactly once), continue-as-new after `pagesPerRun` pages or when the server suggests
 * it, carrying a cursor and counters only; the pages' rows go to S3 and are merged into one report at
 * the end. Query: `progress`.
 */
import {
  continueAsNew,
  defineQuery,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { BackfillActivities } from '../activities/backfill/backfill-activities.ts';
import type { RescoreActivities } from '../activities/insights/rescore-activities.ts';
import type { BackfillCursor } from '../schemas/backfill.ts';
import type { RescoreCounters, RescoreInput } from '../schemas/rescore.ts';
import { batchPartsPrefix, batchReportPrefix, locationUrl } from '../schemas/call-keys.ts';
import { SEARCH_ATTRIBUTE_KEYS } from './search-attribute-keys.ts';
import { prepareManifestOnce } from './manifest-pages.ts';
import { RETRY_POLICIES } from './activity-policies.ts';
import { declareVersioning } from './versioning-behavior.ts';

export interface RescoreCarry {
  cursor: BackfillCursor;
  counters: RescoreCounters;
  run: number;
  startedAt: string;
  manifest?: { pagesPrefix: string; pages: number };
}

export interface RescoreProgress extends RescoreCounters {
  batchId: string;
  phase: 'scoring' | 'reporting' | 'done';
  run: number;
  pages: number;
}

export interface RescoreResult extends RescoreProgress {
  reportJsonKey: string;
  reportCsvKey: string;
}

export const rescoreProgressQuery = defineQuery<RescoreProgress>('progress');

/**
 * AUTO_UPGRADE: it can live for days (continuing as new), so it moves to the current build at its next
 * workflow task (workers/versioning.ts); a change to it must replay its open runs' histories.
 */
declareVersioning('AUTO_UPGRADE', rescore);

export async function rescore(input: RescoreInput, carry?: RescoreCarry): Promise<RescoreResult> {
  const info = workflowInfo();
  const state: RescoreCarry = carry ?? {
    cursor: { page: 0, finished: false },
    counters: { listed: 0, updated: 0, current: 0, missing: 0, failed: 0 },
    run: 0,
    startedAt: new Date(info.startTime).toISOString(),
  };
  const options = {
    taskQueue: input.taskQueue ?? info.taskQueue,
    retry: RETRY_POLICIES.rescore,
  };
  // A page that classifies (a reason a call, the classifier rules' lines) sends text requests: on the text
  // queue, paced as the pipeline's are. The input names that queue only then (`callpipe rescore`), and a
  // run started before it did (AUTO_UPGRADE) keeps its pages' queue.
  const classifying = input.nlpTaskQueue !== undefined;
  // A page reads, scores and writes up to a thousand results: heartbeats carry its rows.
  const pages = proxyActivities<RescoreActivities>({
    ...options,
    ...(classifying ? { taskQueue: input.nlpTaskQueue } : {}),
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '1 minute',
  });
  const batch = proxyActivities<BackfillActivities & RescoreActivities>({
    ...options,
    startToCloseTimeout: '10 minutes',
  });
  const reportPrefix = batchReportPrefix(input.output, input.batchId);
  const partsPrefix = batchPartsPrefix(reportPrefix, info.firstExecutionRunId);
  let phase: RescoreProgress['phase'] = 'scoring';
  const progress = (): RescoreProgress => ({
    batchId: input.batchId,
    ...state.counters,
    phase,
    run: state.run,
    pages: state.cursor.page,
  });
  const showDetails = () => {
    const c = state.counters;
    setCurrentDetails(
      `**${phase}** · updated ${c.updated} · current ${c.current} · missing ${c.missing} · failed ${c.failed} · run ${state.run}`,
    );
  };
  setHandler(rescoreProgressQuery, progress);
  upsertSearchAttributes([{ key: SEARCH_ATTRIBUTE_KEYS.batchId, value: input.batchId }]);

  await prepareManifestOnce(batch.prepareManifest, input, state, partsPrefix);

  for (let n = 0; !state.cursor.finished; n++) {
    if (n >= input.pagesPerRun || workflowInfo().continueAsNewSuggested)
      return continueAsNew<typeof rescore>(input, { ...state, run: state.run + 1 });
    const page = await pages.rescorePage({
      batchId: input.batchId,
      source: input.source,
      output: input.output,
      cursor: state.cursor,
      pageSize: input.pageSize,
      manifest: state.manifest,
      rulesKey: input.rulesKey,
      rulesDigest: input.rulesDigest,
      force: input.force,
      concurrency: input.concurrency,
      partsPrefix,
      ...(input.tables ? { tables: input.tables } : {}),
      ...(input.reasons ? { reasons: input.reasons } : {}),
    });
    state.cursor = page.cursor;
    for (const [k, v] of Object.entries(page.counters)) state.counters[k as keyof RescoreCounters] += v;
    showDetails();
  }

  phase = 'reporting';
  showDetails();
  const report = await batch.writeRescoreReport({
    output: input.output,
    reportPrefix,
    partsPrefix,
    header: {
      batchId: input.batchId,
      kind: 'rescore',
      source:
        input.source.kind === 'prefix'
          ? `s3://${input.source.bucket}/${input.source.prefix}`
          : `s3://${input.source.bucket}/${input.source.key}`,
      output: locationUrl(input.output),
      rulesKey: input.rulesKey ?? null,
      rulesDigest: input.rulesDigest,
      startedAt: state.startedAt,
      runs: state.run + 1,
      counters: state.counters,
    },
  });
  phase = 'done';
  upsertSearchAttributes([{ key: SEARCH_ATTRIBUTE_KEYS.outcome, value: 'done' }]);
  showDetails();
  log.info('rescore finished', { batchId: input.batchId, ...state.counters, runs: state.run + 1 });
  return { ...progress(), reportJsonKey: report.jsonKey, reportCsvKey: report.csvKey };
}
