/**
 * The recording workflow's call (workflows/process-recording.ts): its input, result and progress, its
 * activity proxies, and its state as the stages share it: keys, the stage tracker, what the stages
 * made, and the outcome. Workflow code: deterministic, no I/O.
 */
import {
  defineQuery,
  isCancellation,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { RecordingMediaActivities } from '../activities/media/recording-media-activities.ts';
import type { AsrActivities, RecognizeSessionOutput } from '../activities/asr/asr-activities.ts';
import type { MergeActivities } from '../activities/media/merge-activities.ts';
import type { AssignSpeakersOutput, SpeakersActivities } from '../activities/speakers/speakers-activities.ts';
import type { NlpActivities, NlpStepOutput } from '../activities/nlp/nlp-activities.ts';
import type { ResultActivities, WriteResultOutput } from '../activities/storage/result-activities.ts';
import type { InsightsActivities } from '../activities/insights/insights-activities.ts';
import type { AudioRedaction } from '../schemas/result.ts';
import type { CallStateActivities } from '../activities/storage/call-state-activities.ts';
import type { TableActivities } from '../activities/tables/table-activities.ts';
import type { SessionPlan } from '../schemas/plan.ts';
import type { RecognitionFacts } from '../schemas/recognition.ts';
import type { ProbeResult } from '../schemas/media-probe.ts';
import type { OutputLocation, Outcome, RecordingSource, Stage } from '../schemas/recording.ts';
import type { CallSpec } from '../schemas/call-spec.ts';
import type { CallQueues } from '../schemas/task-queues.ts';
import { callKeys, type CallKeys } from '../schemas/call-keys.ts';
import { reasonOf } from './failure-reason.ts';
import { SEARCH_ATTRIBUTE_KEYS } from './search-attribute-keys.ts';
import { CallAttributes } from './call-attributes.ts';
import { ACTIVITY_POLICIES, proxyOn } from './activity-policies.ts';

/**
 * One call: which recording, where its results go, and its settings, all decided by the caller
 * (schemas/call-spec.ts `callSpecOf`), so nothing here has a default.
 */
export interface ProcessRecordingInput {
  /** Stable id of the call: names its output folder. Chosen by the caller (cli/, backfill). */
  callId: string;
  source: RecordingSource;
  /** Where results go; any prefix spelling (schemas/call-keys.ts normalizes it). */
  output: OutputLocation;
  /** Process even when `result.json` exists. */
  redo?: boolean;
  batchId?: string;
  /** Manifest columns (agent, direction, started_at…): copied into the result. */
  metadata?: Record<string, string>;
  spec: CallSpec;
}

export interface ProcessRecordingResult {
  callId: string;
  status: Outcome;
  resultKey?: string;
  errorKey?: string;
  /** Stage where it failed, and why. */
  stage?: Stage;
  reason?: string;
  /** Text steps that failed in a `partial` call. */
  stepFailures?: { step: string; reason: string }[];
  durationSeconds?: number;
  sessions?: number;
  utterances?: number;
  requests?: number;
  restarts?: number;
  reStreamedSeconds?: number;
  /** The call's rows in the analysis tables: the day (partition) they are in, or why they are not. */
  tables?: { dt: string } | { error: string };
}

export interface ProcessRecordingProgress {
  callId: string;
  stage: Stage;
  sessionsTotal: number;
  /** Sessions whose audio is staged: all of them once the plan (which stages the tracks) is done. */
  sessionsTranscoded: number;
  sessionsRecognized: number;
  audioSeconds: number;
  audioSecondsRecognized: number;
}

export const progressQuery = defineQuery<ProcessRecordingProgress>('progress');

/** The call's activity proxies, made once per run: every activity call gets its queue and policy here. */
function activitiesFor(queues: CallQueues) {
  return {
    probe: proxyOn<RecordingMediaActivities>(ACTIVITY_POLICIES.probe, queues),
    media: proxyOn<RecordingMediaActivities & MergeActivities>(ACTIVITY_POLICIES.media, queues),
    results: proxyOn<ResultActivities & CallStateActivities>(ACTIVITY_POLICIES.results, queues),
    /** The insights stage runs on the results' queue and policy (media workers): S3 and CPU, no service. */
    insights: proxyOn<InsightsActivities>(ACTIVITY_POLICIES.results, queues),
    /** The speakers stage reads staged audio and the timeline: media workers, the media policy. */
    speakers: proxyOn<SpeakersActivities>(ACTIVITY_POLICIES.media, queues),
    tables: proxyOn<TableActivities>(ACTIVITY_POLICIES.tables, queues),
    nlp: proxyOn<NlpActivities>(ACTIVITY_POLICIES.nlp, queues),
    asr: proxyOn<AsrActivities>(ACTIVITY_POLICIES.asr, queues),
  };
}
export type CallActivities = ReturnType<typeof activitiesFor>;

/**
 * A recognized session, and its staged audio (the speakers stage reads it on a one-track call): its
 * track's object and where that starts on the recording's clock (0 for a whole track).
 */
export type RecognizedSession = RecognizeSessionOutput & { audioKey: string; audioStart: number };

/** The redaction step's output, and the redacted timeline every later text step reads. */
export interface Redacted {
  step: NlpStepOutput;
  timelineKey: string;
}

export interface TextSteps {
  fillers: NlpStepOutput;
  summary: NlpStepOutput;
  sentiment: NlpStepOutput;
  keywords: NlpStepOutput;
  /** Absent when off. */
  dialogActs?: NlpStepOutput;
  /** Absent when no reasons model is configured. */
  reasons?: NlpStepOutput;
  /** Absent for a spec from before transcript quality. */
  quality?: NlpStepOutput;
  /** Absent when the rule file has no classifier rule. */
  lineClasses?: NlpStepOutput;
  failures: { step: string; reason: string }[];
}

/** What the stages before insights found out about the call: what insights and publish read. */
export interface CallFindings {
  probe: ProbeResult;
  plan: SessionPlan;
  sessions: RecognizedSession[];
  text: TextSteps;
  redacted: Redacted;
  audio: AudioRedaction | undefined;
  /** Absent when the stage could not run. */
  speakers: AssignSpeakersOutput | undefined;
  /** How the call was recognized, and why (result.json `recognition`). */
  recognition: RecognitionFacts;
}

/** A text step's staged output, when it succeeded. */
export function stepKey(step: NlpStepOutput): string | undefined {
  return step.status === 'ok' ? step.outputKey : undefined;
}

/** The staged outputs of the text steps that run only when asked for, when they ran and succeeded. */
export function optionalStepKeys(text: TextSteps) {
  const keyOf = (step: NlpStepOutput | undefined) => (step ? stepKey(step) : undefined);
  const keys = {
    dialogActsKey: keyOf(text.dialogActs),
    reasonsKey: keyOf(text.reasons),
    qualityKey: keyOf(text.quality),
    lineClassesKey: keyOf(text.lineClasses),
  };
  return Object.fromEntries(Object.entries(keys).filter(([, k]) => k !== undefined)) as Partial<
    Record<keyof typeof keys, string>
  >;
}

export function costOf(sessions: RecognizedSession[], text: TextSteps, redacted: Redacted) {
  const steps = [
    redacted.step,
    text.fillers,
    text.summary,
    text.sentiment,
    text.keywords,
    ...(text.dialogActs ? [text.dialogActs] : []),
    ...(text.reasons ? [text.reasons] : []),
    ...(text.quality ? [text.quality] : []),
    ...(text.lineClasses ? [text.lineClasses] : []),
  ];
  return {
    requests: {
      recognition: sessions.reduce((n, r) => n + r.requests, 0),
      redaction: redacted.step.cost.requests,
      fillers: text.fillers.cost.requests,
      summary: text.summary.cost.requests,
      sentiment: text.sentiment.cost.requests,
      keywords: text.keywords.cost.requests,
      ...(text.dialogActs ? { dialogActs: text.dialogActs.cost.requests } : {}),
      ...(text.reasons ? { reasons: text.reasons.cost.requests } : {}),
      ...(text.quality ? { quality: text.quality.cost.requests } : {}),
      ...(text.lineClasses ? { lineClasses: text.lineClasses.cost.requests } : {}),
    },
    retries: steps.reduce((n, s) => n + s.cost.retries, 0),
    restarts: sessions.reduce((n, r) => n + r.restarts, 0),
    reStreamedSeconds: sessions.reduce((n, r) => n + r.reStreamedSeconds, 0),
  };
}

/** Marks the failing stage on an error that leaves a stage whose sessions overlap another's. */
export class StageFailure extends Error {
  readonly stage: Stage;
  readonly reason: string;
  constructor(stage: Stage, reason: string) {
    super(reason);
    this.stage = stage;
    this.reason = reason;
  }
}

export function failAs(stage: Stage) {
  return (err: unknown): never => {
    throw isCancellation(err) || err instanceof StageFailure ? err : new StageFailure(stage, reasonOf(err));
  };
}

/**
 * The one place the call's stage changes: the progress query, the Web UI's current details and the wall
 * time per stage (`processing.wallSeconds` in result.json) follow every stage, the `CallpipeStage` search
 * attribute its milestones (workflows/call-attributes.ts). Entering a stage ends the previous one.
 */
class StageTracker {
  current: Stage = 'queued';
  readonly ms: Partial<Record<Stage, number>> = {};
  private since = Date.now();

  private readonly progress: ProcessRecordingProgress;
  private readonly attributes: CallAttributes;
  constructor(progress: ProcessRecordingProgress, attributes: CallAttributes) {
    this.progress = progress;
    this.attributes = attributes;
  }

  enter(stage: Stage, details?: string): void {
    const now = Date.now();
    if (this.current !== 'queued') this.ms[this.current] = (this.ms[this.current] ?? 0) + (now - this.since);
    this.since = now;
    this.current = stage;
    this.progress.stage = stage;
    this.attributes.stage(stage);
    setCurrentDetails(`**${stage}**${details ? `: ${details}` : ''}`);
  }
}

export class Call {
  readonly startedAt = Date.now();
  readonly activities: CallActivities;
  readonly keys: CallKeys;
  readonly progress: ProcessRecordingProgress;
  readonly stages: StageTracker;
  /** The call's search attributes: upserted at its milestones. */
  readonly attributes: CallAttributes;
  /** The timeline every step after the merge reads: the one with speakers once that stage ran. */
  timelineKey: string;

  readonly input: ProcessRecordingInput;
  readonly spec: CallSpec;
  constructor(input: ProcessRecordingInput) {
    this.input = input;
    this.spec = input.spec;
    this.activities = activitiesFor(input.spec.queues);
    this.keys = callKeys({
      output: input.output,
      stagingPrefix: input.spec.stagingPrefix,
      callId: input.callId,
      workflowId: workflowInfo().workflowId,
      unredacted: input.spec.redaction.unredacted,
    });
    this.timelineKey = this.keys.staging.timeline;
    this.progress = {
      callId: input.callId,
      stage: 'queued',
      sessionsTotal: 0,
      sessionsTranscoded: 0,
      sessionsRecognized: 0,
      audioSeconds: 0,
      audioSecondsRecognized: 0,
    };
    this.attributes = new CallAttributes();
    this.stages = new StageTracker(this.progress, this.attributes);
    setHandler(progressQuery, () => this.progress);
    this.attributes.start(input.callId, input.batchId);
  }

  skipped(): ProcessRecordingResult {
    this.progress.stage = 'done';
    this.attributes.set([
      { key: SEARCH_ATTRIBUTE_KEYS.stage, value: 'done' },
      { key: SEARCH_ATTRIBUTE_KEYS.outcome, value: 'skipped' satisfies Outcome },
    ]);
    this.attributes.flush();
    setCurrentDetails('**done**: already processed');
    return { callId: this.input.callId, status: 'skipped', resultKey: this.keys.output.result };
  }

  finished(
    written: WriteResultOutput,
    { probe, plan, sessions, text, redacted }: CallFindings,
    utterances: number,
    tables?: ProcessRecordingResult['tables'],
  ): ProcessRecordingResult {
    const status: Outcome = text.failures.length ? 'partial' : 'done';
    this.end('done', status);
    const cost = costOf(sessions, text, redacted);
    return {
      callId: this.input.callId,
      status,
      resultKey: written.resultKey,
      ...(text.failures.length ? { stepFailures: text.failures } : {}),
      durationSeconds: probe.durationSeconds,
      sessions: plan.sessions.length,
      utterances,
      requests: Object.values(cost.requests).reduce((a, b) => a + b, 0),
      restarts: cost.restarts,
      reStreamedSeconds: cost.reStreamedSeconds,
      ...(tables ? { tables } : {}),
    };
  }

  failed(errorKey: string, stage: Stage, reason: string): ProcessRecordingResult {
    this.end('failed', 'failed', reason);
    return {
      callId: this.input.callId,
      status: 'failed',
      errorKey,
      stage,
      reason,
      durationSeconds: this.progress.audioSeconds || undefined,
    };
  }

  /** Final stage, then the outcome: one upsert with all that is pending. */
  private end(stage: 'done' | 'failed', outcome: Outcome, details?: string): void {
    this.stages.enter(stage, details);
    this.attributes.set([{ key: SEARCH_ATTRIBUTE_KEYS.outcome, value: outcome }]);
    this.attributes.flush();
  }
}
