/**
 * One recognition stream of a session, from its resume point to its end or its first error, keeping
 * every new final result in the run's progress as it comes.
 */
import { audioOffset, isServiceError, type RecognizedUtterance } from '../../service/index.ts';
import { STAGED_AUDIO_RANGE_BYTES, STAGED_AUDIO_READ_AHEAD_BYTES } from '../../schemas/limits.ts';
import { metrics } from '../metrics.ts';
import { recognitionOptionsFor, unbracketFillers } from './recognition-options.ts';
import { heartbeatThrottled, stagePartial, type SessionRun } from './session-run.ts';
import type { RecognizeSessionInput } from './session-types.ts';
import { sessionByteRange } from '../../schemas/media-transcode.ts';

/** Spec 02, Audio formats: the 8 kHz models take 8-bit mu-law. */
const CODEC = 'mulaw' as const;
const SAMPLE_RATE = 8000;
/** Audio per stream request (spec 02: 240 ms): the grid a resumed stream starts on. */
const REQUEST_SECONDS = 0.24;
/** A resumed stream's finals ending this close to the resume point are the previous utterance's tail. */
const TAIL_SECONDS = 0.05;

/**
 * The bytes of the audio object a stream reads: from `fromSession` bytes into the session to the
 * session's end (an inclusive `end`), placed by where the object starts on the recording's clock (a
 * track holds the whole recording; an object of the session alone starts at the session).
 */
export function sessionBytes(
  input: Pick<RecognizeSessionInput, 'start' | 'end' | 'audioStart'>,
  fromSession: number,
): { start: number; end: number } {
  const range = sessionByteRange(input);
  return { start: range.start + fromSession, end: range.end - 1 };
}

/** How a stream ended: done, or failed with `error` after sending audio up to `position`. */
export type StreamEnd = { ok: true } | { ok: false; error: unknown; streamStart: number; position: number };

/**
 * A resumed stream starts on the session's request grid, up to 240 ms before the resume point: the
 * service frames audio from a stream's start, so on the same grid it hears the very same requests as a
 * stream that never broke and places every later utterance at the same times (off the grid, edges moved
 * by a few ms). Finals ending by the resume point are the tail of the last kept one and are dropped.
 */
export async function streamFromResumePoint(run: SessionRun): Promise<StreamEnd> {
  const { input, state, deps } = run;
  const resumeAt = state.resumeAt;
  const onGrid = Math.floor((resumeAt - input.start) / REQUEST_SECONDS + 1e-9) * REQUEST_SECONDS;
  const offset = audioOffset(onGrid, CODEC, SAMPLE_RATE);
  const streamStart = input.start + offset.seconds;
  if (resumeAt > input.start) state.reStreamedSeconds += Math.max(0, resumeAt - streamStart);
  let position = streamStart;
  // In bounded ranges, each read as the stream needs it: a session of an hour holds no S3 socket
  // between reads, so the pool never caps open sessions and writes never queue behind reads.
  const audio = await deps.store.getStream(input.audioKey, {
    ...sessionBytes(input, offset.bytes),
    rangeBytes: deps.stagedAudioRangeBytes ?? STAGED_AUDIO_RANGE_BYTES,
    readAheadBytes: STAGED_AUDIO_READ_AHEAD_BYTES,
  });
  metrics.streamOpened();
  const session = deps.service.recognizeStream({
    audio,
    codec: CODEC,
    sampleRate: SAMPLE_RATE,
    model: input.model,
    options: recognitionOptionsFor(input.model ?? deps.model),
    ...(run.words ? { words: run.words } : {}),
    startOffsetSeconds: streamStart,
    signal: run.ctx?.cancellationSignal,
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
        void stagePartial(run);
      },
      onProgress: (p) => {
        position = p.positionSeconds;
        heartbeatThrottled(run, p.positionSeconds);
      },
    },
  });
  try {
    const summary = await session.done;
    metrics.streamClosed();
    metrics.requestsOk('asr/stream', summary.cost.requests);
    metrics.audioRecognized(summary.audioSecondsSent);
    metrics.audioStreamed(summary.audioSecondsSent);
    state.audioSecondsSent += summary.audioSecondsSent;
    state.requests += summary.cost.requests;
    return { ok: true };
  } catch (error) {
    metrics.streamClosed();
    metrics.requestsOk('asr/stream', (isServiceError(error) && error.cost ? error.cost.requests : 1) - 1);
    metrics.requestFailed('asr/stream', error);
    if (isServiceError(error) && error.cost) state.requests += error.cost.requests;
    metrics.audioStreamed(position - streamStart);
    state.audioSecondsSent += Math.max(0, position - streamStart);
    return { ok: false, error, streamStart, position };
  }
}
