/**
 * A session's finished result in object storage: reused when it is already there (a re-run starts no
 * new recognition), and otherwise written within the retry table's `SessionResultWrite` budget.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { FAILURE, loopDelayMs, RETRY_LOOPS } from '../../schemas/retry-table.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { failureOf } from '../failure.ts';
import { describeError, heartbeatThrottled, type SessionRun } from './session-run.ts';
import {
  sessionResultSchema,
  type RecognizeSessionInput,
  type RecognizeSessionOutput,
  type SessionResult,
} from './session-types.ts';
import { roundSecondsToMs } from '../../schemas/units.ts';

/**
 * Writing a finished session's result: the one loop that retries it (object storage requests are not
 * retried by the S3 client inside workers: schemas/retry-table.ts). It waits up to this long in all,
 * heartbeating through the waits (each under the shortest heartbeat timeout we use, 5 s), because a failed write
 * would cost streaming everything since the last staged partial again, in real time. Past it, object
 * storage is down for longer than a restart: the session fails non-retryably (`SessionResultUnwritten`).
 */
export const RESULT_WRITE_BUDGET_MS = RETRY_LOOPS.SessionResultWrite.budget.ms;

/** The output of a session whose result is already stored, or undefined when there is none. */
export async function reusedResult(
  store: ObjectStore,
  input: RecognizeSessionInput,
): Promise<RecognizeSessionOutput | undefined> {
  if (!(await store.head(input.resultKey))) return undefined;
  const result = sessionResultSchema.parse(JSON.parse(await store.getText(input.resultKey)));
  return {
    resultKey: input.resultKey,
    utterances: result.utterances.length,
    audioSecondsSent: 0,
    restarts: result.restarts,
    reStreamedSeconds: result.reStreamedSeconds,
    requests: 0,
    reused: true,
  };
}

/** The run's progress as the session's result, once its last checkpoint write has ended. */
export async function finishedResult(run: SessionRun): Promise<SessionResult> {
  await run.checkpoint.stage();
  const { input, state } = run;
  return {
    session: input.session,
    start: input.start,
    end: input.end,
    utterances: state.utterances,
    audioSecondsSent: roundSecondsToMs(state.audioSecondsSent),
    restarts: state.restarts,
    reStreamedSeconds: roundSecondsToMs(state.reStreamedSeconds),
    requests: state.requests,
    restartReasons: state.restartReasons,
  };
}

/**
 * The session's results exist only in memory now: a failed write would cost streaming (in real time)
 * everything since the last staged partial, so ride out an object store that restarts.
 */
export async function writeSessionResult(run: SessionRun, result: SessionResult): Promise<void> {
  const { input, ctx } = run;
  await writeWithinBudget(run.deps.store, input.resultKey, JSON.stringify(result), {
    budgetMs: run.deps.resultWriteBudgetMs ?? RESULT_WRITE_BUDGET_MS,
    what: `session ${input.session}`,
    signal: ctx?.cancellationSignal,
    warn: (attempt, reason) =>
      ctx?.log.warn('could not write the session result; trying again', {
        session: input.session,
        attempt,
        reason,
      }),
    // Heartbeat while waiting, so the activity is not taken for dead meanwhile.
    onWait: () => heartbeatThrottled(run, input.end),
  });
}

/**
 * Writes a result that exists only in memory (a session's, a group of pieces'), riding out an object
 * store that restarts for up to `budgetMs` (the retry table's `SessionResultWrite` loop); past it, fails
 * non-retryably (`SessionResultUnwritten`).
 */
export async function writeWithinBudget(
  store: ObjectStore,
  key: string,
  body: string,
  options: {
    budgetMs: number;
    what: string;
    signal?: AbortSignal | undefined;
    warn?: (attempt: number, reason: string) => void;
    onWait?: () => void;
  },
): Promise<void> {
  const writeUntil = Date.now() + options.budgetMs;
  for (let attempt = 1; ; attempt++) {
    try {
      await store.put(key, body, { contentType: 'application/json' });
      return;
    } catch (err) {
      if (options.signal?.aborted) throw err;
      if (Date.now() >= writeUntil) {
        throw failureOf(
          FAILURE.SessionResultUnwritten,
          `${options.what}: its result could not be written to object storage after ${attempt} tries: ${describeError(err)}`,
        );
      }
      options.warn?.(attempt, describeError(err));
      options.onWait?.();
      await sleep(loopDelayMs('SessionResultWrite', attempt));
    }
  }
}

/** What the workflow gets of a session it recognized now. */
export function outputOf(result: SessionResult, resultKey: string): RecognizeSessionOutput {
  return {
    resultKey,
    utterances: result.utterances.length,
    audioSecondsSent: result.audioSecondsSent,
    restarts: result.restarts,
    reStreamedSeconds: result.reStreamedSeconds,
    requests: result.requests,
    reused: false,
  };
}
