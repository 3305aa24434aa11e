/**
 * Recognition of one planned session (task queue `callpipe-asr`): streams the staged mu-law audio to
 * the service, and survives what a long stream meets.
 *
 * - A stream recognition error (spec 02: the session is dead after it) starts a new session from a
 *   start request, resuming just after the last final result, not from the beginning; the new session's
 *   times are mapped back onto the recording's clock by `startOffsetSeconds` (stream-from-resume.ts).
 * - A worker crash: the final results so far are kept in the call's checkpoint in object storage as
 *   they come (every 30 s of each session's audio, one object per call and process: checkpoint-book.ts);
 *   the account's session budget fails the lost attempt once the worker stops renewing with it
 *   (workflows/session-budget.ts), or its heartbeat timeout does, and the retried attempt resumes where
 *   the kept results end (session-run.ts).
 * - Restarts per session are bounded; past the bound the activity fails with the last reason
 *   (after-stream-error.ts, from the retry table's rows).
 *
 * The session's finished result is written to `resultKey`; an existing one is returned as is, so a
 * re-run starts no new recognition (session-result.ts).
 */
import { temporaryWordSchema, type TemporaryWord } from '../../schemas/service-asr.ts';
import { afterStreamError } from './after-stream-error.ts';
import { finishedResult, outputOf, reusedResult, writeSessionResult } from './session-result.ts';
import { createCheckpointBook } from './checkpoint-book.ts';
import { endRun, startRun, type SessionRun } from './session-run.ts';
import type { AsrActivityDeps, RecognizeSessionInput, RecognizeSessionOutput } from './session-types.ts';
import { streamFromResumePoint } from './stream-from-resume.ts';
import { createPiecesActivities } from './pieces-activities.ts';
import { fileRate } from './file-rate.ts';

export { RESULT_WRITE_BUDGET_MS } from './session-result.ts';
export {
  sessionResultSchema,
  type AsrActivityDeps,
  type RecognizeSessionInput,
  type RecognizeSessionOutput,
  type SessionResult,
} from './session-types.ts';

export function createAsrActivities(activityDeps: AsrActivityDeps) {
  // One book per process: a call's sessions streaming here share one checkpoint object.
  const deps = {
    ...activityDeps,
    checkpoints: activityDeps.checkpoints ?? createCheckpointBook(activityDeps.store),
  };
  const wordsOf = vocabularyReader(deps);

  async function recognizeSession(input: RecognizeSessionInput): Promise<RecognizeSessionOutput> {
    const attemptStartedAt = Date.now();
    const reused = await reusedResult(deps.store, input);
    if (reused) return reused;
    const run = await startRun(deps, input, wordsOf(input.wordsKey), attemptStartedAt);
    let finished = false;
    try {
      await streamUntilDone(run);
      const result = await finishedResult(run);
      await writeSessionResult(run, result);
      finished = true;
      return outputOf(result, input.resultKey);
    } finally {
      await endRun(run, finished);
    }
  }

  const pieces = createPiecesActivities(
    { ...deps, leases: deps.pieceLeases, maxInFlight: deps.maxPiecesInFlight },
    wordsOf,
  );

  /** `recognition: auto`'s question: this process's running real-time factor of file requests. */
  async function fileRecognitionRate(input: {
    model?: string;
  }): Promise<{ rtf: number; requests: number } | null> {
    return fileRate(input.model ?? deps.model) ?? null;
  }

  return { recognizeSession, fileRecognitionRate, ...pieces };
}

/** Streams from the resume point until a stream ends well; each failed one waits, restarts or throws. */
async function streamUntilDone(run: SessionRun): Promise<void> {
  for (;;) {
    const end = await streamFromResumePoint(run);
    if (end.ok) return;
    await afterStreamError(run, end);
  }
}

/** A vocabulary is content-addressed (its key holds its digest): read once per worker process. */
function vocabularyReader(deps: AsrActivityDeps) {
  const vocabularies = new Map<string, Promise<TemporaryWord[]>>();
  return (key: string | undefined): Promise<TemporaryWord[] | undefined> => {
    if (!key) return Promise.resolve(undefined);
    let words = vocabularies.get(key);
    if (!words) {
      words = deps.store.getText(key).then((text) => temporaryWordSchema.array().parse(JSON.parse(text)));
      words.catch(() => vocabularies.delete(key));
      vocabularies.set(key, words);
    }
    return words;
  };
}

export type AsrActivities = ReturnType<typeof createAsrActivities>;
