/**
 * What a failed stream leads to, as the retry table says (schemas/retry-table.ts): a wait for a free
 * session (550 No Resource, no restart spent), a new session resuming after the last final result
 * (`RETRY_LOOPS.RecognitionRestart`, within the session's restart budget), or the activity's failure.
 * A failing attempt keeps its progress for its retry as it ends (session-run.ts, `endRun`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isServiceError, type ServiceError } from '../../service/index.ts';
import { FAILURE, loopDelayMs, loopRetries, retryDelayMs } from '../../schemas/retry-table.ts';
import { classifyFailure } from '../failure-classifier.ts';
import { failureOf } from '../failure.ts';
import { metrics } from '../metrics.ts';
import {
  describeError,
  stagePartial,
  timeStillNeededMs,
  waitHeartbeating,
  type SessionRun,
} from './session-run.ts';
import type { StreamEnd } from './stream-from-resume.ts';

/** Returns when a new stream should start; throws the activity's failure when none should. */
export async function afterStreamError(
  run: SessionRun,
  failed: Extract<StreamEnd, { ok: false }>,
): Promise<void> {
  const { error } = failed;
  if (run.ctx?.cancellationSignal.aborted) throw error;
  const type = classifyFailure(error);
  if (isServiceError(error) && type === FAILURE.ServiceNoResource)
    return waitForFreeSession(run, error, failed.position);
  if (isServiceError(error) && !loopRetries('RecognitionRestart', type)) return giveUp(run, error);
  if (run.state.restarts >= run.input.maxRestarts) return restartsExhausted(run, error);
  return restart(run, error, failed.position);
}

/**
 * The account has no free session (spec 02: "wait and retry"): not the stream's fault, so no restart
 * is spent. Audio sent past the resume point (a 550 after the start) is sent again.
 */
async function waitForFreeSession(run: SessionRun, err: ServiceError, position: number): Promise<void> {
  const { state, input } = run;
  state.reStreamedSeconds += Math.max(0, position - state.resumeAt);
  run.noResourceWaits += 1;
  metrics.noResourceWait();
  const delay =
    retryDelayMs(FAILURE.ServiceNoResource, run.noResourceWaits, run.random, err.retryAfterMs) ?? 0;
  if (Date.now() + delay + timeStillNeededMs(run) > run.attemptDeadline) {
    // Waiting on would run this attempt out of time: the next attempt gets a whole timeout.
    throw failureOf(
      FAILURE.ServiceNoResource,
      `session ${input.session}: ${describeError(err)} ${run.noResourceWaits} times; the attempt has no time left to wait`,
      { nextRetryDelay: delay },
    );
  }
  run.ctx?.log.info('no free recognition session on the account; waiting', {
    session: input.session,
    waits: run.noResourceWaits,
    delayMs: delay,
  });
  await waitHeartbeating(run, delay);
}

/** A service error a new session cannot help: the activity fails with its type. */
async function giveUp(run: SessionRun, err: ServiceError): Promise<never> {
  const type = classifyFailure(err) ?? FAILURE.RecognitionFailed;
  const delay = retryDelayMs(type, run.ctx?.info.attempt ?? 1, Math.random, err.retryAfterMs);
  throw failureOf(type, `session ${run.input.session}: ${describeError(err)}`, { nextRetryDelay: delay });
}

async function restartsExhausted(run: SessionRun, err: unknown): Promise<never> {
  throw failureOf(
    FAILURE.RecognitionRestartsExhausted,
    `session ${run.input.session}: gave up after ${run.state.restarts} restarts; last error: ${describeError(err)}`,
  );
}

/** A new session from a start request, after the row's wait (a Retry-After replaces it). */
async function restart(run: SessionRun, err: unknown, position: number): Promise<void> {
  const { state, input } = run;
  // Audio past the resume point was sent but produced no kept result: it is sent again.
  state.reStreamedSeconds += Math.max(0, position - state.resumeAt);
  state.restarts += 1;
  metrics.restarted();
  state.restartReasons.push(describeError(err));
  run.ctx?.log.warn('recognition session failed; starting a new one from the last final result', {
    session: input.session,
    resumeAt: state.resumeAt,
    restarts: state.restarts,
    reason: describeError(err),
  });
  await stagePartial(run, true);
  const hint = isServiceError(err) ? err.retryAfterMs : undefined;
  const stepMs = run.deps.restartDelayMs;
  await sleep(
    loopDelayMs(
      'RecognitionRestart',
      state.restarts,
      run.random,
      hint,
      stepMs === undefined ? undefined : { kind: 'linear', stepMs },
    ),
  );
}
