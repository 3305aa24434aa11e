/**
 * One attempt at recognizing a session: the progress it resumes from and keeps (staged in object
 * storage as it grows, so a crash resumes there), its heartbeats, and the time it has left.
 */
import type { Context } from '@temporalio/activity';
import { setTimeout as sleep } from 'node:timers/promises';
import { isServiceError } from '../../service/index.ts';
import { partialResultKey } from '../../schemas/call-keys.ts';
import type { TemporaryWord } from '../../schemas/service-asr.ts';
import { activityContext } from '../activity-context.ts';
import {
  partialSchema,
  type AsrActivityDeps,
  type PartialProgress,
  type RecognizeHeartbeat,
  type RecognizeSessionInput,
} from './session-types.ts';
import { heartbeatIntervalMs } from './heartbeat-interval.ts';

/**
 * Partial results are staged when a final result arrives and this much audio has been recognized since
 * the last write: a crash re-streams at most about that much audio, at the cost of one small PUT (a
 * billed request, and CPU for signing) per interval per session, none while nothing new was recognized.
 */
const PARTIAL_WRITE_AUDIO_SECONDS = 30;

/** One attempt's state, shared by its steps (recognize-session.ts). */
export interface SessionRun {
  readonly input: RecognizeSessionInput;
  readonly deps: AsrActivityDeps;
  readonly ctx: Context | undefined;
  /** The progress kept so far (earlier attempts included), staged as {@link stagePartial} decides. */
  readonly state: PartialProgress;
  readonly words: TemporaryWord[] | undefined;
  readonly random: () => number;
  /** This attempt's end (its start-to-close timeout); Infinity outside Temporal. */
  readonly attemptDeadline: number;
  readonly heartbeatEveryMs: number;
  /** 550 No Resource waits of this attempt. */
  noResourceWaits: number;
  lastHeartbeat: number;
  lastPartialAt: number;
  partialWriting: Promise<void>;
}

export function describeError(err: unknown): string {
  if (isServiceError(err))
    return `${err.kind} error ${err.code ?? err.httpStatus ?? ''}: ${err.message}`.trim();
  return err instanceof Error ? err.message : String(err);
}

/** The staged progress of an earlier attempt, or a fresh start. */
async function loadPartial(deps: AsrActivityDeps, input: RecognizeSessionInput): Promise<PartialProgress> {
  const fresh: PartialProgress = {
    resumeAt: input.start,
    utterances: [],
    audioSecondsSent: 0,
    restarts: 0,
    reStreamedSeconds: 0,
    requests: 0,
    restartReasons: [],
  };
  if (!(await deps.store.exists(partialResultKey(input.resultKey)))) return fresh;
  const staged = partialSchema.parse(JSON.parse(await deps.store.getText(partialResultKey(input.resultKey))));
  return staged.resumeAt > input.start && staged.resumeAt < input.end ? staged : fresh;
}

/** Starts an attempt: a retried one (crash, timeout) resumes where the staged results end. */
export async function startRun(
  deps: AsrActivityDeps,
  input: RecognizeSessionInput,
  words: Promise<TemporaryWord[] | undefined>,
  attemptStartedAt: number,
): Promise<SessionRun> {
  const ctx = activityContext();
  const [state, vocabulary] = await Promise.all([loadPartial(deps, input), words]);
  if (ctx && ctx.info.attempt > 1 && state.resumeAt > input.start) {
    ctx.log.info('resuming session after a failed attempt', {
      session: input.session,
      resumeAt: state.resumeAt,
    });
  }
  return {
    input,
    deps,
    ctx,
    state,
    words: vocabulary,
    random: deps.random ?? Math.random,
    attemptDeadline: ctx ? attemptStartedAt + ctx.info.startToCloseTimeoutMs : Infinity,
    heartbeatEveryMs: heartbeatIntervalMs(ctx?.info.heartbeatTimeoutMs),
    noResourceWaits: 0,
    // The first heartbeat a whole interval in: a short session sends none.
    lastHeartbeat: Date.now(),
    lastPartialAt: state.resumeAt,
    partialWriting: Promise.resolve(),
  };
}

function heartbeatNow(run: SessionRun, positionSeconds: number): void {
  run.ctx?.heartbeat({
    resumeAt: run.state.resumeAt,
    positionSeconds,
    utterances: run.state.utterances.length,
    restarts: run.state.restarts,
  } satisfies RecognizeHeartbeat);
}

/** Heartbeats at most every {@link SessionRun.heartbeatEveryMs}, as the stream reports its position. */
export function heartbeatThrottled(run: SessionRun, positionSeconds: number): void {
  const now = Date.now();
  if (now - run.lastHeartbeat < run.heartbeatEveryMs) return;
  run.lastHeartbeat = now;
  heartbeatNow(run, positionSeconds);
}

/** Waits `ms`, heartbeating (so the wait is not taken for a dead worker) and ending on cancellation. */
export async function waitHeartbeating(run: SessionRun, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    heartbeatThrottled(run, run.state.resumeAt);
    await sleep(Math.min(run.heartbeatEveryMs, until - Date.now()), undefined, {
      signal: run.ctx?.cancellationSignal,
    });
  }
}

/**
 * Waiting for a free session (550 No Resource) stops while the attempt still has the time to stream the
 * rest of the session at pace, with this factor and margin for restarts and a slow start.
 */
const STREAM_TIME_SLACK = 1.2;
const STREAM_TIME_MARGIN_MS = 30_000;

/** How long streaming the rest of the session takes at the slowest pace, with room for a slow start. */
export function timeStillNeededMs(run: SessionRun): number {
  return (
    ((run.input.end - run.state.resumeAt) / run.deps.slowestPace) * 1000 * STREAM_TIME_SLACK +
    STREAM_TIME_MARGIN_MS
  );
}

/**
 * Stages the progress when enough audio has been recognized since the last write, or when `force`d.
 * A failed write (S3 restarting) costs only resume precision: the next one carries a newer snapshot.
 * It never rejects: an unhandled rejection ends the worker process.
 */
export function stagePartial(run: SessionRun, force = false): Promise<void> {
  const { state, input } = run;
  const due = state.resumeAt - run.lastPartialAt >= PARTIAL_WRITE_AUDIO_SECONDS;
  if (!force && !due) return run.partialWriting;
  run.lastPartialAt = state.resumeAt;
  const snapshot = JSON.stringify(state);
  run.partialWriting = run.partialWriting
    .then(() =>
      run.deps.store.put(partialResultKey(input.resultKey), snapshot, { contentType: 'application/json' }),
    )
    .catch((err: unknown) => {
      run.ctx?.log.warn('could not stage partial results; the next write will', {
        session: input.session,
        reason: describeError(err),
      });
    });
  return run.partialWriting;
}
