/**
 * processRecording: one recording from object storage to `<out>/<callId>/result.json`.
 *
 * probe → plan → per session: transcode, then recognize (each session streams as soon as its own audio
 * is staged; the asr worker's slots bound how many stream at once) → merge timeline → redact personal
 * data → fillers → summary, sentiment, keywords, dialog acts (and, beside them when asked, the redacted
 * copy of the audio) → insights (talk time, metrics, categories, scorecard by the call's rule file, as a
 * staged document) → publish the outputs (result.json last). History carries keys and small
 * facts only: never text, and so never personal data. A failure at any stage writes `error.json` with the
 * stage and the reason, and the workflow completes with status `failed` so batches go on and report it.
 *
 * Reading order: the activity proxies and their policies, then `processRecording` (one screen), then
 * one function per stage, then the call's state (keys, stage tracker, outcome).
 */
import {
  CancellationScope,
  defineQuery,
  deprecatePatch,
  isCancellation,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
  type ActivityOptions,
  type RetryPolicy,
} from '@temporalio/workflow';
import type { RecordingMediaActivities } from '../activities/media/recording.ts';
import type { AsrActivities, RecognizeSessionOutput } from '../activities/asr/recognize-session.ts';
import type { MergeActivities } from '../activities/asr/merge-timeline.ts';
import type { AssignSpeakersOutput, SpeakersActivities } from '../activities/speakers/speakers-stage.ts';
import type { NlpActivities, NlpStepOutput } from '../activities/nlp/nlp-activities.ts';
import type { ResultActivities, WriteResultOutput } from '../activities/storage/results.ts';
import type { ComputeInsightsOutput, InsightsActivities } from '../activities/insights/insights-stage.ts';
import type { AudioRedaction } from '../schemas/result.ts';
import type { CallStateActivities } from '../activities/storage/call-state.ts';
import type { TableActivities } from '../activities/tables/table-activities.ts';
import type { PlanSession, SessionPlan, SessionRoom } from '../schemas/plan.ts';
import type { WatchActivities } from '../activities/watch/watch-activities.ts';
import type { ProbeResult } from '../schemas/media-probe.ts';
import type { OutputLocation, Outcome, RecordingSource, Stage } from '../schemas/recording.ts';
import type { CallSpec } from '../schemas/call-spec.ts';
import type { CallQueues } from '../schemas/task-queues.ts';
import { callKeys, sessionResultKey, type CallKeys } from '../schemas/call-keys.ts';
import { mediaActivityTimeoutSeconds } from '../schemas/media-time-bounds.ts';
import { NON_RETRYABLE_TYPES } from '../schemas/retry-table.ts';
import { isLegacyInput, specOfLegacyInput, type LegacyProcessRecordingInput } from './legacy-call-input.ts';
import { reasonOf } from './failure-reason.ts';
import { SEARCH_ATTRIBUTE_KEYS } from './search-attribute-keys.ts';
import { CALL_EVENTS, emitCallEvent, type CallEventFields } from './call-events.ts';
import { CallAttributes } from './call-attributes.ts';
import { planPriority, sessionPriority, transcodePriority } from './session-priority.ts';

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
  sessionsTranscoded: number;
  sessionsRecognized: number;
  audioSeconds: number;
  audioSecondsRecognized: number;
}

export const progressQuery = defineQuery<ProcessRecordingProgress>('progress');

// --- patches ----------------------------------------------------------------------------------------------
//
// Versioning by patches, not worker versioning: a call's run lasts minutes to hours, so a patch's old path
// stops mattering soon after a release, while worker versioning would need every deployment (`callpipe
// up`, docker-compose, the night's workers) to run and route by build id, which none does. Each id below
// says where it stands in Temporal's order: `patched` (both paths) → `deprecatePatch` once no run from
// before the patch can be open (the release has run longer than the longest call: a day) → removal once no
// run that wrote the marker can be open or reset (the namespace's retention after the last such run
// closed), moving the recorded histories that hold the marker to the retired list of
// test/unit/workflows.replay.test.ts.

/**
 * Patch id: sessions stream as soon as their own audio is staged (no barrier after all transcodes).
 * At `deprecatePatch` (0.2.0): the old path is gone, the marker is still written. Removal: once the
 * namespace's retention has passed since the last run started before 0.2.0 closed.
 */
export const PIPELINED_SESSIONS = 'pipelined-sessions';
/**
 * Patch id: personal data is redacted between the merge and the text steps, which then read the redacted
 * timeline. A run that had passed that point before this code replays without it. At `patched`:
 * `deprecatePatch` in the release after the one that shipped it has run a day; removal after retention.
 */
export const REDACTION = 'redaction';
/**
 * Patch id: the redacted copy of the audio (opt-in, `redaction.audio`) is made beside the text steps. Only
 * runs that ask for it call `patched`, so the histories of every other run are unchanged. At `patched`:
 * as {@link REDACTION}, counting only runs that asked for the copy.
 */
export const REDACTED_AUDIO = 'redacted-audio';
/**
 * Patch id: the call's matched categories are upserted as `CallpipeCategories` once it is written. At
 * `patched`: as {@link REDACTION}.
 */
export const CATEGORIES_SEARCH_ATTRIBUTE = 'categories-search-attribute';
/**
 * Patch id: dialog acts (`/nlp/v1/sentence_type`) are a text step beside summary, sentiment and keywords.
 * At `patched`: as {@link REDACTION}, counting only runs whose grains have dialog acts on.
 */
export const DIALOG_ACTS_STEP = 'dialog-acts-step';
/**
 * Patch id: a done call's rows are written to the analysis tables after its result.json. At `patched`:
 * as {@link REDACTION}.
 */
export const CALL_TABLES = 'call-tables';
/**
 * Patch id: insights (talk time, metrics, categories, scorecard) are a stage of their own that writes a
 * staged document, and `publish` writes result.json, transcript.vtt and the call page from it. Runs that
 * reached the write before it replay their single `writeResult`, which scores as it writes.
 */
export const INSIGHTS_STAGE = 'insights-stage';
/**
 * Patch id: the speakers stage separates a one-track call's voices and names every speaker's role by
 * evidence between the merge and redaction, which then reads its timeline. At `patched`: as
 * {@link REDACTION}.
 */
export const SPEAKERS_STAGE = 'speakers-stage';
/**
 * Patch id: the recording's length (and its check against the container's timeline) comes from the
 * plan, which decodes every sample; the probe only reads the packets, and its length is an estimate
 * shown until the plan. Runs that planned before it keep their probe's length, which was decoded. At
 * `patched`: as {@link REDACTION}.
 */
export const DECODED_LENGTH_IN_PLAN = 'decoded-length-in-plan';
/**
 * Patch id: a call whose plan strategy is `latency` (the calls a watch starts) asks for the account's
 * session room before it plans. Only such runs call `patched`, so the histories of every other run are
 * unchanged. At `patched`: as {@link REDACTION}, counting only runs with a latency plan.
 */
export const LATENCY_PLAN = 'latency-plan';
/**
 * Patch id: the plan stages each track whole (activities/media/staged-tracks.ts) and every session
 * streams its byte range of its track: no `transcodeSource` per session. Asked once per run, at the
 * plan. Runs that planned before it transcode each session. At `patched`: as {@link REDACTION}.
 */
export const STAGED_TRACKS = 'staged-tracks';
/**
 * Patch id: the call's search attributes are upserted at its milestones (workflows/call-attributes.ts),
 * and the run asks for no earlier patch ({@link Patches}). At `patched`: as {@link REDACTION}.
 */
export const SEARCH_ATTRIBUTE_MILESTONES = 'search-attribute-milestones';

/** The patches before {@link SEARCH_ATTRIBUTE_MILESTONES}: a run that took it has every one of them. */
type EarlierPatch =
  | typeof PIPELINED_SESSIONS
  | typeof REDACTION
  | typeof REDACTED_AUDIO
  | typeof CATEGORIES_SEARCH_ATTRIBUTE
  | typeof DIALOG_ACTS_STEP
  | typeof CALL_TABLES
  | typeof INSIGHTS_STAGE
  | typeof SPEAKERS_STAGE
  | typeof DECODED_LENGTH_IN_PLAN
  | typeof CALL_EVENTS;

/**
 * The patches a run has. Every `patched()` that writes its marker also upserts Temporal's own
 * `TemporalChangeVersion` search attribute, a billed action: asked one by one, the patches above cost a
 * new call about eight. A run started by this code asks once, for {@link SEARCH_ATTRIBUTE_MILESTONES},
 * and has every earlier patch without asking; a run from before asks for each as it did, so its history
 * replays. A patch added later is asked with `patched()` itself (one marker and upsert per run), until
 * it too is folded into a newer one of these.
 */
class Patches {
  readonly milestones: boolean = patched(SEARCH_ATTRIBUTE_MILESTONES);

  has(id: EarlierPatch): boolean {
    return this.milestones || patched(id);
  }

  deprecate(id: EarlierPatch): void {
    if (!this.milestones) deprecatePatch(id);
  }
}

// --- activities and their policies (docs/retries.md's retry budget is computed from these) -------------

/** Temporal's backoff for every activity: 1 s doubling to `maxInterval`; never a non-retryable type. */
function retry(maximumAttempts: number, maximumInterval: string): RetryPolicy {
  return {
    maximumAttempts,
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval,
    nonRetryableErrorTypes: NON_RETRYABLE_TYPES,
  };
}

/**
 * Heartbeat timeout of the short activities (probe, media, results, text): their workers heartbeat while
 * they run (activities/liveness-heartbeat.ts), so an activity of a worker that died is retried elsewhere
 * after this rather than after its start-to-close timeout. Changing it changes no command of a history.
 */
const LIVENESS_HEARTBEAT_TIMEOUT = '30 seconds';

/**
 * Each proxy's queue (of the call's `spec.queues`) and its policy. The recognition timeouts are sized per
 * session, from the call's pacing and heartbeat settings, where a session is started.
 */
export const ACTIVITY_POLICIES = {
  /** ffprobe of one recording; its own queue, so new calls' probes never hold staging slots. */
  probe: {
    queue: 'probe',
    startToCloseTimeout: '15 minutes',
    heartbeatTimeout: LIVENESS_HEARTBEAT_TIMEOUT,
    retry: retry(5, '1 minute'),
  },
  /** Plan, transcode and merge: ffmpeg and small S3 objects. */
  media: {
    queue: 'media',
    startToCloseTimeout: '15 minutes',
    heartbeatTimeout: LIVENESS_HEARTBEAT_TIMEOUT,
    retry: retry(5, '1 minute'),
  },
  /** Done-check, result and error writes, staging clean-up: S3 only, cheap to repeat. */
  results: {
    queue: 'media',
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: LIVENESS_HEARTBEAT_TIMEOUT,
    retry: retry(10, '1 minute'),
  },
  /**
   * The call's rows in the analysis tables: waits for the day's lease (heartbeating) behind other
   * calls of the night and a compaction, then a few small objects.
   */
  tables: {
    queue: 'media',
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '1 minute',
    retry: retry(10, '1 minute'),
  },
  /** Text steps: 99997 and quota waits come as `nextRetryDelay` (schemas/retry-table.ts). */
  nlp: {
    queue: 'nlp',
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: LIVENESS_HEARTBEAT_TIMEOUT,
    retry: retry(20, '1 minute'),
  },
  /** One recognition session; the timeout is sized per session (streaming is paced in real time). */
  asr: {
    queue: 'asr',
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: '30 seconds',
    retry: retry(5, '1 minute'),
  },
} satisfies Record<string, Omit<ActivityOptions, 'taskQueue'> & { queue: keyof CallQueues }>;

/** A policy on the queue the call names for it. */
function on<T>(policy: (typeof ACTIVITY_POLICIES)[keyof typeof ACTIVITY_POLICIES], queues: CallQueues) {
  const { queue, ...options } = policy;
  return proxyActivities<T>({ ...options, taskQueue: queues[queue] });
}

/** The call's activity proxies, made once per run: every activity call gets its queue and policy here. */
function activitiesFor(queues: CallQueues) {
  return {
    probe: on<RecordingMediaActivities>(ACTIVITY_POLICIES.probe, queues),
    media: on<RecordingMediaActivities & MergeActivities>(ACTIVITY_POLICIES.media, queues),
    results: on<ResultActivities & CallStateActivities>(ACTIVITY_POLICIES.results, queues),
    /** The insights stage runs on the results' queue and policy (media workers): S3 and CPU, no service. */
    insights: on<InsightsActivities>(ACTIVITY_POLICIES.results, queues),
    /** The speakers stage reads staged audio and the timeline: media workers, the media policy. */
    speakers: on<SpeakersActivities>(ACTIVITY_POLICIES.media, queues),
    tables: on<TableActivities>(ACTIVITY_POLICIES.tables, queues),
    nlp: on<NlpActivities>(ACTIVITY_POLICIES.nlp, queues),
    asr: on<AsrActivities>(ACTIVITY_POLICIES.asr, queues),
  };
}
type CallActivities = ReturnType<typeof activitiesFor>;

// --- the workflow ------------------------------------------------------------------------------------------

export async function processRecording(
  input: ProcessRecordingInput | LegacyProcessRecordingInput,
): Promise<ProcessRecordingResult> {
  const call = new Call(callOf(input));
  if (!input.redo && (await isDone(call))) return call.skipped();
  try {
    const probed = await probeStage(call);
    const plan = await planStage(call, probed);
    const probe = withDecodedLength(call, probed, plan);
    const sessions = await recognizeStage(call, probe, plan);
    const merged = await mergeStage(call, probe, plan, sessions);
    const speakers = call.patches.has(SPEAKERS_STAGE) ? await speakersStage(call, plan, sessions) : undefined;
    const redacted = await redactStage(call, merged.utterances);
    const [text, audio] = await Promise.all([
      textStage(call, merged.utterances, redacted),
      audioRedactionStage(call, probe, redacted),
    ]);
    // A redacted copy asked for and not made leaves the call partial, as a failed text step does.
    if (audio?.status === 'failed') text.failures.push({ step: 'audioRedaction', reason: audio.reason });
    const analyzed: Analyzed = { probe, plan, sessions, text, redacted, audio, speakers };
    const written = call.patches.has(INSIGHTS_STAGE)
      ? await publishStage(
          call,
          analyzed,
          await alertStage(call, probe, text, await insightsStage(call, probe, text, redacted)),
        )
      : await writeStage(call, analyzed);
    const tables = await tablesStage(call, written);
    await cleanUpStaging(call);
    if (call.patches.has(CALL_EVENTS))
      await callEvent(call, { type: 'callpipe.call.completed', rulesKey: call.spec.rulesKey });
    return call.finished(written, analyzed, merged.utterances, tables);
  } catch (err) {
    if (isCancellation(err)) throw err;
    return await failStage(call, err);
  }
}

// --- stages ------------------------------------------------------------------------------------------------

async function isDone(call: Call): Promise<boolean> {
  return call.activities.results.resultExists.executeWithOptions(call.onMedia('is the call done?'), [
    { bucket: call.keys.output.bucket, key: call.keys.output.result },
  ]);
}

async function probeStage(call: Call): Promise<ProbeResult> {
  call.stages.enter('probe');
  const probe = await call.activities.probe.probeSource.executeWithOptions(
    { summary: `probe ${call.input.source.key}` },
    [{ source: call.input.source }],
  );
  call.progress.audioSeconds = probe.durationSeconds;
  call.attributes.set([{ key: SEARCH_ATTRIBUTE_KEYS.audioSeconds, value: probe.durationSeconds }]);
  return probe;
}

async function planStage(call: Call, probe: ProbeResult): Promise<SessionPlan> {
  call.stages.enter('plan');
  const plan = await call.activities.media.planSource.executeWithOptions(
    {
      summary: `plan ${Math.round(probe.durationSeconds)} s`,
      priority: planPriority(probe.durationSeconds),
      // Its decode of the whole recording has a wall-clock bound that fails the call once: the
      // activity's timeout follows it, so a long recording is neither cut short nor retried.
      startToCloseTimeout: `${mediaTimeoutOf(probe)} seconds`,
    },
    [
      {
        source: call.input.source,
        probe,
        options: await planOptionsOf(call),
        ...(patched(STAGED_TRACKS) ? { stageTracksUnder: call.keys.staging.audio } : {}),
      },
    ],
  );
  call.progress.sessionsTotal = plan.sessions.length;
  call.attributes.set([{ key: SEARCH_ATTRIBUTE_KEYS.speakers, value: plan.tracks.length }]);
  return plan;
}

/**
 * The call's plan options; a latency plan's with the account's session room now, which it is cut to. The
 * room is asked beside the workflows (their queue's activities); when it cannot be judged, the plan has
 * no room and is the throughput plan.
 */
async function planOptionsOf(call: Call): Promise<CallSpec['plan'] & { room?: SessionRoom }> {
  if (call.spec.plan.strategy !== 'latency' || !patched(LATENCY_PLAN)) return call.spec.plan;
  const { sessionRoom } = proxyActivities<Pick<WatchActivities, 'sessionRoom'>>({
    taskQueue: workflowInfo().taskQueue,
    startToCloseTimeout: '30 seconds',
    retry: { maximumAttempts: 2, initialInterval: '1 second' },
  });
  try {
    const room = await sessionRoom({ asrQueue: call.spec.queues.asr, workerSessions: call.spec.plan.budget });
    return { ...call.spec.plan, room };
  } catch (err) {
    if (isCancellation(err)) throw err;
    return call.spec.plan;
  }
}

/** Start-to-close of a media activity that decodes the whole recording (schemas/media-time-bounds.ts). */
function mediaTimeoutOf(probe: ProbeResult): number {
  return mediaActivityTimeoutSeconds({ sizeBytes: probe.sizeBytes, audioSeconds: probe.durationSeconds });
}

/**
 * The recording's facts with the length the plan decoded and checked, which the progress and the
 * `CallpipeAudioSeconds` search attribute then show in place of the probe's estimate.
 */
function withDecodedLength(call: Call, probe: ProbeResult, plan: SessionPlan): ProbeResult {
  if (!call.patches.has(DECODED_LENGTH_IN_PLAN)) return probe;
  const durationSeconds = plan.source.decodedSeconds ?? probe.durationSeconds;
  const lengthCheck = plan.lengthCheck ?? probe.lengthCheck;
  call.progress.audioSeconds = durationSeconds;
  if (durationSeconds !== probe.durationSeconds)
    call.attributes.set([{ key: SEARCH_ATTRIBUTE_KEYS.audioSeconds, value: durationSeconds }]);
  return { ...probe, durationSeconds, ...(lengthCheck ? { lengthCheck } : {}) };
}

/**
 * A recognized session, and its staged audio (the speakers stage reads it on a one-track call): the
 * object and where it starts on the recording's clock (0 for a whole track).
 */
type RecognizedSession = RecognizeSessionOutput & { audioKey: string; audioStart?: number };

/** Where a session's audio is: its track, when the plan staged the tracks (patch {@link STAGED_TRACKS}). */
interface SessionAudio {
  key: string;
  start: number;
}

/**
 * Stage and recognize every session. A plan that staged the tracks (patch {@link STAGED_TRACKS}) has
 * every session's audio ready: each streams its range of its track at once, and the call skips the
 * `transcode` stage. Otherwise each session streams as soon as its own audio is staged: waiting
 * for the whole call's transcodes first held every recognition slot idle at the start of a night, while
 * the transcodes of all the night's calls shared the media workers (10.8 s of a 250-s ideal at speed
 * 10). The call's stage is `transcode` until its last session is staged, `recognize` after.
 */
async function recognizeStage(
  call: Call,
  probe: ProbeResult,
  plan: SessionPlan,
): Promise<RecognizedSession[]> {
  call.patches.deprecate(PIPELINED_SESSIONS);
  // A recording with no speech has no session (activities/media/plan.ts): nothing to stage or stream.
  // No plan had none before, so no recorded history takes this branch.
  if (plan.sessions.length === 0) return [];
  const count = `${plan.sessions.length} sessions`;
  const tracks = new Map((plan.stagedTracks ?? []).map((t) => [t.track, t.key]));
  const staged = plan.sessions.every((s) => tracks.has(s.track));
  // Staged by the plan: every session's audio is there, so the call goes straight to recognition.
  if (staged) call.progress.sessionsTranscoded = plan.sessions.length;
  call.stages.enter(staged ? 'recognize' : 'transcode', count);
  return Promise.all(
    plan.sessions.map(async (session) => {
      const audio: SessionAudio = staged
        ? { key: tracks.get(session.track)!, start: 0 }
        : await transcodeSession(call, probe, plan, session).catch(failAs('transcode'));
      if (!staged) {
        call.progress.sessionsTranscoded += 1;
        if (call.progress.sessionsTranscoded === plan.sessions.length) call.stages.enter('recognize', count);
      }
      const out = await recognizeSession(call, session, audio, staged).catch(failAs('recognize'));
      call.progress.sessionsRecognized += 1;
      call.progress.audioSecondsRecognized += session.end - session.start;
      return { ...out, audioKey: audio.key, ...(staged ? { audioStart: audio.start } : {}) };
    }),
  );
}

function transcodeSession(call: Call, probe: ProbeResult, plan: SessionPlan, s: PlanSession) {
  return call.activities.media.transcodeSource.executeWithOptions(
    {
      summary: `transcode session ${s.index} (${s.speaker} ${s.start}–${s.end} s)`,
      priority: transcodePriority(s.end - s.start),
    },
    [
      {
        source: call.input.source,
        keyPrefix: call.keys.staging.audio,
        fingerprint: probe.fingerprint,
        streamIndex: probe.streamIndex,
        track: s.track,
        sourceChannels: plan.tracks[s.track]!.sourceChannels,
        ...(probe.reader ? { reader: probe.reader } : {}),
        start: s.start,
        end: s.end,
        format: 'mulaw',
      },
    ],
  );
}

function recognizeSession(call: Call, s: PlanSession, audio: SessionAudio, fromTrack: boolean) {
  const seconds = s.end - s.start;
  return call.activities.asr.recognizeSession.executeWithOptions(
    {
      // Streaming is paced in real time ÷ speed; leave room for restarts.
      startToCloseTimeout: `${Math.ceil((seconds / call.spec.pacingSpeed) * 2 + 300)} seconds`,
      heartbeatTimeout: `${call.spec.heartbeatTimeoutSeconds} seconds`,
      summary: `recognize session ${s.index}: ${s.speaker}, ${s.start}–${s.end} s`,
      priority: sessionPriority(seconds),
    },
    [
      {
        callId: call.input.callId,
        session: s.index,
        audioKey: audio.key,
        // A run from before staged tracks passed no start: its object is the session's own.
        ...(fromTrack ? { audioStart: audio.start } : {}),
        start: s.start,
        end: s.end,
        resultKey: sessionResultKey(call.keys.staging, s.index),
        maxRestarts: call.spec.maxRestarts,
        ...(call.spec.wordsKey ? { wordsKey: call.spec.wordsKey } : {}),
      },
    ],
  );
}

async function mergeStage(call: Call, probe: ProbeResult, plan: SessionPlan, sessions: RecognizedSession[]) {
  call.stages.enter('merge');
  return call.activities.media.mergeTimeline.executeWithOptions(
    call.onMedia('merge sessions into one timeline'),
    [
      {
        callId: call.input.callId,
        durationSeconds: probe.durationSeconds,
        timelineKey: call.keys.staging.timeline,
        sessions: plan.sessions.map((s, i) => ({
          session: s.index,
          track: s.track,
          speaker: s.speaker,
          resultKey: sessions[i]!.resultKey,
        })),
      },
    ],
  );
}

/**
 * Who said what (activities/speakers/speakers-stage.ts): a one-track call's voices separated and named,
 * a stereo call's channel map checked against what each side says. Never fatal: when the stage cannot
 * run, the call goes on with the speakers of its tracks, and result.json has no role evidence.
 */
async function speakersStage(
  call: Call,
  plan: SessionPlan,
  sessions: RecognizedSession[],
): Promise<AssignSpeakersOutput | undefined> {
  call.stages.enter('speakers');
  const staging = call.keys.staging;
  const channels = call.spec.plan.channels;
  const direction = call.input.metadata?.direction;
  try {
    const out = await call.activities.speakers.assignSpeakers.executeWithOptions(
      call.onMedia(plan.tracks.length === 1 ? 'separate and name the voices' : 'name the speakers'),
      [
        {
          callId: call.input.callId,
          timelineKey: staging.timeline,
          outputTimelineKey: staging.speakersTimeline,
          outputKey: staging.speakers,
          tracks: plan.tracks,
          sessions:
            plan.tracks.length === 1
              ? plan.sessions.map((s, i) => ({
                  session: s.index,
                  start: s.start,
                  end: s.end,
                  audioKey: sessions[i]!.audioKey,
                  ...(sessions[i]!.audioStart !== undefined ? { audioStart: sessions[i]!.audioStart } : {}),
                }))
              : [],
          ...(call.spec.rulesKey ? { rulesKey: call.spec.rulesKey } : {}),
          ...(direction === 'inbound' || direction === 'outbound' ? { direction } : {}),
          roles: channels?.roles ?? 'evidence',
          voices: channels?.voices ?? 'separate',
        },
      ],
    );
    call.timelineKey = out.timelineKey;
    call.attributes.set([
      { key: SEARCH_ATTRIBUTE_KEYS.roles, value: out.decision },
      { key: SEARCH_ATTRIBUTE_KEYS.speakers, value: out.speakers.length },
    ]);
    return out;
  } catch (err) {
    if (isCancellation(err)) throw err;
    return undefined;
  }
}

/** The redaction step's output, and the redacted timeline every later text step reads. */
interface Redacted {
  step: NlpStepOutput;
  timelineKey: string;
}

/**
 * Personal data masked before anything is summarized, scored or written (activities/nlp/redact.ts).
 * Fail-closed: a step that could not redact fails the call, so unredacted text is never stored. Runs
 * that had passed this point before it existed replay without it (patch {@link REDACTION}).
 */
async function redactStage(call: Call, utterances: number): Promise<Redacted | undefined> {
  if (!call.patches.has(REDACTION)) return undefined;
  call.stages.enter('redact');
  const staging = call.keys.staging;
  const step = await call.activities.nlp.redactText.executeWithOptions(
    { summary: `redact personal data in ${utterances} utterances` },
    [
      {
        callId: call.input.callId,
        timelineKey: call.timelineKey,
        outputKey: staging.redaction,
        redactedTimelineKey: staging.redactedTimeline,
      },
    ],
  );
  if (step.status === 'failed') throw new StageFailure('redact', step.reason ?? 'redaction failed');
  return { step, timelineKey: staging.redactedTimeline };
}

/**
 * The redacted copy of the recording (activities/media/redacted-audio.ts), when asked for: on the media
 * queue, beside the text steps. Fail-closed and never fatal: when a span cannot be mapped to audio time or
 * the copy does not check out, no copy is written, result.json says why and the call is `partial`.
 */
async function audioRedactionStage(
  call: Call,
  probe: ProbeResult,
  redacted: Redacted | undefined,
): Promise<AudioRedaction | undefined> {
  const asked = call.spec.redaction.audio;
  if (!asked || !redacted || !call.patches.has(REDACTED_AUDIO)) return undefined;
  const redactionKey = redacted.step.status === 'ok' ? redacted.step.outputKey : undefined;
  const key = call.keys.output.redactedAudio;
  if (!redactionKey || !key) return { status: 'failed', reason: 'the redaction step left no records to map' };
  try {
    return await call.activities.media.redactAudio.executeWithOptions(
      {
        ...call.onMedia(`redact the audio (${asked.mask})`),
        startToCloseTimeout: `${mediaTimeoutOf(probe)} seconds`,
      },
      [
        {
          source: call.input.source,
          probe: {
            streamIndex: probe.streamIndex,
            sampleRate: probe.sampleRate,
            channels: probe.channels,
            durationSeconds: probe.durationSeconds,
            ...(probe.reader ? { reader: probe.reader } : {}),
          },
          redactionKey,
          output: { bucket: call.keys.output.bucket, key },
          mask: asked.mask,
        },
      ],
    );
  } catch (err) {
    if (isCancellation(err)) throw err;
    return { status: 'failed', reason: reasonOf(err) };
  }
}

interface TextSteps {
  fillers: NlpStepOutput;
  summary: NlpStepOutput;
  sentiment: NlpStepOutput;
  keywords: NlpStepOutput;
  /** Absent when off, or in a run from before the step existed. */
  dialogActs?: NlpStepOutput;
  failures: { step: string; reason: string }[];
}

/** Fillers first (the others read the cleaned text), then summary, sentiment, keywords and dialog acts at once. */
async function textStage(call: Call, utterances: number, redacted: Redacted | undefined): Promise<TextSteps> {
  const staging = call.keys.staging;
  const base = { callId: call.input.callId, timelineKey: redacted?.timelineKey ?? call.timelineKey };
  const nlp = call.activities.nlp;
  const on = (summary: string) => ({ summary });
  call.stages.enter('fillers');
  const fillers = await nlp.removeFillers.executeWithOptions(
    on(`remove fillers from ${utterances} utterances`),
    [{ ...base, outputKey: staging.fillers }],
  );
  const fillersKey = fillers.status === 'ok' ? fillers.outputKey : undefined;
  call.stages.enter('analyze');
  const grains = call.spec.text;
  const { windowSeconds } = grains;
  const actsGrain =
    grains.dialogActs !== 'off' && call.patches.has(DIALOG_ACTS_STEP) ? grains.dialogActs : undefined;
  const [summary, sentiment, keywords, dialogActs] = await Promise.all([
    nlp.summarizeCall.executeWithOptions(on('summarize the call (extract-cc)'), [
      { ...base, fillersKey, outputKey: staging.summary },
    ]),
    nlp.analyzeSentiment.executeWithOptions(on(`sentiment per ${grains.sentiment}`), [
      { ...base, fillersKey, outputKey: staging.sentiment, grain: grains.sentiment, windowSeconds },
    ]),
    nlp.extractKeywords.executeWithOptions(on('keywords of the call'), [
      { ...base, fillersKey, outputKey: staging.keywords },
    ]),
    actsGrain
      ? nlp.classifyDialogActs.executeWithOptions(on(`dialog acts per ${actsGrain}`), [
          { ...base, fillersKey, outputKey: staging.dialogActs, grain: actsGrain, windowSeconds },
        ])
      : undefined,
  ]);
  const steps = { fillers, summary, sentiment, keywords, ...(dialogActs ? { dialogActs } : {}) };
  const failures = Object.entries(steps)
    .filter(([, out]) => out.status === 'failed')
    .map(([step, out]) => ({ step, reason: out.reason ?? 'failed' }));
  return { ...steps, failures };
}

/** What the stages before insights made: what insights, publish and the old write read. */
interface Analyzed {
  probe: ProbeResult;
  plan: SessionPlan;
  sessions: RecognizedSession[];
  text: TextSteps;
  redacted: Redacted | undefined;
  audio: AudioRedaction | undefined;
  /** Absent in a run from before the speakers stage, or when the stage could not run. */
  speakers: AssignSpeakersOutput | undefined;
}

/** The run's facts result.json keeps, and the staged outputs' keys: what publish and the old write read. */
function publishInputOf(call: Call, { probe, plan, sessions, text, redacted, audio, speakers }: Analyzed) {
  const { workflowId, runId } = workflowInfo();
  const cost = costOf(sessions, text, redacted);
  return {
    callId: call.input.callId,
    output: call.keys.output,
    timelineKey: redacted?.timelineKey ?? call.timelineKey,
    ...(redacted ? { redactionKey: stepKey(redacted.step), recognizedTimelineKey: call.timelineKey } : {}),
    ...(speakers ? { speakersKey: speakers.speakersKey } : {}),
    ...(audio ? { audioRedaction: audio } : {}),
    fillersKey: stepKey(text.fillers),
    sentimentKey: stepKey(text.sentiment),
    summaryKey: stepKey(text.summary),
    keywordsKey: stepKey(text.keywords),
    ...(text.dialogActs && stepKey(text.dialogActs) ? { dialogActsKey: stepKey(text.dialogActs) } : {}),
    stepFailures: text.failures,
    timeZone: call.spec.tables.timeZone,
    facts: {
      source: { ...call.input.source, metadata: call.input.metadata ?? {} },
      audio: probe,
      plan,
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

/** A text step's staged output, when it succeeded. */
function stepKey(step: NlpStepOutput): string | undefined {
  return step.status === 'ok' ? step.outputKey : undefined;
}

/**
 * Talk time, metrics, categories and scorecard of the call (activities/insights/insights-stage.ts), from
 * the redacted timeline and the text steps' outputs, by the call's rule file: written as one staged
 * document, with only its key and the matched categories back in history.
 */
async function insightsStage(
  call: Call,
  probe: ProbeResult,
  text: TextSteps,
  redacted: Redacted | undefined,
): Promise<ComputeInsightsOutput> {
  call.stages.enter('insights');
  const staging = call.keys.staging;
  return call.activities.insights.computeInsights.executeWithOptions(
    call.onMedia('score the call (insights)'),
    [
      {
        callId: call.input.callId,
        timelineKey: redacted?.timelineKey ?? call.timelineKey,
        ...(redacted ? { redactionKey: stepKey(redacted.step) } : {}),
        fillersKey: stepKey(text.fillers),
        sentimentKey: stepKey(text.sentiment),
        ...(text.dialogActs && stepKey(text.dialogActs) ? { dialogActsKey: stepKey(text.dialogActs) } : {}),
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
 * no receiver delays the call). Runs from before call events replay without it.
 */
async function alertStage(
  call: Call,
  probe: ProbeResult,
  text: TextSteps,
  insights: ComputeInsightsOutput,
): Promise<ComputeInsightsOutput> {
  if (!insights.categories.length || !call.patches.has(CALL_EVENTS)) return insights;
  await callEvent(call, {
    type: 'callpipe.call.alert',
    insightsKey: insights.insightsKey,
    sentimentKey: stepKey(text.sentiment),
    durationSeconds: probe.durationSeconds,
    rulesKey: call.spec.rulesKey,
  });
  return insights;
}

/** One of the call's events (workflows/call-events.ts), on the media workers, which read the call's outputs. */
function callEvent(call: Call, event: CallEventFields): Promise<void> {
  const { callId, batchId, output } = call.input;
  return emitCallEvent(call.spec.queues.media, { ...event, callId, batchId, output });
}

/**
 * result.json (last), transcript.vtt and the call page, assembled from the staged outputs and the
 * insights document: nothing is computed here. Operators then filter a night's calls by category in the
 * Web UI (`CallpipeCategories = "complaint"`).
 */
async function publishStage(
  call: Call,
  analyzed: Analyzed,
  insights: ComputeInsightsOutput,
): Promise<WriteResultOutput> {
  call.stages.enter('publish');
  const written = await call.activities.results.publishResult.executeWithOptions(
    call.onMedia(`publish ${call.keys.output.result}`),
    [
      {
        ...publishInputOf(call, analyzed),
        insightsKey: insights.insightsKey,
      },
    ],
  );
  if (insights.categories.length) {
    call.attributes.set([{ key: SEARCH_ATTRIBUTE_KEYS.categories, value: insights.categories }]);
  }
  return { ...written, categories: insights.categories };
}

/** The single write of runs recorded before the insights stage: writeResult scores as it writes. */
async function writeStage(call: Call, analyzed: Analyzed): Promise<WriteResultOutput> {
  call.stages.enter('write');
  const written = await call.activities.results.writeResult.executeWithOptions(
    call.onMedia(`write ${call.keys.output.result}`),
    [
      {
        ...publishInputOf(call, analyzed),
        ...(call.spec.rulesKey ? { rulesKey: call.spec.rulesKey } : {}),
      },
    ],
  );
  // Operators filter a night's calls by category in the Web UI (`CallpipeCategories = "complaint"`).
  if (call.patches.has(CATEGORIES_SEARCH_ATTRIBUTE) && written.categories?.length) {
    call.attributes.set([{ key: SEARCH_ATTRIBUTE_KEYS.categories, value: written.categories }]);
  }
  return written;
}

/**
 * The call's rows in the analysis tables (activities/tables/). The call is done once its result.json
 * is written; rows that cannot be written are reported (`tables.error`, the batch report), and a
 * later run (`--redo`) or a `callpipe rescore --force` of the output writes them.
 */
async function tablesStage(
  call: Call,
  written: WriteResultOutput,
): Promise<ProcessRecordingResult['tables'] | undefined> {
  if (!call.patches.has(CALL_TABLES)) return undefined;
  try {
    const out = await call.activities.tables.writeCallTables.executeWithOptions(
      call.onMedia('write the call to the analysis tables'),
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

async function cleanUpStaging(call: Call): Promise<void> {
  if (!call.spec.cleanupStaging) return;
  await call.activities.results.deleteStaging
    .executeWithOptions(call.onMedia('clean up staging'), [{ prefixes: [call.keys.staging.dir] }])
    .catch(() => undefined); // leftovers cost storage, not correctness
}

/** Records the failure in `error.json` (even while the workflow is being cancelled) and reports it. */
async function failStage(call: Call, err: unknown): Promise<ProcessRecordingResult> {
  const stage = err instanceof StageFailure ? err.stage : call.stages.current;
  const reason = err instanceof StageFailure ? err.reason : reasonOf(err);
  const { workflowId, runId } = workflowInfo();
  const written = await CancellationScope.nonCancellable(() =>
    call.activities.results.writeError.executeWithOptions(call.onMedia(`write ${call.keys.output.error}`), [
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
  if (call.patches.has(CALL_EVENTS)) {
    const durationSeconds = call.progress.audioSeconds || undefined;
    await callEvent(call, { type: 'callpipe.call.failed', errorKey: written.errorKey, durationSeconds });
  }
  return call.failed(written.errorKey, stage, reason);
}

// --- the call's state --------------------------------------------------------------------------------------

function costOf(sessions: RecognizedSession[], text: TextSteps, redacted?: Redacted) {
  const steps = [
    ...(redacted ? [redacted.step] : []),
    text.fillers,
    text.summary,
    text.sentiment,
    text.keywords,
    ...(text.dialogActs ? [text.dialogActs] : []),
  ];
  return {
    requests: {
      recognition: sessions.reduce((n, r) => n + r.requests, 0),
      ...(redacted ? { redaction: redacted.step.cost.requests } : {}),
      fillers: text.fillers.cost.requests,
      summary: text.summary.cost.requests,
      sentiment: text.sentiment.cost.requests,
      keywords: text.keywords.cost.requests,
      ...(text.dialogActs ? { dialogActs: text.dialogActs.cost.requests } : {}),
    },
    retries: steps.reduce((n, s) => n + s.cost.retries, 0),
    restarts: sessions.reduce((n, r) => n + r.restarts, 0),
    reStreamedSeconds: sessions.reduce((n, r) => n + r.reStreamedSeconds, 0),
  };
}

/** Marks the failing stage on an error that leaves a stage whose sessions overlap another's. */
class StageFailure extends Error {
  readonly stage: Stage;
  readonly reason: string;
  constructor(stage: Stage, reason: string) {
    super(reason);
    this.stage = stage;
    this.reason = reason;
  }
}

function failAs(stage: Stage) {
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

/**
 * The input as this code reads it: a call of the old shape (recorded histories, runs started before the
 * spec) becomes one with the spec it stood for (workflows/legacy-call-input.ts).
 */
function callOf(input: ProcessRecordingInput | LegacyProcessRecordingInput): ProcessRecordingInput {
  if (!isLegacyInput(input)) return input;
  const { callId, source, output, redo, batchId, metadata } = input;
  return { callId, source, output, redo, batchId, metadata, spec: specOfLegacyInput(input) };
}

class Call {
  readonly startedAt = Date.now();
  readonly activities: CallActivities;
  readonly keys: CallKeys;
  readonly progress: ProcessRecordingProgress;
  readonly stages: StageTracker;
  /** Which patches the run has: asked once in a run of this code. */
  readonly patches: Patches;
  /** The call's search attributes: upserted at its milestones, or as recorded runs did. */
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
    this.patches = new Patches();
    this.attributes = new CallAttributes(this.patches.milestones);
    this.stages = new StageTracker(this.progress, this.attributes);
    setHandler(progressQuery, () => this.progress);
    this.attributes.start(input.callId, input.batchId);
  }

  /** Options of an activity of the media queue's proxies (media and storage work share its workers). */
  onMedia(summary: string): ActivityOptions {
    return { summary };
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
    { probe, plan, sessions, text, redacted }: Analyzed,
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

  /**
   * Final stage, then the outcome: one upsert with all that is pending, or two (the stage, then the
   * outcome) in runs from before the milestones, as their histories have them.
   */
  private end(stage: 'done' | 'failed', outcome: Outcome, details?: string): void {
    this.stages.enter(stage, details);
    this.attributes.set([{ key: SEARCH_ATTRIBUTE_KEYS.outcome, value: outcome }]);
    this.attributes.flush();
  }
}
