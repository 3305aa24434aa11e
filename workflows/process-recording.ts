/**
 * processRecording: one recording from object storage to `<out>/<callId>/result.json`.
 *
 * probe → plan → per session: transcode, then recognize (sessions in parallel; the asr worker's slots
 * bound how many stream at once) → merge timeline → fillers → summary, sentiment, keywords → write outputs.
 * History carries keys and small facts only. A failure at any stage writes `error.json` with the stage
 * and the reason, and the workflow completes with status `failed` so batches go on and report it.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  defineQuery,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  setCurrentDetails,
  upsertSearchAttributes,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { RecordingMediaActivities } from '../activities/media/recording.ts';
import type { AsrActivities, RecognizeSessionOutput } from '../activities/asr/recognize-session.ts';
import type { MergeActivities } from '../activities/asr/merge-timeline.ts';
import type { NlpActivities, NlpStepOutput } from '../activities/nlp/activities.ts';
import type { ResultActivities } from '../activities/storage/results.ts';
import type { CallStateActivities } from '../activities/storage/call-state.ts';
import type { PlanOptions, SessionPlan } from '../schemas/plan.ts';
import type { ProbeResult } from '../schemas/media-probe.ts';
import type { OutputLocation, RecordingSource, Stage } from '../schemas/recording.ts';
import { SEARCH_ATTRIBUTE_KEYS } from './search-attribute-keys.ts';
import { sessionPriority } from './session-priority.ts';

export interface ProcessRecordingInput {
  /** Stable id of the call: names its output folder. Chosen by the caller (cli/, backfill). */
  callId: string;
  source: RecordingSource;
  output: OutputLocation;
  /** Staging key prefix for transcoded audio and intermediate documents. */
  stagingPrefix: string;
  /** Process even when `result.json` exists. */
  redo?: boolean;
  batchId?: string;
  /** Manifest columns (agent, direction, started_at…): copied into the result. */
  metadata?: Record<string, string>;
  plan?: PlanOptions;
  /** Client pacing factor (1 against the real service): sizes the recognition timeouts. */
  pacingSpeed?: number;
  /** New recognition sessions allowed per planned session after errors (default 10). */
  maxRestarts?: number;
  /** Heartbeat timeout of recognition, seconds (default 30). */
  heartbeatTimeoutSeconds?: number;
  /** Delete the staged audio and intermediates after success (default true). */
  cleanupStaging?: boolean;
  /** Task queue names; default `callpipe-media`, `callpipe-probe`, `callpipe-asr`, `callpipe-nlp`. */
  queues?: { media: string; asr: string; nlp: string; probe?: string };
}

export interface ProcessRecordingResult {
  callId: string;
  status: 'done' | 'failed' | 'skipped';
  resultKey?: string;
  errorKey?: string;
  /** Stage where it failed, and why. */
  stage?: Stage;
  reason?: string;
  durationSeconds?: number;
  sessions?: number;
  utterances?: number;
  requests?: number;
  restarts?: number;
  reStreamedSeconds?: number;
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

/** Patch id: sessions stream as soon as their own audio is staged (no barrier after all transcodes). */
export const PIPELINED_SESSIONS = 'pipelined-sessions';

const DEFAULT_QUEUES = {
  media: 'callpipe-media',
  probe: 'callpipe-probe',
  asr: 'callpipe-asr',
  nlp: 'callpipe-nlp',
};

/** Marks the failing stage on an error that leaves the pipeline. */
class StageFailure extends Error {
  constructor(
    readonly stage: Stage,
    readonly reason: string,
  ) {
    super(reason);
  }
}

function reasonOf(err: unknown): string {
  let e: unknown = err;
  // The useful message is at the bottom of ActivityFailure → ApplicationFailure chains.
  while (e instanceof ActivityFailure && e.cause) e = e.cause;
  if (e instanceof ApplicationFailure) return e.message;
  return e instanceof Error ? e.message : String(err);
}

export async function processRecording(input: ProcessRecordingInput): Promise<ProcessRecordingResult> {
  const started = Date.now();
  const queues = input.queues ?? DEFAULT_QUEUES;
  const speed = input.pacingSpeed ?? 1;
  const callDir = `${input.output.prefix}${input.callId}/`;
  const staging = `${input.stagingPrefix}calls/${input.callId}/${workflowInfo().workflowId.replace(/[^A-Za-z0-9._@-]/g, '_')}/`;
  const progress: ProcessRecordingProgress = {
    callId: input.callId,
    stage: 'queued',
    sessionsTotal: 0,
    sessionsTranscoded: 0,
    sessionsRecognized: 0,
    audioSeconds: 0,
    audioSecondsRecognized: 0,
  };
  setHandler(progressQuery, () => progress);

  const setStage = (stage: Stage, details?: string) => {
    progress.stage = stage;
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTE_KEYS.stage, value: stage }]);
    setCurrentDetails(`**${stage}**${details ? `: ${details}` : ''}`);
  };
  upsertSearchAttributes([
    { key: SEARCH_ATTRIBUTE_KEYS.callId, value: input.callId },
    ...(input.batchId ? [{ key: SEARCH_ATTRIBUTE_KEYS.batchId, value: input.batchId }] : []),
  ]);

  const media = (options: Partial<ActivityOptions> = {}) =>
    proxyActivities<RecordingMediaActivities & MergeActivities>({
      taskQueue: queues.media,
      startToCloseTimeout: '15 minutes',
      retry: { maximumAttempts: 5, initialInterval: '1 second', nonRetryableErrorTypes: ['MediaError'] },
      ...options,
    });
  const results = (options: Partial<ActivityOptions> = {}) =>
    proxyActivities<ResultActivities & CallStateActivities>({
      taskQueue: queues.media,
      startToCloseTimeout: '5 minutes',
      retry: { maximumAttempts: 10, initialInterval: '1 second' },
      ...options,
    });
  const nlp = (summary: string) =>
    proxyActivities<NlpActivities>({
      taskQueue: queues.nlp,
      startToCloseTimeout: '10 minutes',
      // 99997 and quota waits come back as nextRetryDelay from the activity; this is the fallback.
      retry: {
        maximumAttempts: 20,
        initialInterval: '1 second',
        backoffCoefficient: 2,
        maximumInterval: '5 minutes',
      },
      summary,
    });

  if (
    !input.redo &&
    (await results({ summary: 'is the call done?' }).resultExists({
      output: input.output,
      callId: input.callId,
    }))
  ) {
    setStage('done', 'already processed');
    return { callId: input.callId, status: 'skipped', resultKey: `${callDir}result.json` };
  }

  let stage: Stage = 'probe';
  const stepFailures: { step: string; reason: string }[] = [];
  const stageMs: Record<string, number> = {};
  const timed = async <T>(name: Stage, work: () => Promise<T>, details?: string): Promise<T> => {
    stage = name;
    setStage(name, details);
    const t0 = Date.now();
    try {
      return await work();
    } catch (err) {
      if (isCancellation(err) || err instanceof StageFailure) throw err;
      throw new StageFailure(name, reasonOf(err));
    } finally {
      stageMs[name] = (stageMs[name] ?? 0) + (Date.now() - t0);
    }
  };

  try {
    const probe: ProbeResult = await timed('probe', () =>
      // On a queue of its own when the caller names one (older callers: the media queue).
      media({ summary: `probe ${input.source.key}`, taskQueue: queues.probe ?? queues.media }).probeSource({
        source: input.source,
      }),
    );
    progress.audioSeconds = probe.durationSeconds;
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTE_KEYS.audioSeconds, value: probe.durationSeconds }]);

    const plan: SessionPlan = await timed('plan', () =>
      media({
        summary: `plan ${Math.round(probe.durationSeconds)} s`,
        priority: sessionPriority(probe.durationSeconds),
      }).planSource({
        source: input.source,
        probe,
        options: input.plan,
      }),
    );
    progress.sessionsTotal = plan.sessions.length;
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTE_KEYS.speakers, value: plan.tracks.length }]);

    const transcodeOne = async (s: SessionPlan['sessions'][number]) => {
      const track = plan.tracks[s.track]!;
      const out = await media({
        summary: `transcode session ${s.index} (${s.speaker} ${s.start}–${s.end} s)`,
        priority: sessionPriority(s.end - s.start),
      }).transcodeSource({
        source: input.source,
        keyPrefix: `${staging}audio/`,
        fingerprint: probe.fingerprint,
        streamIndex: probe.streamIndex,
        track: s.track,
        sourceChannels: track.sourceChannels,
        start: s.start,
        end: s.end,
        format: 'mulaw',
      });
      progress.sessionsTranscoded += 1;
      return out;
    };
    const recognizeOne = async (s: SessionPlan['sessions'][number], audioKey: string) => {
      const seconds = s.end - s.start;
      const out = await proxyActivities<AsrActivities>({
        taskQueue: queues.asr,
        // Streaming is paced in real time ÷ speed; leave room for restarts.
        startToCloseTimeout: `${Math.ceil((seconds / speed) * 2 + 300)} seconds`,
        heartbeatTimeout: `${input.heartbeatTimeoutSeconds ?? 30} seconds`,
        retry: {
          maximumAttempts: 5,
          initialInterval: '1 second',
          nonRetryableErrorTypes: ['RecognitionRestartsExhausted', 'ServiceInvalid', 'ServiceAuth'],
        },
        summary: `recognize session ${s.index}: ${s.speaker}, ${s.start}–${s.end} s`,
        priority: sessionPriority(seconds),
      }).recognizeSession({
        callId: input.callId,
        session: s.index,
        audioKey,
        start: s.start,
        end: s.end,
        resultKey: `${staging}sessions/${String(s.index).padStart(4, '0')}.json`,
        maxRestarts: input.maxRestarts ?? 10,
      });
      progress.sessionsRecognized += 1;
      progress.audioSecondsRecognized += seconds;
      return out;
    };
    const sessionCount = `${plan.sessions.length} sessions`;

    let recognized: RecognizeSessionOutput[];
    const audioKeys: string[] = [];
    if (patched(PIPELINED_SESSIONS)) {
      // Each session streams as soon as its own audio is staged. Waiting for the whole call's transcodes
      // first held every recognition slot idle at the start of a night, while the transcodes of all the
      // night's calls shared the media workers (10.8 s of a 250-s ideal at speed 10).
      stage = 'transcode';
      setStage('transcode', sessionCount);
      const t0 = Date.now();
      let stagedAt = t0;
      const failAs = (name: Stage) => (err: unknown) => {
        throw isCancellation(err) ? err : new StageFailure(name, reasonOf(err));
      };
      try {
        recognized = await Promise.all(
          plan.sessions.map(async (s, i) => {
            const audio = await transcodeOne(s).catch(failAs('transcode'));
            audioKeys[i] = audio.key;
            if (progress.sessionsTranscoded === plan.sessions.length) {
              stagedAt = Date.now();
              stage = 'recognize';
              setStage('recognize', sessionCount);
            }
            return recognizeOne(s, audio.key).catch(failAs('recognize'));
          }),
        );
      } finally {
        // Overlapping stages: transcode until the last session is staged, recognize after it.
        stageMs.transcode = (stagedAt > t0 ? stagedAt : Date.now()) - t0;
        if (stagedAt > t0) stageMs.recognize = Date.now() - stagedAt;
      }
    } else {
      // Histories from before PIPELINED_SESSIONS: every transcode, then every recognition.
      const audio = await timed(
        'transcode',
        () => Promise.all(plan.sessions.map(transcodeOne)),
        sessionCount,
      );
      audioKeys.push(...audio.map((a) => a.key));
      recognized = await timed(
        'recognize',
        () => Promise.all(plan.sessions.map((s, i) => recognizeOne(s, audio[i]!.key))),
        sessionCount,
      );
    }

    const timelineKey = `${staging}timeline.json`;
    const merged = await timed('merge', () =>
      media({ summary: 'merge sessions into one timeline' }).mergeTimeline({
        callId: input.callId,
        durationSeconds: probe.durationSeconds,
        timelineKey,
        sessions: plan.sessions.map((s, i) => ({
          session: s.index,
          track: s.track,
          speaker: s.speaker,
          resultKey: recognized[i]!.resultKey,
        })),
      }),
    );

    const step = async (name: string, run: () => Promise<NlpStepOutput>): Promise<NlpStepOutput> => {
      const out = await run();
      if (out.status === 'failed') stepFailures.push({ step: name, reason: out.reason ?? 'failed' });
      return out;
    };
    const fillers = await timed('fillers', () =>
      step('fillers', () =>
        nlp(`remove fillers from ${merged.utterances} utterances`).removeFillers({
          callId: input.callId,
          timelineKey,
          outputKey: `${staging}fillers.json`,
        }),
      ),
    );
    const fillersKey = fillers.status === 'ok' ? fillers.outputKey : undefined;
    const [summary, sentiment, keywords] = await timed('analyze', () =>
      Promise.all([
        step('summary', () =>
          nlp('summarize the call (extract-cc)').summarizeCall({
            callId: input.callId,
            timelineKey,
            fillersKey,
            outputKey: `${staging}summary.json`,
          }),
        ),
        step('sentiment', () =>
          nlp('sentiment per utterance').analyzeSentiment({
            callId: input.callId,
            timelineKey,
            fillersKey,
            outputKey: `${staging}sentiment.json`,
          }),
        ),
        step('keywords', () =>
          nlp('keywords of the call').extractKeywords({
            callId: input.callId,
            timelineKey,
            fillersKey,
            outputKey: `${staging}keywords.json`,
          }),
        ),
      ]),
    );

    const requests = {
      recognition: recognized.reduce((n, r) => n + r.requests, 0),
      fillers: fillers.cost.requests,
      summary: summary.cost.requests,
      sentiment: sentiment.cost.requests,
      keywords: keywords.cost.requests,
    };
    const retries = [fillers, summary, sentiment, keywords].reduce((n, s) => n + s.cost.retries, 0);
    const restarts = recognized.reduce((n, r) => n + r.restarts, 0);
    const reStreamedSeconds = recognized.reduce((n, r) => n + r.reStreamedSeconds, 0);

    const written = await timed('write', () =>
      results({ summary: `write ${callDir}result.json` }).writeResult({
        callId: input.callId,
        output: input.output,
        timelineKey,
        fillersKey,
        sentimentKey: sentiment.status === 'ok' ? sentiment.outputKey : undefined,
        summaryKey: summary.status === 'ok' ? summary.outputKey : undefined,
        keywordsKey: keywords.status === 'ok' ? keywords.outputKey : undefined,
        stepFailures,
        facts: {
          source: { ...input.source, metadata: input.metadata ?? {} },
          audio: probe,
          plan,
          sessions: plan.sessions.map((s, i) => ({
            ...s,
            audioKey: audioKeys[i]!,
            restarts: recognized[i]!.restarts,
            reStreamedSeconds: recognized[i]!.reStreamedSeconds,
            audioSecondsSent: recognized[i]!.audioSecondsSent,
            reused: recognized[i]!.reused,
          })),
          processing: {
            workflowId: workflowInfo().workflowId,
            runId: workflowInfo().runId,
            batchId: input.batchId,
            requests,
            retries,
            restarts,
            reStreamedSeconds,
            stageMs,
            wallMs: Date.now() - started,
          },
        },
      }),
    );

    if (input.cleanupStaging !== false) {
      await results({ summary: 'clean up staging' })
        .deleteStaging({ prefixes: [staging] })
        .catch(() => undefined); // leftovers cost storage, not correctness
    }

    setStage('done');
    upsertSearchAttributes([
      { key: SEARCH_ATTRIBUTE_KEYS.outcome, value: stepFailures.length ? 'partial' : 'done' },
    ]);
    return {
      callId: input.callId,
      status: 'done',
      resultKey: written.resultKey,
      durationSeconds: probe.durationSeconds,
      sessions: plan.sessions.length,
      utterances: merged.utterances,
      requests: Object.values(requests).reduce((a, b) => a + b, 0),
      restarts,
      reStreamedSeconds,
    };
  } catch (err) {
    if (isCancellation(err)) throw err;
    const failed = err instanceof StageFailure ? err : new StageFailure(stage, reasonOf(err));
    // Record the failure even if this workflow is being cancelled meanwhile.
    const written = await CancellationScope.nonCancellable(() =>
      results({ summary: `write ${callDir}error.json` }).writeError({
        callId: input.callId,
        output: input.output,
        source: input.source,
        stage: failed.stage,
        reason: failed.reason,
      }),
    );
    setStage('failed', failed.reason);
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTE_KEYS.outcome, value: 'failed' }]);
    return {
      callId: input.callId,
      status: 'failed',
      errorKey: written.errorKey,
      stage: failed.stage,
      reason: failed.reason,
      durationSeconds: progress.audioSeconds || undefined,
    };
  }
}
