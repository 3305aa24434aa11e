/**
 * The recording workflow's last stages (workflows/process-recording.ts): insights, the alert event,
 * publish (result.json last), the analysis tables, the staging clean-up, and the failure path that
 * writes error.json. Nothing here computes: each stage hands keys to an activity.
 */
import { CancellationScope, isCancellation, workflowInfo } from '@temporalio/workflow';
import type { WriteResultOutput } from '../activities/storage/result-activities.ts';
import type { ComputeInsightsOutput } from '../activities/insights/insights-activities.ts';
import type { ProbeResult } from '../schemas/media-probe.ts';
import { reasonOf } from './failure-reason.ts';
import { SEARCH_ATTRIBUTE_KEYS } from './search-attribute-keys.ts';
import { emitCallEvent, type CallEventFields } from './call-events.ts';
import {
  costOf,
  optionalStepKeys,
  stepKey,
  StageFailure,
  type CallFindings,
  type Call,
  type ProcessRecordingResult,
  type Redacted,
  type TextSteps,
} from './recording-call.ts';

/** The run's facts result.json keeps, and the staged outputs' keys: what publish reads. */
function publishInputOf(
  call: Call,
  { probe, plan, sessions, text, redacted, audio, speakers, recognition }: CallFindings,
) {
  const { workflowId, runId } = workflowInfo();
  const cost = costOf(sessions, text, redacted);
  return {
    callId: call.input.callId,
    output: call.keys.output,
    timelineKey: redacted.timelineKey,
    redactionKey: stepKey(redacted.step),
    recognizedTimelineKey: call.timelineKey,
    ...(speakers ? { speakersKey: speakers.speakersKey } : {}),
    ...(audio ? { audioRedaction: audio } : {}),
    fillersKey: stepKey(text.fillers),
    sentimentKey: stepKey(text.sentiment),
    summaryKey: stepKey(text.summary),
    keywordsKey: stepKey(text.keywords),
    ...optionalStepKeys(text),
    stepFailures: text.failures,
    timeZone: call.spec.tables.timeZone,
    facts: {
      source: { ...call.input.source, metadata: call.input.metadata ?? {} },
      audio: probe,
      // What result.json reads of the plan; its sessions go once, below, with their counters.
      plan: { tracks: plan.tracks, channels: plan.channels, decisions: plan.decisions },
      recognition,
      sessions: plan.sessions.map((s, i) => ({
        ...s,
        restarts: sessions[i]!.restarts,
        reStreamedSeconds: sessions[i]!.reStreamedSeconds,
        audioSecondsSent: sessions[i]!.audioSecondsSent,
        reused: sessions[i]!.reused,
      })),
      processing: {
        workflowId,
        runId,
        batchId: call.input.batchId,
        startedAt: new Date(call.startedAt).toISOString(),
        requests: cost.requests,
        retries: cost.retries,
        restarts: cost.restarts,
        reStreamedSeconds: cost.reStreamedSeconds,
        stageMs: call.stages.ms,
        wallMs: Date.now() - call.startedAt,
      },
    },
  };
}

/**
 * Talk time, metrics, categories and scorecard of the call (activities/insights/insights-activities.ts), from
 * the redacted timeline and the text steps' outputs, by the call's rule file: written as one staged
 * document, with only its key and the matched categories back in history.
 */
export async function insightsStage(
  call: Call,
  probe: ProbeResult,
  text: TextSteps,
  redacted: Redacted,
): Promise<ComputeInsightsOutput> {
  call.stages.enter('insights');
  const staging = call.keys.staging;
  return call.activities.insights.computeInsights.executeWithOptions(
    { summary: 'score the call (insights)' },
    [
      {
        callId: call.input.callId,
        timelineKey: redacted.timelineKey,
        redactionKey: stepKey(redacted.step),
        fillersKey: stepKey(text.fillers),
        sentimentKey: stepKey(text.sentiment),
        ...optionalStepKeys(text),
        durationSeconds: probe.durationSeconds,
        ...(call.spec.rulesKey ? { rulesKey: call.spec.rulesKey } : {}),
        outputKey: staging.insights,
      },
    ],
  );
}

/**
 * A call that matched a category its rule file marks as an alert raises `callpipe.call.alert` as soon as
 * its insights exist, before publish (workflows/call-events.ts: delivered by a workflow of its own, so
 * no receiver delays the call).
 */
export async function alertStage(
  call: Call,
  probe: ProbeResult,
  text: TextSteps,
  insights: ComputeInsightsOutput,
): Promise<void> {
  if (!insights.categories.length) return;
  await callEvent(call, {
    type: 'callpipe.call.alert',
    insightsKey: insights.insightsKey,
    sentimentKey: stepKey(text.sentiment),
    durationSeconds: probe.durationSeconds,
    rulesKey: call.spec.rulesKey,
  });
}

/** One of the call's events (workflows/call-events.ts), on the media workers, which read the call's outputs. */
export function callEvent(call: Call, event: CallEventFields): Promise<void> {
  const { callId, batchId, output } = call.input;
  return emitCallEvent(call.spec.queues.media, { ...event, callId, batchId, output });
}

/**
 * result.json (last), transcript.vtt and the call page, assembled from the staged outputs and the
 * insights document: nothing is computed here. Operators then filter a night's calls by category in the
 * Web UI (`CallpipeCategories = "complaint"`).
 */
export async function publishStage(
  call: Call,
  findings: CallFindings,
  insights: ComputeInsightsOutput,
): Promise<WriteResultOutput> {
  call.stages.enter('publish');
  const written = await call.activities.results.publishResult.executeWithOptions(
    { summary: `publish ${call.keys.output.result}` },
    [
      {
        ...publishInputOf(call, findings),
        insightsKey: insights.insightsKey,
      },
    ],
  );
  if (insights.categories.length) {
    call.attributes.set([{ key: SEARCH_ATTRIBUTE_KEYS.categories, value: insights.categories }]);
  }
  return { ...written, categories: insights.categories };
}

/**
 * The call's rows in the analysis tables (activities/tables/). The call is done once its result.json
 * is written; rows that cannot be written are reported (`tables.error`, the batch report), and a
 * later run (`--redo`) or a `callpipe rescore --force` of the output writes them.
 */
export async function tablesStage(
  call: Call,
  written: WriteResultOutput,
): Promise<ProcessRecordingResult['tables']> {
  try {
    const out = await call.activities.tables.writeCallTables.executeWithOptions(
      { summary: 'write the call to the analysis tables' },
      [
        {
          callId: call.input.callId,
          result: { bucket: written.bucket, key: written.resultKey },
          tables: call.spec.tables,
        },
      ],
    );
    return { dt: out.dt };
  } catch (err) {
    if (isCancellation(err)) throw err;
    return { error: reasonOf(err) };
  }
}

export async function cleanUpStaging(call: Call): Promise<void> {
  if (!call.spec.cleanupStaging) return;
  await call.activities.results.deleteStaging
    .executeWithOptions({ summary: 'clean up staging' }, [{ prefixes: [call.keys.staging.dir] }])
    .catch(() => undefined); // leftovers cost storage, not correctness
}

/** Records the failure in `error.json` (even while the workflow is being cancelled) and reports it. */
export async function failStage(call: Call, err: unknown): Promise<ProcessRecordingResult> {
  const stage = err instanceof StageFailure ? err.stage : call.stages.current;
  const reason = err instanceof StageFailure ? err.reason : reasonOf(err);
  const { workflowId, runId } = workflowInfo();
  const written = await CancellationScope.nonCancellable(() =>
    call.activities.results.writeError.executeWithOptions({ summary: `write ${call.keys.output.error}` }, [
      {
        callId: call.input.callId,
        output: call.keys.output,
        source: call.input.source,
        stage,
        reason,
        workflowId,
        runId,
      },
    ]),
  );
  const durationSeconds = call.progress.audioSeconds || undefined;
  await callEvent(call, { type: 'callpipe.call.failed', errorKey: written.errorKey, durationSeconds });
  return call.failed(written.errorKey, stage, reason);
}
