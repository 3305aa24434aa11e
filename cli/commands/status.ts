/**
 * `callpipe status [id]`: batches and calls, from Temporal's visibility (our search attributes) and the
 * workflows' `progress` queries. Without an id: the recent batches and the calls running now. With a
 * batch's workflow id (or batch id): its progress and its calls. With a call's workflow id: its stage.
 */
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { CliError, parseCommandArgs } from '../command.ts';
import { connectPipeline, type PipelineClient } from '../stack-client.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../workflows/search-attribute-keys.ts';
import { backfill, backfillProgressQuery, type BackfillProgress } from '../../workflows/backfill.ts';
import { nightlyBackfill } from '../../workflows/nightly.ts';
import { processRecording, progressQuery } from '../../workflows/process-recording.ts';
import { backfillWorkflowId, progressLine } from './backfill.ts';
import { textTable } from '../text-table.ts';
import { workflowFailureReason } from '../error-message.ts';

/** Workflow types as visibility knows them: the workflow functions' names. */
const BATCH_TYPES: string[] = [backfill.name, nightlyBackfill.name];
const CALL_TYPE = processRecording.name;

export const summary = 'shows batches and calls (running and finished), or one of them';
export const help = `Usage: callpipe status [workflowId | batchId] [--limit N] [--json]

Without an id: the most recent backfill batches (with their progress) and the calls running now.
With a batch's workflow id or batch id: the batch's progress and its calls (stage and outcome: done,
partial, failed or skipped).
With a call's workflow id: its stage and progress.
Lists come from the search attributes CallpipeBatchId, CallpipeStage and CallpipeOutcome, which the
Web UI filters on too (e.g. CallpipeBatchId="…" AND CallpipeOutcome="failed").`;

export interface CallRow {
  workflowId: string;
  callId?: string;
  status: string;
  stage?: string;
  outcome?: string;
  audioSeconds?: number;
  startTime: string;
}

export interface BatchRow {
  workflowId: string;
  batchId?: string;
  status: string;
  startTime: string;
  closeTime?: string;
  progress?: BackfillProgress;
  /** Why a batch failed, was terminated or timed out (its close event's failure, down to the cause). */
  reason?: string;
}

type Execution = Omit<WorkflowExecutionInfo, 'raw'>;

function callRow(w: Execution): CallRow {
  const sa = w.typedSearchAttributes;
  return {
    workflowId: w.workflowId,
    callId: sa.get(SEARCH_ATTRIBUTE_KEYS.callId),
    status: w.status.name,
    stage: sa.get(SEARCH_ATTRIBUTE_KEYS.stage),
    outcome: sa.get(SEARCH_ATTRIBUTE_KEYS.outcome),
    audioSeconds: sa.get(SEARCH_ATTRIBUTE_KEYS.audioSeconds),
    startTime: w.startTime.toISOString(),
  };
}

async function list(pc: PipelineClient, query: string, limit: number): Promise<WorkflowExecutionInfo[]> {
  const out: WorkflowExecutionInfo[] = [];
  for await (const w of pc.client.workflow.list({ query, pageSize: Math.min(limit, 1000) })) {
    out.push(w);
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * Why a closed workflow did not complete: its result's failure, down to the cause, decoded as every
 * client of ours decodes it (failure messages are encrypted in the history).
 */
export async function closeReason(pc: PipelineClient, w: Execution): Promise<string | undefined> {
  if (!['FAILED', 'TERMINATED', 'TIMED_OUT'].includes(w.status.name)) return undefined;
  const failure = await pc.client.workflow
    .getHandle(w.workflowId, w.runId)
    .result()
    .then(
      () => undefined,
      (err: unknown) => err,
    );
  return failure ? workflowFailureReason(failure) : undefined;
}

async function batchRow(pc: PipelineClient, w: Execution): Promise<BatchRow> {
  const handle = pc.client.workflow.getHandle(w.workflowId, w.runId);
  // Queries work on closed workflows too (the worker replays them), which gives the final counters.
  const progress = await handle.query(backfillProgressQuery).catch(() => undefined);
  const reason = await closeReason(pc, w).catch(() => undefined);
  return {
    workflowId: w.workflowId,
    batchId: w.typedSearchAttributes.get(SEARCH_ATTRIBUTE_KEYS.batchId),
    status: w.status.name,
    startTime: w.startTime.toISOString(),
    closeTime: w.closeTime?.toISOString(),
    progress,
    ...(reason ? { reason } : {}),
  };
}

function callsTable(calls: CallRow[]): string {
  return textTable([
    ['workflow', 'status', 'stage', 'outcome', 'audio'],
    ...calls.map((c) => [
      c.workflowId,
      c.status,
      c.stage ?? '',
      c.outcome ?? '',
      c.audioSeconds !== undefined ? `${c.audioSeconds.toFixed(1)} s` : '',
    ]),
  ]);
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('status', argv, {
    limit: { type: 'string', default: '50' },
    json: { type: 'boolean', default: false },
  });
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit <= 0)
    throw new CliError('status: --limit must be a positive integer');
  const pc = await connectPipeline();
  try {
    const id = positionals[0];
    if (!id) {
      const batches = await Promise.all(
        (await list(pc, `WorkflowType = '${backfill.name}'`, Math.min(limit, 20))).map((w) =>
          batchRow(pc, w),
        ),
      );
      const calls = (
        await list(pc, `WorkflowType = '${CALL_TYPE}' AND ExecutionStatus = 'Running'`, limit)
      ).map(callRow);
      if (values.json) console.log(JSON.stringify({ batches, runningCalls: calls }, null, 2));
      else {
        console.log(batches.length ? 'Batches:' : 'No batches.');
        for (const b of batches)
          console.log(
            `  ${b.workflowId}  ${b.status}${b.reason ? `: ${b.reason.split('\n')[0]}` : ''}` +
              `${b.progress ? `\n    ${progressLine(b.progress)}` : ''}`,
          );
        console.log(
          calls.length ? `Calls running (${calls.length}):\n${callsTable(calls)}` : 'No call running.',
        );
      }
      return 0;
    }

    // A batch id or a workflow id: find the workflow and its type.
    const candidates =
      id.startsWith('backfill-') || id.startsWith('call-') ? [id] : [backfillWorkflowId(id), id];
    let described;
    for (const wid of candidates) {
      described = await pc.client.workflow
        .getHandle(wid)
        .describe()
        .catch(() => undefined);
      if (described) break;
    }
    if (!described) throw new CliError(`no workflow or batch '${id}'`, 1);

    if (BATCH_TYPES.includes(described.type)) {
      const batch = await batchRow(pc, described);
      const batchId = batch.batchId ?? id;
      const calls = (
        await list(
          pc,
          `WorkflowType = '${CALL_TYPE}' AND CallpipeBatchId = "${batchId.replaceAll('"', '')}"`,
          limit,
        )
      ).map(callRow);
      if (values.json) console.log(JSON.stringify({ batch, calls }, null, 2));
      else {
        console.log(`${batch.workflowId}  ${batch.status}  batch ${batchId}`);
        if (batch.reason) console.log(`reason: ${batch.reason}`);
        if (batch.progress) console.log(progressLine(batch.progress));
        if (calls.length) console.log(callsTable(calls));
      }
      return 0;
    }
    const handle = pc.client.workflow.getHandle(described.workflowId);
    const progress = await handle.query(progressQuery).catch(() => undefined);
    const call = callRow(described);
    if (values.json) console.log(JSON.stringify({ call, progress }, null, 2));
    else {
      console.log(callsTable([call]));
      if (progress)
        console.log(
          `stage ${progress.stage}: sessions ${progress.sessionsRecognized}/${progress.sessionsTotal} recognized, ` +
            `${progress.audioSecondsRecognized.toFixed(1)} of ${progress.audioSeconds.toFixed(1)} s`,
        );
    }
    return 0;
  } finally {
    await pc.close();
  }
}
