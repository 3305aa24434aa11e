/**
 * nightlyBackfill: what the nightly Schedule starts. It resolves the previous day (in the schedule's
 * time zone) from the schedule's action time, which the server records in `TemporalScheduledStartTime`
 * (so a replay, a late start or a catch-up run all see the same day), fills the source template and
 * runs that day's backfill as a child whose id names the day: running a day twice attaches to no
 * second batch, and a re-run after it finished skips every done call.
 */
import { executeChild, ParentClosePolicy, workflowInfo } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { StoredBackfillInput } from '../schemas/backfill.ts';
import { backfill, type BackfillResult } from './backfill.ts';
import { dayBefore, fillTemplate, parsePrefixUrl } from './nightly-date.ts';
import { SEARCH_ATTRIBUTE_KEYS } from './search-attribute-keys.ts';
import { declareVersioning } from './versioning-behavior.ts';

/** Set by the server on workflows started by a Schedule: the action's nominal time. */
const SCHEDULED_START_TIME = defineSearchAttributeKey(
  'TemporalScheduledStartTime',
  SearchAttributeType.DATETIME,
);

export interface NightlyInput {
  scheduleId: string;
  /** e.g. `s3://bucket/recordings/{yyyy}/{mm}/{dd}/` */
  sourceTemplate: string;
  /** IANA time zone of the recordings' folders (default UTC). */
  timeZone?: string;
  /** Days before the action's day (default 1: the previous day). */
  daysBack?: number;
  /**
   * Everything of the backfill but its batch id and source, defaults filled in by the CLI (a schedule
   * created by 0.1 carries `window` where `concurrency` is now: the backfill reads either).
   */
  backfill: Omit<StoredBackfillInput, 'batchId' | 'source'>;
}

export interface NightlyResult {
  batchId: string;
  day: string;
  source: string;
  status: 'done' | 'cancelled' | 'already-running';
  backfill?: BackfillResult;
}

/**
 * AUTO_UPGRADE: it can live for days (continuing as new), so it moves to the current build at its next
 * workflow task (workers/versioning.ts); a change to it must replay its open runs' histories.
 */
declareVersioning('AUTO_UPGRADE', nightlyBackfill);

export async function nightlyBackfill(input: NightlyInput): Promise<NightlyResult> {
  const info = workflowInfo();
  const at = info.typedSearchAttributes.get(SCHEDULED_START_TIME) ?? info.startTime;
  const day = dayBefore(at, input.timeZone ?? 'UTC', input.daysBack ?? 1);
  const source = fillTemplate(input.sourceTemplate, day);
  const prefix = parsePrefixUrl(source);
  if (!prefix) throw new Error(`source template '${input.sourceTemplate}' is not s3://bucket/prefix`);
  const date = `${day.yyyy}-${day.mm}-${day.dd}`;
  const batchId = `nightly-${input.scheduleId}-${date}`;
  try {
    const result = await executeChild(backfill, {
      workflowId: `backfill-${batchId}`,
      args: [{ ...input.backfill, batchId, source: { kind: 'prefix', ...prefix } }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      typedSearchAttributes: [{ key: SEARCH_ATTRIBUTE_KEYS.batchId, value: batchId }],
      staticSummary: `nightly backfill of ${source}`,
    });
    return { batchId, day: date, source, status: result.status, backfill: result };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      return { batchId, day: date, source, status: 'already-running' };
    }
    throw err;
  }
}
