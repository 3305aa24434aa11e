/**
 * The recording workflow's recognition stage (workflows/process-recording.ts): the call's mode decided
 * (`auto` asks the asr workers' running real-time factor of file requests), then every planned session
 * recognized: a stream session by one activity each, the pieces of file recognition by one activity per
 * group of pieces of a track (schemas/recognition.ts `PIECES_PER_ACTIVITY`), so a call costs a few
 * activities however many pieces it has. Results come back in plan order, one per planned session.
 * Workflow code: deterministic, no I/O.
 */
import { isCancellation } from '@temporalio/workflow';
import type { PlanSession, SessionPlan } from '../schemas/plan.ts';
import { pieceGroupResultKey, sessionResultKey } from '../schemas/call-keys.ts';
import {
  AUTO_FILE_RTF_BELOW,
  PIECES_PER_ACTIVITY,
  recognitionOf,
  type RecognitionFacts,
  type SessionRecognition,
} from '../schemas/recognition.ts';
import type { RecognizePiecesOutput } from '../activities/asr/piece-types.ts';
import { sessionPriority } from './session-priority.ts';
import { failAs, StageFailure, type Call, type RecognizedSession } from './recording-call.ts';

/** How the call's tracks are planned, and why: what result.json's `recognition` starts from. */
export interface RecognitionChoice {
  plan: SessionRecognition;
  reason: string;
}

/**
 * The plan's recognition for the call's mode: `auto` asks an asr worker for its running real-time factor
 * of file requests (its own measurement, activities/asr/file-rate.ts) and chooses file below
 * {@link AUTO_FILE_RTF_BELOW}, or when nothing is measured yet (its first pieces measure it).
 */
export async function recognitionChoice(call: Call): Promise<RecognitionChoice> {
  const mode = recognitionOf(call.spec);
  if (mode !== 'auto') return { plan: mode, reason: `${mode} recognition was asked for` };
  try {
    const rate = await call.activities.asr.fileRecognitionRate.executeWithOptions(
      {
        summary: 'file recognition rate',
        startToCloseTimeout: '1 minute',
        // Before every session: a question, not a recognition.
        priority: { priorityKey: 1 },
      },
      [{}],
    );
    if (!rate)
      return { plan: 'file', reason: 'auto: no file request measured yet, file recognition measures it' };
    const rtf = Math.round(rate.rtf * 1000) / 1000;
    return rate.rtf < AUTO_FILE_RTF_BELOW
      ? {
          plan: 'file',
          reason: `auto: file requests answered at ${rtf} × real time (${rate.requests} measured)`,
        }
      : { plan: 'stream', reason: `auto: file requests answered at ${rtf} × real time, not faster: streams` };
  } catch (err) {
    if (isCancellation(err)) throw err;
    return { plan: 'stream', reason: 'auto: the file recognition rate could not be asked: streams' };
  }
}

/** What result.json says of the call's recognition: asked, used, why. */
export function recognitionFacts(call: Call, choice: RecognitionChoice, plan: SessionPlan): RecognitionFacts {
  const pieces = plan.sessions.filter((s) => s.recognition === 'file').length;
  const streams = plan.sessions.length - pieces;
  const used =
    plan.sessions.length === 0 ? 'none' : pieces === 0 ? 'stream' : streams === 0 ? 'file' : 'mixed';
  const cut =
    used === 'mixed'
      ? `; ${streams} stretch${streams === 1 ? '' : 'es'} with no silence to cut in streamed`
      : '';
  return { requested: recognitionOf(call.spec), used, reason: `${choice.reason}${cut}` };
}

/**
 * Recognize every session: the plan staged each track that has sessions, so every session streams (or
 * every piece is read from) its byte range of its track at once; the asr workers' slots and the account's
 * session budget bound how many at a time.
 */
export async function recognizeStage(call: Call, plan: SessionPlan): Promise<RecognizedSession[]> {
  // A recording with no speech has no session (activities/media/plan.ts): nothing to recognize.
  if (plan.sessions.length === 0) return [];
  const tracks = new Map((plan.stagedTracks ?? []).map((t) => [t.track, t.key]));
  const audioKeyOf = (s: PlanSession) => {
    const key = tracks.get(s.track);
    if (!key) throw new StageFailure('plan', `the plan staged no audio for track ${s.track}`);
    return key;
  };
  const pieces = plan.sessions.filter((s) => s.recognition === 'file');
  const streams = plan.sessions.filter((s) => s.recognition !== 'file');
  call.stages.enter(
    'recognize',
    pieces.length > 0 ? `${pieces.length} pieces, ${streams.length} sessions` : `${streams.length} sessions`,
  );
  const byIndex = new Map<number, RecognizedSession>();
  await Promise.all([
    ...streams.map(async (session) => {
      const audioKey = audioKeyOf(session);
      const out = await recognizeSession(call, session, audioKey).catch(failAs('recognize'));
      call.progress.sessionsRecognized += 1;
      call.progress.audioSecondsRecognized += session.end - session.start;
      byIndex.set(session.index, { ...out, audioKey, audioStart: 0 });
    }),
    ...pieceGroups(pieces).map(async (group, g) => {
      const audioKey = audioKeyOf(group[0]!);
      const out = await recognizePieces(call, g, group, audioKey).catch(failAs('recognize'));
      for (const r of piecesRecognized(out, audioKey)) byIndex.set(r.index, r.session);
      call.progress.sessionsRecognized += group.length;
      call.progress.audioSecondsRecognized += group.reduce((n, s) => n + (s.end - s.start), 0);
    }),
  ]);
  return plan.sessions.map((s) => byIndex.get(s.index)!);
}

/**
 * A track's pieces in groups of at most {@link PIECES_PER_ACTIVITY}, each a run of consecutive pieces
 * of one track, the groups of a track about equal.
 */
function pieceGroups(pieces: PlanSession[]): PlanSession[][] {
  const byTrack = new Map<number, PlanSession[]>();
  for (const p of pieces) byTrack.set(p.track, [...(byTrack.get(p.track) ?? []), p]);
  return [...byTrack.values()].flatMap((own) => {
    const count = Math.ceil(own.length / PIECES_PER_ACTIVITY);
    const size = Math.ceil(own.length / count);
    return Array.from({ length: count }, (_, i) => own.slice(i * size, (i + 1) * size)).filter(
      (g) => g.length > 0,
    );
  });
}

function recognizeSession(call: Call, s: PlanSession, audioKey: string) {
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
        audioKey,
        audioStart: 0,
        start: s.start,
        end: s.end,
        resultKey: sessionResultKey(call.keys.staging, s.index),
        maxRestarts: call.spec.maxRestarts,
        ...(call.spec.wordsKey ? { wordsKey: call.spec.wordsKey } : {}),
      },
    ],
  );
}

function recognizePieces(call: Call, group: number, pieces: PlanSession[], audioKey: string) {
  const seconds = pieces.reduce((n, s) => n + (s.end - s.start), 0);
  return call.activities.asr.recognizePieces.executeWithOptions(
    {
      // Unpaced, but a service may answer no faster than real time: as long as streaming them would.
      startToCloseTimeout: `${Math.ceil((seconds / call.spec.pacingSpeed) * 2 + 300)} seconds`,
      heartbeatTimeout: `${call.spec.heartbeatTimeoutSeconds} seconds`,
      summary: `recognize ${pieces.length} pieces of track ${pieces[0]!.track}: ${pieces[0]!.speaker}, ${pieces[0]!.start}–${pieces.at(-1)!.end} s`,
      priority: sessionPriority(seconds),
    },
    [
      {
        callId: call.input.callId,
        group,
        audioKey,
        pieces: pieces.map((p) => ({ session: p.index, start: p.start, end: p.end })),
        resultKey: pieceGroupResultKey(call.keys.staging, group),
        maxRetries: call.spec.maxRestarts,
        ...(call.spec.wordsKey ? { wordsKey: call.spec.wordsKey } : {}),
      },
    ],
  );
}

/** Each piece of a group as a recognized session (its result inside the group's object). */
function piecesRecognized(out: RecognizePiecesOutput, audioKey: string) {
  return out.pieces.map((p) => ({
    index: p.session,
    session: {
      resultKey: out.resultKey,
      utterances: p.utterances,
      audioSecondsSent: p.audioSecondsSent,
      restarts: p.retries,
      reStreamedSeconds: 0,
      requests: p.requests,
      reused: out.reused,
      audioKey,
      audioStart: 0,
    } satisfies RecognizedSession,
  }));
}
