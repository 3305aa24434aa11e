/**
 * One attempt at recognizing a session: the progress it resumes from and keeps (in its call's
 * checkpoint as it grows, so a crash resumes there: checkpoint-book.ts), its heartbeats, and the time
 * it has left.
 */
import type { Context } from '@temporalio/activity';
import { setTimeout as sleep } from 'node:timers/promises';
import { isServiceError } from '../../service/index.ts';
import type { TemporaryWord } from '../../schemas/service-asr.ts';
import { activityContext } from '../activity-context.ts';
import { findProgress, keepUnfinished, type BookEntry, type CheckpointBook } from './checkpoint-book.ts';
import {
  type AsrActivityDeps,
  type PartialProgress,
  type RecognizeHeartbeat,
  type RecognizeSessionInput,
} from './session-types.ts';
import { heartbeatIntervalMs } from './heartbeat-interval.ts';

/** One attempt's state, shared by its steps (asr-activities.ts). */
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
  /** The session's place in this process's checkpoints. */
  readonly checkpoint: BookEntry;
}

export function describeError(err: unknown): string {
  if (isServiceError(err))
    return `${err.kind} error ${err.code ?? err.httpStatus ?? ''}: ${err.message}`.trim();
  return err instanceof Error ? err.message : String(err);
}

/**
 * Where an attempt starts: a retried one (crash, timeout, lost worker) where the kept progress ends; a
 * first one at the session's start, looking nothing up (a reset workflow re-streams what it had done).
 */
async function resumePoint(
  deps: AsrActivityDeps,
  input: RecognizeSessionInput,
  attempt: number,
): Promise<PartialProgress> {
  const kept = attempt > 1 ? await findProgress(deps.store, input) : undefined;
  return (
    kept ?? {
      resumeAt: input.start,
      utterances: [],
      audioSecondsSent: 0,
      restarts: 0,
      reStreamedSeconds: 0,
      requests: 0,
      restartReasons: [],
    }
  );
}

/** Starts an attempt: a retried one (crash, timeout) resumes where the staged results end. */
export async function startRun(
  deps: AsrActivityDeps & { checkpoints: CheckpointBook },
  input: RecognizeSessionInput,
  words: Promise<TemporaryWord[] | undefined>,
  attemptStartedAt: number,
): Promise<SessionRun> {
  const ctx = activityContext();
  const attempt = ctx?.info.attempt ?? 1;
  const [state, vocabulary] = await Promise.all([resumePoint(deps, input, attempt), words]);
  if (ctx && state.resumeAt > input.start) {
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
    checkpoint: deps.checkpoints.enter(input, state),
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
 * Stages the progress in the call's checkpoint when enough audio has been recognized since its last
 * write (checkpoint-book.ts), or when `force`d. A failed write (S3 restarting) costs only resume
 * precision: the next one carries a newer snapshot. It never rejects.
 */
export function stagePartial(run: SessionRun, force = false): Promise<void> {
  return run.checkpoint.stage(force);
}

/**
 * The attempt is over: the session leaves the call's checkpoint. One that ended without its result
 * (an error, a cancellation) first keeps its progress under its own key, for its retry, which may run
 * on another worker after this one's checkpoint has moved on.
 */
export async function endRun(run: SessionRun, finished: boolean): Promise<void> {
  if (!finished) await keepUnfinished(run.deps.store, run.input, run.state);
  run.checkpoint.leave();
}
