/**
 * processRecording: one recording from object storage to `<out>/<callId>/result.json`.
 *
 * probe → plan (which stages every track) → recognize every session from its track's byte range (the
 * asr worker's slots bound how many stream at once) → merge timeline → speakers → redact personal data →
 * fillers → summary, sentiment, keywords, dialog acts (and, beside them when asked, the redacted copy of
 * the audio) → insights (talk time, metrics, categories, scorecard by the call's rule file, as a staged
 * document; an alert event when a category asks for one) → publish the outputs (result.json last) →
 * the analysis tables. History carries keys and small facts only: never text, and so never personal
 * data. A failure at any stage writes `error.json` with the stage and the reason, and the workflow
 * completes with status `failed` so batches go on and report it.
 *
 * Reading order: `processRecording`, then one function per stage to the text steps; the call's state
 * (activity proxies, keys, stage tracker, outcome) is in recording-call.ts, insights on in recording-outputs.ts.
 */
import { isCancellation, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { WatchActivities } from '../activities/watch/watch-activities.ts';
import type { AssignSpeakersOutput } from '../activities/speakers/speakers-activities.ts';
import type { NlpStepOutput } from '../activities/nlp/types.ts';
import type { AudioRedaction } from '../schemas/result.ts';
import type { SessionPlan, SessionRoom } from '../schemas/plan.ts';
import type { ProbeResult } from '../schemas/media-probe.ts';
import type { CallSpec } from '../schemas/call-spec.ts';
import { TEXT_STEPS_STAGE } from '../schemas/recording.ts';
import { mediaActivityTimeoutSeconds } from '../schemas/media-time-bounds.ts';
import { reasonOf } from './failure-reason.ts';
import { SEARCH_ATTRIBUTE_KEYS } from './search-attribute-keys.ts';
import { planPriority } from './session-priority.ts';
import {
  recognitionChoice,
  recognitionFacts,
  recognizeStage,
  type RecognitionChoice,
} from './recognize-stage.ts';
import { RETRY_POLICIES } from './activity-policies.ts';
import { declareVersioning } from './versioning-behavior.ts';
import {
  Call,
  StageFailure,
  type CallFindings,
  type ProcessRecordingInput,
  type ProcessRecordingResult,
  type RecognizedSession,
  type Redacted,
  type TextSteps,
} from './recording-call.ts';
import {
  alertStage,
  callEvent,
  cleanUpStaging,
  failStage,
  insightsStage,
  publishStage,
  tablesStage,
} from './recording-outputs.ts';

export {
  progressQuery,
  type ProcessRecordingInput,
  type ProcessRecordingProgress,
  type ProcessRecordingResult,
} from './recording-call.ts';

/** PINNED, no patches: a run ends on its build (workers/versioning.ts); a change ships as a new build. */
declareVersioning('PINNED', processRecording);

export async function processRecording(input: ProcessRecordingInput): Promise<ProcessRecordingResult> {
  const call = new Call(input);
  if (!input.redo && (await isDone(call))) return call.skipped();
  try {
    const probe = await probeStage(call);
    const choice = await recognitionChoice(call);
    const plan = await planStage(call, probe, choice);
    const decoded = withDecodedLength(call, probe, plan);
    const sessions = await recognizeStage(call, plan);
    const merged = await mergeStage(call, decoded, plan, sessions);
    const speakers = await speakersStage(call, plan, sessions);
    const redacted = await redactStage(call, merged.utterances);
    const [text, audio] = await Promise.all([
      textStepsStage(call, merged.utterances, redacted),
      audioRedactionStage(call, decoded, redacted),
    ]);
    // A redacted copy asked for and not made leaves the call partial, as a failed text step does.
    if (audio?.status === 'failed') text.failures.push({ step: 'audioRedaction', reason: audio.reason });
    const recognition = recognitionFacts(call, choice, plan);
    const findings: CallFindings = {
      probe: decoded,
      plan,
      sessions,
      text,
      redacted,
      audio,
      speakers,
      recognition,
    };
    const insights = await insightsStage(call, decoded, text, redacted);
    await alertStage(call, decoded, text, insights);
    const written = await publishStage(call, findings, insights);
    const tables = await tablesStage(call, written);
    await cleanUpStaging(call);
    await callEvent(call, { type: 'callpipe.call.completed', rulesKey: call.spec.rulesKey });
    return call.finished(written, findings, merged.utterances, tables);
  } catch (err) {
    if (isCancellation(err)) throw err;
    return await failStage(call, err);
  }
}

// --- stages ------------------------------------------------------------------------------------------------

async function isDone(call: Call): Promise<boolean> {
  return call.activities.results.resultExists.executeWithOptions({ summary: 'is the call done?' }, [
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

async function planStage(call: Call, probe: ProbeResult, choice: RecognitionChoice): Promise<SessionPlan> {
  call.stages.enter('plan');
  const plan = await call.activities.media.planSource.executeWithOptions(
    {
      summary: `plan ${Math.round(probe.durationSeconds)} s`,
      priority: planPriority(probe.durationSeconds, choice.plan),
      // Its decode of the whole recording has a wall-clock bound that fails the call once: the
      // activity's timeout follows it, so a long recording is neither cut short nor retried.
      startToCloseTimeout: `${mediaTimeoutOf(probe)} seconds`,
    },
    [
      {
        source: call.input.source,
        probe,
        options: await planOptionsOf(call, choice),
        stageTracksUnder: call.keys.staging.audio,
      },
    ],
  );
  call.progress.sessionsTotal = plan.sessions.length;
  call.progress.sessionsTranscoded = plan.sessions.length;
  call.attributes.set([{ key: SEARCH_ATTRIBUTE_KEYS.speakers, value: plan.tracks.length }]);
  return plan;
}

/**
 * The call's plan options; a latency plan's with the account's session room now, which it is cut to. The
 * room is asked beside the workflows (their queue's activities); when it cannot be judged, the plan has
 * no room and is the throughput plan.
 */
async function planOptionsOf(
  call: Call,
  choice: RecognitionChoice,
): Promise<CallSpec['plan'] & { room?: SessionRoom; recognition?: 'file' }> {
  // File pieces need no room: their requests take the account's sessions as they go.
  if (choice.plan === 'file') return { ...call.spec.plan, recognition: 'file' };
  if (call.spec.plan.strategy !== 'latency') return call.spec.plan;
  const { sessionRoom } = proxyActivities<Pick<WatchActivities, 'sessionRoom'>>({
    taskQueue: workflowInfo().taskQueue,
    startToCloseTimeout: '30 seconds',
    retry: RETRY_POLICIES.sessionRoom,
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
  const durationSeconds = plan.source.decodedSeconds ?? probe.durationSeconds;
  const lengthCheck = plan.lengthCheck ?? probe.lengthCheck;
  call.progress.audioSeconds = durationSeconds;
  if (durationSeconds !== probe.durationSeconds)
    call.attributes.set([{ key: SEARCH_ATTRIBUTE_KEYS.audioSeconds, value: durationSeconds }]);
  return { ...probe, durationSeconds, ...(lengthCheck ? { lengthCheck } : {}) };
}

async function mergeStage(call: Call, probe: ProbeResult, plan: SessionPlan, sessions: RecognizedSession[]) {
  call.stages.enter('merge');
  return call.activities.media.mergeTimeline.executeWithOptions(
    { summary: 'merge sessions into one timeline' },
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
 * Who said what (activities/speakers/speakers-activities.ts): a one-track call's voices separated and named,
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
      { summary: plan.tracks.length === 1 ? 'separate and name the voices' : 'name the speakers' },
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
                  audioStart: sessions[i]!.audioStart,
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

/**
 * Personal data masked before anything is summarized, scored or written (activities/nlp/redact.ts).
 * Fail-closed: a step that could not redact fails the call, so unredacted text is never stored.
 */
async function redactStage(call: Call, utterances: number): Promise<Redacted> {
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
  redacted: Redacted,
): Promise<AudioRedaction | undefined> {
  const asked = call.spec.redaction.audio;
  if (!asked) return undefined;
  const redactionKey = redacted.step.status === 'ok' ? redacted.step.outputKey : undefined;
  const key = call.keys.output.redactedAudio;
  if (!redactionKey || !key) return { status: 'failed', reason: 'the redaction step left no records to map' };
  try {
    return await call.activities.media.redactAudio.executeWithOptions(
      {
        summary: `redact the audio (${asked.mask})`,
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

/** The call's reason when the call's spec names a model; after the summary, which it may classify. */
async function reasonsStep(
  call: Call,
  base: { callId: string; timelineKey: string },
  fillersKey: string | undefined,
  summary: NlpStepOutput,
): Promise<NlpStepOutput | undefined> {
  const asked = call.spec.reasons;
  if (!asked) return undefined;
  const summaryKey = summary.status === 'ok' ? summary.outputKey : undefined;
  return call.activities.nlp.classifyReasons.executeWithOptions({ summary: 'classify the call (reasons)' }, [
    { ...base, fillersKey, summaryKey, outputKey: call.keys.staging.reasons, ...asked },
  ]);
}

/** Fillers first (the others read the cleaned text), then summary, sentiment, keywords and dialog acts at once. */
async function textStepsStage(call: Call, utterances: number, redacted: Redacted): Promise<TextSteps> {
  const staging = call.keys.staging;
  const base = { callId: call.input.callId, timelineKey: redacted.timelineKey };
  const nlp = call.activities.nlp;
  call.stages.enter('fillers');
  const fillers = await nlp.removeFillers.executeWithOptions(
    { summary: `remove fillers from ${utterances} utterances` },
    [{ ...base, outputKey: staging.fillers }],
  );
  const fillersKey = fillers.status === 'ok' ? fillers.outputKey : undefined;
  call.stages.enter(TEXT_STEPS_STAGE);
  const grains = call.spec.text;
  const { windowSeconds } = grains;
  const actsGrain = grains.dialogActs !== 'off' ? grains.dialogActs : undefined;
  const [summary, sentiment, keywords, dialogActs, quality, lineClasses] = await Promise.all([
    nlp.summarizeCall.executeWithOptions({ summary: 'summarize the call (extract-cc)' }, [
      { ...base, fillersKey, outputKey: staging.summary },
    ]),
    nlp.analyzeSentiment.executeWithOptions({ summary: `sentiment per ${grains.sentiment}` }, [
      { ...base, fillersKey, outputKey: staging.sentiment, grain: grains.sentiment, windowSeconds },
    ]),
    nlp.extractKeywords.executeWithOptions({ summary: 'keywords of the call' }, [
      { ...base, fillersKey, outputKey: staging.keywords },
    ]),
    actsGrain
      ? nlp.classifyDialogActs.executeWithOptions({ summary: `dialog acts per ${actsGrain}` }, [
          { ...base, fillersKey, outputKey: staging.dialogActs, grain: actsGrain, windowSeconds },
        ])
      : undefined,
    call.spec.quality
      ? nlp.checkQuality.executeWithOptions({ summary: 'misrecognition of low-confidence utterances' }, [
          { ...base, outputKey: staging.quality, ...call.spec.quality },
        ])
      : undefined,
    call.spec.lineClassifiers
      ? nlp.classifyLines.executeWithOptions({ summary: 'classify the lines (classifier rules)' }, [
          { ...base, fillersKey, outputKey: staging.lineClasses, classifiers: call.spec.lineClassifiers },
        ])
      : undefined,
  ]);
  const reasons = await reasonsStep(call, base, fillersKey, summary);
  const steps = {
    fillers,
    summary,
    sentiment,
    keywords,
    ...(dialogActs ? { dialogActs } : {}),
    ...(reasons ? { reasons } : {}),
    ...(quality ? { quality } : {}),
    ...(lineClasses ? { lineClasses } : {}),
  };
  const failures = Object.entries(steps)
    .filter(([, out]) => out.status === 'failed')
    .map(([step, out]) => ({ step, reason: out.reason ?? 'failed' }));
  return { ...steps, failures };
}
