/**
 * Recognition of one planned session (task queue `callpipe-asr`): streams the staged mu-law audio to
 * the service, and survives what a long stream meets.
 *
 * - A stream recognition error (spec 02: the session is dead after it) starts a new session from a
 *   start request, resuming just after the last final result, not from the beginning; the new session's
 *   times are mapped back onto the recording's clock by `startOffsetSeconds`.
 * - A worker crash: the final results so far are staged in object storage as they come (throttled), and
 *   the heartbeat carries the resume point; the retried attempt reads both and resumes there.
 * - Restarts per session are bounded; past the bound the activity fails with the last reason.
 *
 * The session's finished result is written to `resultKey`; an existing one is returned as is, so a
 * re-run starts no new recognition.
 */
import { ApplicationFailure } from '@temporalio/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import {
  audioOffset,
  isServiceError,
  type ServiceClient,
  type RecognizedUtterance,
} from '../../service/index.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { activityContext } from '../activity-context.ts';
import { FAILURE, RETRY_TABLE, retryDelayMs, type FailureType } from '../../schemas/retry-table.ts';
import { metrics } from '../metrics.ts';
import { partialResultKey } from '../../schemas/call-keys.ts';
import { temporaryWordSchema, type TemporaryWord } from '../../schemas/service-asr.ts';
import { STAGED_AUDIO_RANGE_BYTES } from '../../schemas/limits.ts';
import { roundSecondsToMs } from '../../schemas/units.ts';

/** Spec 02, Audio formats: the 8 kHz models take 8-bit mu-law. */
const CODEC = 'mulaw' as const;
const SAMPLE_RATE = 8000;
/** Models that take `baseParam.punctuation` (spec 02, Start parameters, behaviour 2). */
const PUNCTUATION_MODELS = new Set(['ja-gen_tf-16', 'ja-gen_tf-08', 'ja-mdl1_nrw-08', 'ja-mdl2_nrw-08']);

/**
 * What we ask recognition for: fillers kept (in brackets, which we drop: the text analysis step decides
 * what a filler is and records them), punctuation where the model offers it (sentences for the summary),
 * and no spaces between Japanese words (spec 02 recommends spaces for English only).
 */
export function recognitionOptionsFor(model: string) {
  const japanese = model.startsWith('ja-');
  return {
    filler: japanese,
    punctuation: PUNCTUATION_MODELS.has(model),
    delimiter: !japanese,
  };
}

/** `[えー]` → `えー`: the raw text keeps what was said. */
export function unbracketFillers(text: string): string {
  return text.replace(/\[([^\]]*)\]/g, '$1');
}

/**
 * Partial results are staged when this much audio has been recognized since the last write, or this
 * much wall time has passed: a crash re-streams at most about that much audio, or that much time at
 * pace (plus the heartbeat timeout), at the cost of one small PUT per interval per session. Each PUT
 * costs the worker about 0.25 ms of CPU (signing, the SDK's middleware): at real-time pacing every 5 s,
 * it was a tenth of a 512-stream worker's JavaScript thread (bench/realtime-scale.ts, issue 18).
 */
const PARTIAL_WRITE_AUDIO_SECONDS = 30;
const PARTIAL_WRITE_INTERVAL_MS = 15_000;
/**
 * Heartbeats are sent at most every sixth of the activity's heartbeat timeout, within these bounds.
 * Each one costs a payload encoding and a trip through the SDK's heartbeat pipeline; once per 240-ms
 * request it was a large share of the worker's CPU at 16 sessions × speed 100 (6,700 requests/s), and
 * once a second it was 8 % of a 512-stream worker's JavaScript thread at real time, while the server
 * hears of at most one per 80 % of the heartbeat timeout anyway (the SDK throttles).
 */
const HEARTBEAT_INTERVAL_MIN_MS = 200;
const HEARTBEAT_INTERVAL_MAX_MS = 5000;

export function heartbeatIntervalMs(heartbeatTimeoutMs: number | undefined): number {
  if (!heartbeatTimeoutMs) return HEARTBEAT_INTERVAL_MAX_MS;
  return Math.min(HEARTBEAT_INTERVAL_MAX_MS, Math.max(HEARTBEAT_INTERVAL_MIN_MS, heartbeatTimeoutMs / 6));
}
/**
 * Writing a finished session's result: the one loop that retries it (object storage requests are not
 * retried by the S3 client inside workers: schemas/retry-table.ts). It waits up to this long in all,
 * heartbeating each wait (each under the shortest heartbeat timeout we use, 5 s), because a failed write
 * would cost streaming everything since the last staged partial again, in real time. Past it, object
 * storage is down for longer than a restart: the session fails non-retryably (`SessionResultUnwritten`).
 */
export const RESULT_WRITE_BUDGET_MS = 5 * 60_000;
const RESULT_WRITE_MAX_DELAY_MS = 2000;
/**
 * Waiting for a free session (550 No Resource) stops while the attempt still has the time to stream the
 * rest of the session at pace, with this factor and margin for restarts and a slow start.
 */
const STREAM_TIME_SLACK = 1.2;
const STREAM_TIME_MARGIN_MS = 30_000;
/** Audio per stream request (spec 02: 240 ms): the grid a resumed stream starts on. */
const REQUEST_SECONDS = 0.24;
/** A resumed stream's finals ending this close to the resume point are the previous utterance's tail. */
const TAIL_SECONDS = 0.05;
/** Service error kinds after which a new session is worth a try (within the session's restart budget). */
const RESTARTABLE = new Set(['session', 'transient', 'rateLimited']);
/** The failure type of a service error a new session cannot help (schemas/retry-table.ts). */
const NOT_RESTARTABLE: Record<string, FailureType> = {
  auth: FAILURE.ServiceAuthFailed,
  invalid: FAILURE.ServiceInvalidRequest,
  quota: FAILURE.ServiceQuotaExhausted,
};

export const sessionUtteranceSchema = z.object({
  start: z.number(),
  end: z.number(),
  text: z.string(),
  score: z.number().optional(),
});
export type SessionUtterance = z.infer<typeof sessionUtteranceSchema>;

/** What recognizing a session has cost so far, and what it kept. */
const sessionProgressSchema = z.object({
  utterances: z.array(sessionUtteranceSchema),
  audioSecondsSent: z.number(),
  restarts: z.number().int(),
  reStreamedSeconds: z.number(),
  requests: z.number().int(),
  restartReasons: z.array(z.string()),
});

/** What a finished session leaves in object storage (claim check: the workflow gets only its key). */
export const sessionResultSchema = sessionProgressSchema.extend({
  session: z.number().int(),
  start: z.number(),
  end: z.number(),
});
export type SessionResult = z.infer<typeof sessionResultSchema>;

/** Staged progress of an unfinished session: the final results up to `resumeAt`. */
const partialSchema = sessionProgressSchema.extend({ resumeAt: z.number() });
type Partial = z.infer<typeof partialSchema>;

export interface RecognizeSessionInput {
  callId: string;
  session: number;
  /** Staged raw 8 kHz mu-law of the session (exactly (end − start) × 8,000 bytes). */
  audioKey: string;
  /** The session's range on the recording's clock, seconds. */
  start: number;
  end: number;
  /** Where the finished SessionResult goes. */
  resultKey: string;
  /** New sessions allowed after errors before the activity gives up. */
  maxRestarts: number;
  model?: string;
  /** A custom vocabulary (store's bucket, JSON words, cli/call-files.ts): every start request sends it. */
  wordsKey?: string;
}

export interface RecognizeSessionOutput {
  resultKey: string;
  utterances: number;
  audioSecondsSent: number;
  restarts: number;
  reStreamedSeconds: number;
  requests: number;
  /** True when the result was already there (nothing was streamed). */
  reused: boolean;
}

/** Heartbeat details: the resume point and counters, small and secret-free. */
export interface RecognizeHeartbeat {
  resumeAt: number;
  positionSeconds: number;
  utterances: number;
  restarts: number;
}

export interface AsrActivityDeps {
  service: ServiceClient;
  store: ObjectStore;
  /**
   * The slowest pace, × real time, the client may send at (its own pace decides: fixed, or `auto`): what
   * the time left of an attempt is judged by.
   */
  slowestPace: number;
  /** Recognition model when the input names none (the config's). */
  model: string;
  /** Wait before a new session after an error; grows with each restart. */
  restartDelayMs?: number;
  /** How long a finished session's result write is retried; default {@link RESULT_WRITE_BUDGET_MS}. */
  resultWriteBudgetMs?: number;
  /** Draws the jitter of waits (`Math.random`; tests fix it). */
  random?: () => number;
}

/** A failure of a type from the retry table, retryable as the table says. */
function failure(type: FailureType, message: string, nextRetryDelay?: number): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: !RETRY_TABLE[type].retryable,
    ...(nextRetryDelay !== undefined && RETRY_TABLE[type].retryable ? { nextRetryDelay } : {}),
  });
}

function describe(err: unknown): string {
  if (isServiceError(err))
    return `${err.kind} error ${err.code ?? err.httpStatus ?? ''}: ${err.message}`.trim();
  return err instanceof Error ? err.message : String(err);
}

export function createAsrActivities(deps: AsrActivityDeps) {
  const random = deps.random ?? Math.random;
  // A vocabulary is content-addressed (its key holds its digest): read once per worker process.
  const vocabularies = new Map<string, Promise<TemporaryWord[]>>();
  const wordsOf = (key: string | undefined): Promise<TemporaryWord[] | undefined> => {
    if (!key) return Promise.resolve(undefined);
    let words = vocabularies.get(key);
    if (!words) {
      words = deps.store.getText(key).then((text) => temporaryWordSchema.array().parse(JSON.parse(text)));
      words.catch(() => vocabularies.delete(key));
      vocabularies.set(key, words);
    }
    return words;
  };

  async function loadPartial(input: RecognizeSessionInput): Promise<Partial> {
    const fresh: Partial = {
      resumeAt: input.start,
      utterances: [],
      audioSecondsSent: 0,
      restarts: 0,
      reStreamedSeconds: 0,
      requests: 0,
      restartReasons: [],
    };
    if (!(await deps.store.exists(partialResultKey(input.resultKey)))) return fresh;
    const staged = partialSchema.parse(
      JSON.parse(await deps.store.getText(partialResultKey(input.resultKey))),
    );
    return staged.resumeAt > input.start && staged.resumeAt < input.end ? staged : fresh;
  }

  async function recognizeSession(input: RecognizeSessionInput): Promise<RecognizeSessionOutput> {
    const attemptStartedAt = Date.now();
    const ctx = activityContext();
    const existing = await deps.store.head(input.resultKey);
    if (existing) {
      const result = sessionResultSchema.parse(JSON.parse(await deps.store.getText(input.resultKey)));
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

    // A retried attempt (crash, timeout) resumes where the staged results end.
    const [state, words] = await Promise.all([loadPartial(input), wordsOf(input.wordsKey)]);
    if (ctx && ctx.info.attempt > 1 && state.resumeAt > input.start) {
      ctx.log.info('resuming session after a failed attempt', {
        session: input.session,
        resumeAt: state.resumeAt,
      });
    }
    // This attempt's end (its start-to-close timeout), and how long streaming the rest takes at pace.
    const attemptDeadline = ctx ? attemptStartedAt + ctx.info.startToCloseTimeoutMs : Infinity;
    const timeStillNeededMs = () =>
      ((input.end - state.resumeAt) / deps.slowestPace) * 1000 * STREAM_TIME_SLACK + STREAM_TIME_MARGIN_MS;
    let noResourceWaits = 0;
    const heartbeatEveryMs = heartbeatIntervalMs(ctx?.info.heartbeatTimeoutMs);
    const heartbeatNow = (positionSeconds: number) =>
      ctx?.heartbeat({
        resumeAt: state.resumeAt,
        positionSeconds,
        utterances: state.utterances.length,
        restarts: state.restarts,
      } satisfies RecognizeHeartbeat);
    /** Waits `ms`, heartbeating (so the wait is not taken for a dead worker) and ending on cancellation. */
    const waitHeartbeating = async (ms: number) => {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        heartbeatNow(state.resumeAt);
        await sleep(Math.min(heartbeatEveryMs, until - Date.now()), undefined, {
          signal: ctx?.cancellationSignal,
        });
      }
    };
    let lastPartialWrite = Date.now();
    let lastHeartbeat = 0;
    let lastPartialAt = state.resumeAt;
    let partialWriting: Promise<void> = Promise.resolve();
    const stagePartial = (force = false) => {
      const due =
        state.resumeAt - lastPartialAt >= PARTIAL_WRITE_AUDIO_SECONDS ||
        Date.now() - lastPartialWrite >= PARTIAL_WRITE_INTERVAL_MS;
      if (!force && !due) return partialWriting;
      lastPartialWrite = Date.now();
      lastPartialAt = state.resumeAt;
      const snapshot = JSON.stringify(state);
      // A failed write (S3 restarting) costs only resume precision: the next one carries a newer
      // snapshot. It must never reject unobserved: an unhandled rejection ends the worker process.
      partialWriting = partialWriting
        .then(() =>
          deps.store.put(partialResultKey(input.resultKey), snapshot, { contentType: 'application/json' }),
        )
        .catch((err: unknown) => {
          ctx?.log.warn('could not stage partial results; the next write will', {
            session: input.session,
            reason: describe(err),
          });
        });
      return partialWriting;
    };

    for (;;) {
      // A resumed stream starts on the session's request grid, up to 240 ms before the resume point:
      // the service frames audio from a stream's start, so on the same grid it hears the very same
      // requests as a stream that never broke and places every later utterance at the same times
      // (off the grid, edges moved by a few ms). Finals ending by the resume point are the tail of the
      // last kept one and are dropped.
      const resumeAt = state.resumeAt;
      const onGrid = Math.floor((resumeAt - input.start) / REQUEST_SECONDS + 1e-9) * REQUEST_SECONDS;
      const offset = audioOffset(onGrid, CODEC, SAMPLE_RATE);
      const streamStart = input.start + offset.seconds;
      if (resumeAt > input.start) state.reStreamedSeconds += Math.max(0, resumeAt - streamStart);
      let position = streamStart;
      // In bounded ranges, each read as the stream needs it: a session of an hour holds no S3 socket
      // between reads, so the pool never caps open sessions and writes never queue behind reads.
      const audio = await deps.store.getStream(input.audioKey, {
        start: offset.bytes,
        rangeBytes: STAGED_AUDIO_RANGE_BYTES,
      });
      metrics.streamOpened();
      const session = deps.service.recognizeStream({
        audio,
        codec: CODEC,
        sampleRate: SAMPLE_RATE,
        model: input.model,
        options: recognitionOptionsFor(input.model ?? deps.model),
        ...(words ? { words } : {}),
        startOffsetSeconds: streamStart,
        signal: ctx?.cancellationSignal,
        callbacks: {
          onFinal: (u: RecognizedUtterance) => {
            // A resumed stream starts at the end of the last kept final: anything ending right there is
            // that utterance's tail, already kept.
            if (resumeAt > input.start && u.endSeconds <= resumeAt + TAIL_SECONDS) return;
            state.utterances.push({
              start: u.startSeconds,
              end: u.endSeconds,
              text: unbracketFillers(u.text),
              ...(u.score !== undefined ? { score: u.score } : {}),
            });
            state.resumeAt = Math.max(state.resumeAt, u.endSeconds);
            void stagePartial();
          },
          onProgress: (p) => {
            position = p.positionSeconds;
            const now = Date.now();
            if (now - lastHeartbeat < heartbeatEveryMs) return;
            lastHeartbeat = now;
            heartbeatNow(p.positionSeconds);
          },
        },
      });
      try {
        const summary = await session.done;
        metrics.streamClosed();
        metrics.requestsOk('asr/stream', summary.cost.requests);
        metrics.audioRecognized(summary.audioSecondsSent);
        state.audioSecondsSent += summary.audioSecondsSent;
        state.requests += summary.cost.requests;
        break;
      } catch (err) {
        metrics.streamClosed();
        metrics.requestsOk('asr/stream', (isServiceError(err) && err.cost ? err.cost.requests : 1) - 1);
        metrics.requestFailed('asr/stream', err);
        if (isServiceError(err) && err.cost) state.requests += err.cost.requests;
        state.audioSecondsSent += Math.max(0, position - streamStart);
        if (ctx?.cancellationSignal.aborted) throw err;
        if (isServiceError(err) && err.kind === 'noResource') {
          // The account has no free session (spec 02: "wait and retry"): not the stream's fault, so no
          // restart is spent. Audio sent past the resume point (a 550 after the start) is sent again.
          state.reStreamedSeconds += Math.max(0, position - state.resumeAt);
          noResourceWaits += 1;
          metrics.noResourceWait();
          const delay =
            retryDelayMs(FAILURE.ServiceNoResource, noResourceWaits, random, err.retryAfterMs) ?? 0;
          if (Date.now() + delay + timeStillNeededMs() > attemptDeadline) {
            // Waiting on would run this attempt out of time: the next attempt gets a whole timeout.
            await stagePartial(true);
            throw failure(
              FAILURE.ServiceNoResource,
              `session ${input.session}: ${describe(err)} ${noResourceWaits} times; the attempt has no time left to wait`,
              delay,
            );
          }
          ctx?.log.info('no free recognition session on the account; waiting', {
            session: input.session,
            waits: noResourceWaits,
            delayMs: delay,
          });
          await waitHeartbeating(delay);
          continue;
        }
        if (isServiceError(err) && !RESTARTABLE.has(err.kind)) {
          await stagePartial(true);
          const type = NOT_RESTARTABLE[err.kind] ?? FAILURE.RecognitionFailed;
          const delay = retryDelayMs(type, ctx?.info.attempt ?? 1, Math.random, err.retryAfterMs);
          throw failure(type, `session ${input.session}: ${describe(err)}`, delay);
        }
        if (state.restarts >= input.maxRestarts) {
          await stagePartial(true);
          throw failure(
            FAILURE.RecognitionRestartsExhausted,
            `session ${input.session}: gave up after ${state.restarts} restarts; last error: ${describe(err)}`,
          );
        }
        // Audio past the resume point was sent but produced no kept result: it is sent again.
        state.reStreamedSeconds += Math.max(0, position - state.resumeAt);
        state.restarts += 1;
        metrics.restarted();
        state.restartReasons.push(describe(err));
        ctx?.log.warn('recognition session failed; starting a new one from the last final result', {
          session: input.session,
          resumeAt: state.resumeAt,
          restarts: state.restarts,
          reason: describe(err),
        });
        await stagePartial(true);
        const delay =
          (isServiceError(err) && err.retryAfterMs) || (deps.restartDelayMs ?? 200) * state.restarts;
        await sleep(delay);
      }
    }

    await partialWriting.catch(() => {});
    const result: SessionResult = {
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
    // The session's results exist only in memory now: a failed write would cost streaming (in real
    // time) everything since the last staged partial, so ride out an object store that restarts.
    const body = JSON.stringify(result);
    const writeUntil = Date.now() + (deps.resultWriteBudgetMs ?? RESULT_WRITE_BUDGET_MS);
    for (let attempt = 1; ; attempt++) {
      try {
        await deps.store.put(input.resultKey, body, { contentType: 'application/json' });
        break;
      } catch (err) {
        if (ctx?.cancellationSignal.aborted) throw err;
        if (Date.now() >= writeUntil) {
          throw failure(
            FAILURE.SessionResultUnwritten,
            `session ${input.session}: its result could not be written to object storage after ${attempt} tries: ${describe(err)}`,
          );
        }
        ctx?.log.warn('could not write the session result; trying again', {
          session: input.session,
          attempt,
          reason: describe(err),
        });
        // Heartbeat while waiting, so the activity is not taken for dead meanwhile.
        heartbeatNow(input.end);
        await sleep(Math.min(RESULT_WRITE_MAX_DELAY_MS, 250 * 2 ** (attempt - 1)));
      }
    }
    return {
      resultKey: input.resultKey,
      utterances: result.utterances.length,
      audioSecondsSent: result.audioSecondsSent,
      restarts: result.restarts,
      reStreamedSeconds: result.reStreamedSeconds,
      requests: result.requests,
      reused: false,
    };
  }

  return { recognizeSession };
}

export type AsrActivities = ReturnType<typeof createAsrActivities>;
