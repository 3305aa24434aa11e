/**
 * One stream recognition session (spec 02, Recognition from stream, and its state table):
 *
 *   start ──► audio × n (240 ms each, paced, each after the previous response) ──► stop ──► `completed`
 *
 * with the `Unique-ID` header and the rotating `token` + load-balancer cookies on every request after
 * the start. Any error ends the session (spec 02: "restart from the start request"); the caller resumes
 * with a new session whose `startOffsetSeconds` is just after the last final result, and every time the
 * session reports is on the original timeline (offset + the service's session-relative time).
 *
 * Resume contract: the *caller* positions the audio (skips the bytes itself, e.g. an S3 range read from
 * `audioOffset(seconds).bytes`) and passes the matching `startOffsetSeconds`; the session sends what
 * it is given from its first byte.
 */
import {
  completedMessageSchema,
  recognizedMessageSchema,
  speechEndDetectedSchema,
  speechStartDetectedSchema,
  type RecognizedSentence,
  type ServerMessage,
  type TemporaryWord,
} from '../schemas/service-asr.ts';
import type { z } from 'zod';
import {
  audioOffset,
  bytesPerSample,
  bytesPerSecond,
  CHUNK_MS,
  chunkBytes,
  MAX_SESSION_SECONDS,
  rechunk,
  type AudioSource,
} from './audio.ts';
import type { ClientContext } from './context.ts';
import { CostMeter, type CallCost } from './cost.ts';
import { errorFromResponse, isServiceError, ServiceError } from './errors.ts';
import { EventQueue } from './event-queue.ts';
import { fixedPace } from './pace.ts';
import { Pacer } from './pacer.ts';
import { buildStartMessage, ASR_MODELS, type AudioCodec, type RecognitionOptions } from './start-message.ts';
import { AUDIO_CONTENT_TYPE, controlMessage, JSON_CONTENT_TYPE, StreamRequests } from './stream-requests.ts';

/** Time limit of the start and of each audio request: answers normally come in tens of ms. */
const DEFAULT_AUDIO_REQUEST_TIMEOUT_MS = 10_000;
/** Time limit of the stop request: its 200 comes "after all recognition is complete" (spec 02). */
const DEFAULT_STOP_TIMEOUT_MS = 120_000;
/** Spec 02: audio sent faster than the service accepts. */
const INTERVAL_TOO_BRIEF = 412;

/** A candidate sentence with times on the original timeline (seconds). */
interface TimedSentence {
  text: string;
  startSeconds: number;
  endSeconds: number;
  /** Confidence 0–1. */
  score: number | undefined;
  /** Katakana reading (only with `options.reading`). */
  reading: string | undefined;
}

/** A final result (`recognized` type 1): the best candidate, and all candidates when N-best. */
export interface RecognizedUtterance extends TimedSentence {
  alternatives: TimedSentence[];
}

export type StreamEvent =
  | { type: 'started'; uniqueId: string }
  | { type: 'speechStartDetected'; atSeconds: number }
  | { type: 'speechEndDetected'; atSeconds: number }
  /** `resultType` 0 interim, 1 final, 2 end marker (spec 02, Server message). */
  | { type: 'recognized'; resultType: number; sentences: TimedSentence[] }
  | { type: 'completed'; cause: string | undefined };

export interface StreamProgress {
  /** Audio sent in this session, seconds. */
  audioSecondsSent: number;
  /** Position on the original timeline: `startOffsetSeconds + audioSecondsSent`. */
  positionSeconds: number;
  /** End of the last final result on the original timeline (the resume point), if any. */
  lastFinalEndSeconds: number | undefined;
  finals: number;
  cost: CallCost;
}

interface StreamCallbacks {
  /** Every server event, times absolute. */
  onEvent?: (event: StreamEvent) => void;
  onSpeechStartDetected?: (atSeconds: number) => void;
  onSpeechEndDetected?: (atSeconds: number) => void;
  /** Every `recognized` message, type 0, 1 or 2. */
  onRecognized?: (event: Extract<StreamEvent, { type: 'recognized' }>) => void;
  /** Each final result, as soon as it arrives (heartbeat with its `endSeconds` as the resume point). */
  onFinal?: (utterance: RecognizedUtterance) => void;
  /** After every audio response: how far the session got (heartbeat material). */
  onProgress?: (progress: StreamProgress) => void;
}

export interface StreamRecognitionOptions {
  /** Raw audio (no WAV header) in `codec` at `sampleRate`, positioned at `startOffsetSeconds`. */
  audio: AudioSource;
  /** Default `mulaw`. */
  codec?: AudioCodec;
  /** Default 8000 for mu-law, the model's rate for PCM. */
  sampleRate?: number;
  /** Default: the config's `model`. */
  model?: string;
  /** Default: the config's `domainId`. */
  domainId?: string;
  options?: RecognitionOptions;
  /** Temporary dictionary, validated client-side (spec 02). */
  words?: readonly TemporaryWord[];
  /**
   * Where `audio` begins on the original timeline, seconds (resume). The caller skips the bytes itself;
   * use `audioOffset()` so bytes and seconds agree. Default 0.
   */
  startOffsetSeconds?: number;
  /** Pacing: real time × speed, fixed for this session. Default the client's pace (config `speed`). */
  speed?: number;
  /** Abort: the session is cancelled (best effort) and `done` rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Time limit of the start and each audio request; default 10 s. */
  requestTimeoutMs?: number;
  /** Time limit of the stop request; default 120 s. */
  stopTimeoutMs?: number;
  /** Longest audio of this session; default and maximum 3,000 s (spec 02). Beyond it the session stops with cause `max-duration`. */
  maxSessionSeconds?: number;
  callbacks?: StreamCallbacks;
  /** Adds this session's cost to an aggregate. */
  meter?: CostMeter;
}

/** Why the session ended without error. */
export type StopCause = 'end-of-audio' | 'max-duration' | 'cancelled';

export interface StreamSummary {
  uniqueId: string | undefined;
  model: string;
  startOffsetSeconds: number;
  /** `startOffsetSeconds + audioSecondsSent`: where a following session would start. */
  endOffsetSeconds: number;
  audioSecondsSent: number;
  /** Final results in order, times absolute. */
  results: RecognizedUtterance[];
  stopCause: StopCause;
  /** `msg.cause` of the `completed` message (`STOP`), when one came. */
  completedCause: string | undefined;
  /** Requests (start, audio, stop/cancel, token), retries, bytes. */
  cost: CallCost;
  durationMs: number;
}

function roundSeconds(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

/** Maps a session-relative sentence to the original timeline. */
export function toTimeline(sentence: RecognizedSentence, offsetSeconds: number): TimedSentence {
  return {
    text: sentence.surface,
    startSeconds: roundSeconds(offsetSeconds + sentence.startTime),
    endSeconds: roundSeconds(offsetSeconds + sentence.endTime),
    score: sentence.score,
    reading: sentence.reading,
  };
}

/** What a session fixes before its first request. */
interface SessionSetup {
  model: string;
  startMessage: ReturnType<typeof buildStartMessage>;
  /** The session's longest audio, in bytes. */
  maxBytes: number;
  requests: StreamRequests;
  pace: ReturnType<ClientContext['pace']['session']>;
  pacer: Pacer;
  /** Time limit of the start and each audio request. */
  timeoutMs: number;
  chunks: ReturnType<typeof rechunk>;
}

/** Where one run of a session is: open or not, why it stopped, how the service completed it. */
interface RunState {
  stopCause: StopCause;
  completedCause: string | undefined;
  completed: boolean;
  sessionOpen: boolean;
}

/**
 * A running session. Starts as soon as it is created (after a free session slot of the client's
 * limiter); iterate it for events, or use the callbacks, and await `done` for the summary.
 */
export class StreamSession implements AsyncIterable<StreamEvent> {
  /** Resolves with the summary, or rejects with a ServiceError (or the abort reason). */
  readonly done: Promise<StreamSummary>;
  readonly #ctx: ClientContext;
  readonly #opts: StreamRecognitionOptions;
  readonly #events = new EventQueue<StreamEvent>();
  readonly #meter: CostMeter;
  readonly #cancelPacing = new AbortController();
  #cancelRequested = false;
  #uniqueId: string | undefined;
  #audioBytesSent = 0;
  #bytesPerSecond = 1;
  #results: RecognizedUtterance[] = [];
  readonly #offset: number;

  constructor(ctx: ClientContext, options: StreamRecognitionOptions) {
    this.#ctx = ctx;
    this.#opts = options;
    this.#meter = new CostMeter(options.meter);
    this.#offset = options.startOffsetSeconds ?? 0;
    this.done = ctx.limiters.asrSessions(() => this.#run());
    this.done.then(
      () => this.#events.close(),
      (err: unknown) => this.#events.close(err),
    );
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamEvent> {
    return this.#events[Symbol.asyncIterator]();
  }

  /** The id the service gave this session, once started. */
  get uniqueId(): string | undefined {
    return this.#uniqueId;
  }

  /**
   * Ends the session early and cleanly: after the request in flight, a cancel request is sent (spec 02)
   * and `done` resolves with `stopCause: 'cancelled'` and the results so far.
   */
  cancel(): void {
    this.#cancelRequested = true;
    this.#cancelPacing.abort();
  }

  /** How far the session got; useful after a failure to know where to resume. */
  progress(): StreamProgress {
    const audioSecondsSent = this.#audioBytesSent / this.#bytesPerSecond;
    return {
      audioSecondsSent,
      positionSeconds: roundSeconds(this.#offset + audioSecondsSent),
      lastFinalEndSeconds: this.#results.at(-1)?.endSeconds,
      finals: this.#results.length,
      cost: this.#meter.snapshot(),
    };
  }

  async #run(): Promise<StreamSummary> {
    const started = performance.now();
    const s = this.#setUp();
    const run: RunState = {
      stopCause: 'end-of-audio',
      completedCause: undefined,
      completed: false,
      sessionOpen: false,
    };
    try {
      // Read the first chunk before starting: the first audio request is due within 1 s of the
      // start response (spec 02), and a source (ffmpeg, S3) may take longer than that to begin.
      const first = await s.chunks.next();
      if (first.done) return this.#summary(s.model, 'end-of-audio', undefined, started);
      this.#opts.signal?.throwIfAborted();
      await this.#start(s, run);
      await this.#streamAudio(s, run, first);
      if (this.#cancelRequested) {
        await this.#cancelSession(s, run);
        return this.#summary(s.model, run.stopCause, undefined, started);
      }
      await this.#stopSession(s, run);
      return this.#summary(s.model, run.stopCause, run.completedCause, started);
    } catch (err) {
      await this.#onFailure(err, s, run);
      throw err;
    } finally {
      s.pace.end();
      await s.chunks.return(undefined).catch(() => undefined);
    }
  }

  /** The session's fixed parts, from the options and the client's defaults; throws on invalid options. */
  #setUp(): SessionSetup {
    const o = this.#opts;
    const ctx = this.#ctx;
    const model = o.model ?? ctx.model;
    const codec = o.codec ?? 'mulaw';
    const sampleRate =
      o.sampleRate ?? (codec === 'mulaw' ? 8000 : ((ASR_MODELS as Record<string, number>)[model] ?? 16000));
    const startMessage = buildStartMessage({
      model,
      domainId: o.domainId ?? ctx.domainId,
      codec,
      sampleRate,
      options: o.options,
      words: o.words,
    });
    if (!(this.#offset >= 0) || !Number.isFinite(this.#offset)) {
      throw new ServiceError({
        kind: 'invalid',
        message: 'startOffsetSeconds must be a finite number ≥ 0',
        detail: 'startOffsetSeconds',
      });
    }
    const maxSeconds = Math.min(o.maxSessionSeconds ?? MAX_SESSION_SECONDS, MAX_SESSION_SECONDS);
    this.#bytesPerSecond = bytesPerSecond(codec, sampleRate);
    const maxBytes = audioOffset(maxSeconds, codec, sampleRate).bytes;
    const requests = new StreamRequests(ctx, this.#meter, model, () => this.#uniqueId);
    const pace = o.speed !== undefined ? fixedPace(o.speed).session() : ctx.pace.session();
    const pacer = new Pacer(CHUNK_MS, () => pace.rate());
    const timeoutMs = o.requestTimeoutMs ?? DEFAULT_AUDIO_REQUEST_TIMEOUT_MS;
    const chunks = rechunk(o.audio, chunkBytes(codec, sampleRate), bytesPerSample(codec));
    return { model, startMessage, maxBytes, requests, pace, pacer, timeoutMs, chunks };
  }

  /** The start request; the session is open once the service answers `started` with its id. */
  async #start(s: SessionSetup, run: RunState): Promise<void> {
    const { endpoint } = s.requests;
    const startAnswer = await s.requests.post(
      JSON.stringify(s.startMessage),
      JSON_CONTENT_TYPE,
      s.timeoutMs,
      this.#opts.signal,
    );
    // The id is msg.uniqueId of element 0 of the start answer (as the official sample clients read it).
    const first = startAnswer[0];
    if (!first || first.msg.msgname !== 'started' || !first.msg.uniqueId) {
      throw new ServiceError({
        kind: 'session',
        message: `${endpoint}: start answered without a started message and uniqueId`,
        endpoint,
        httpStatus: 200,
        detail: 'no started/uniqueId',
      });
    }
    run.sessionOpen = true;
    this.#handle(startAnswer, 'start', s, run);
    this.#ctx.logger.debug('recognition session started', {
      uniqueId: this.#uniqueId,
      model: s.model,
      startOffsetSeconds: this.#offset,
    });
  }

  /**
   * Audio requests, paced, each after the previous answer, until the audio ends, the session's longest
   * audio is sent (stop cause `max-duration`) or `cancel()` is called.
   */
  async #streamAudio(s: SessionSetup, run: RunState, first: IteratorResult<Buffer>): Promise<void> {
    const signal = this.#opts.signal;
    // One signal for every pacing wait of the session: AbortSignal.any per chunk cost a many-stream
    // worker's JavaScript thread its listeners, and their removal, on every request (bench/README.md).
    const pacingSignal = signal
      ? AbortSignal.any([signal, this.#cancelPacing.signal])
      : this.#cancelPacing.signal;
    let current = first;
    while (!current.done) {
      let chunk: Buffer = current.value;
      const room = s.maxBytes - this.#audioBytesSent;
      if (chunk.byteLength > room) chunk = chunk.subarray(0, room);
      // Prefetch the next chunk while this one is paced, sent and answered.
      const nextChunk = chunk.byteLength < current.value.byteLength ? undefined : s.chunks.next();
      nextChunk?.catch(() => undefined);
      if (this.#cancelRequested) return;
      try {
        await s.pacer.wait(pacingSignal);
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        if (!this.#cancelRequested) throw err;
        return;
      }
      s.pacer.sent();
      await this.#sendAudio(s, run, chunk);
      if (this.#audioBytesSent >= s.maxBytes) {
        const more = nextChunk === undefined || !(await nextChunk).done;
        if (more) run.stopCause = 'max-duration';
        return;
      }
      current = await nextChunk!;
    }
  }

  async #sendAudio(s: SessionSetup, run: RunState, chunk: Buffer): Promise<void> {
    const answer = await s.requests.post(chunk, AUDIO_CONTENT_TYPE, s.timeoutMs, this.#opts.signal);
    s.pace.accepted(chunk.byteLength / this.#bytesPerSecond);
    this.#audioBytesSent += chunk.byteLength;
    this.#handle(answer, 'audio', s, run);
    this.#callback(() => this.#opts.callbacks?.onProgress?.(this.progress()));
  }

  /** After `cancel()`: the cancel request (spec 02); what it answers besides `completed` still counts. */
  async #cancelSession(s: SessionSetup, run: RunState): Promise<void> {
    run.stopCause = 'cancelled';
    const answer = await s.requests.post(
      controlMessage('cancel'),
      JSON_CONTENT_TYPE,
      s.timeoutMs,
      this.#opts.signal,
    );
    run.sessionOpen = false;
    this.#handle(
      answer.filter((m) => m.msg.msgname !== 'completed'),
      'audio',
      s,
      run,
    );
  }

  /** The stop request, right away: it is due within 1 s of the last audio response (spec 02). */
  async #stopSession(s: SessionSetup, run: RunState): Promise<void> {
    const { endpoint } = s.requests;
    const answer = await s.requests.post(
      controlMessage('stop'),
      JSON_CONTENT_TYPE,
      this.#opts.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS,
      this.#opts.signal,
    );
    run.sessionOpen = false;
    this.#handle(answer, 'stop', s, run);
    if (!run.completed) {
      throw new ServiceError({
        kind: 'session',
        message: `${endpoint}: stop answered without a completed message`,
        endpoint,
        httpStatus: 200,
        detail: 'no completed after stop',
      });
    }
  }

  /**
   * The service ends a session itself on any error it answers (spec 02); a session we leave for a
   * reason of our own (abort, timeout, a throwing callback) is cancelled so it frees its slot.
   */
  async #onFailure(err: unknown, s: SessionSetup, run: RunState): Promise<void> {
    const answeredByService = isServiceError(err) && err.httpStatus !== undefined;
    if (run.sessionOpen && !answeredByService) await s.requests.cancelBestEffort();
    if (isServiceError(err)) err.cost = this.#meter.snapshot();
    if (isServiceError(err) && err.code === INTERVAL_TOO_BRIEF) s.pace.refused();
    if (isServiceError(err) || this.#opts.signal?.aborted) {
      this.#ctx.logger.debug('recognition session ended with an error', {
        uniqueId: this.#uniqueId,
        error: isServiceError(err) ? err.toJSON() : 'aborted',
        progress: this.progress(),
      });
    }
  }

  /** The server messages of one answer, in order: events, callbacks, final results, completion. */
  #handle(
    messages: ServerMessage[],
    during: 'start' | 'audio' | 'stop',
    s: SessionSetup,
    run: RunState,
  ): void {
    for (const message of messages) {
      const name = message.msg.msgname;
      if (name === 'started') {
        this.#uniqueId ??= message.msg.uniqueId;
        this.#emit({ type: 'started', uniqueId: message.msg.uniqueId ?? '' });
      } else if (name === 'speechStartDetected') {
        const m = speechStartDetectedSchema.parse(message);
        const atSeconds = roundSeconds(this.#offset + m.timeinfo.startDetectTime / 1000);
        this.#emit({ type: 'speechStartDetected', atSeconds });
        this.#callback(() => this.#opts.callbacks?.onSpeechStartDetected?.(atSeconds));
      } else if (name === 'speechEndDetected') {
        const m = speechEndDetectedSchema.parse(message);
        const atSeconds = roundSeconds(this.#offset + m.timeinfo.endDetectTime / 1000);
        this.#emit({ type: 'speechEndDetected', atSeconds });
        this.#callback(() => this.#opts.callbacks?.onSpeechEndDetected?.(atSeconds));
      } else if (name === 'recognized') {
        this.#onRecognized(recognizedMessageSchema.parse(message));
      } else if (name === 'completed') {
        this.#onCompleted(completedMessageSchema.parse(message), during, s.requests.endpoint, run);
      }
    }
  }

  #onRecognized(m: z.infer<typeof recognizedMessageSchema>): void {
    const sentences = m.result.sentence.map((sentence) => toTimeline(sentence, this.#offset));
    const event = { type: 'recognized' as const, resultType: m.result.type, sentences };
    this.#emit(event);
    this.#callback(() => this.#opts.callbacks?.onRecognized?.(event));
    if (m.result.type === 1 && sentences.length > 0) {
      const utterance: RecognizedUtterance = { ...sentences[0]!, alternatives: sentences };
      this.#results.push(utterance);
      this.#callback(() => this.#opts.callbacks?.onFinal?.(utterance));
    }
  }

  /** `completed` with an error, or before stop, ends the session with an error; after stop, it ends it. */
  #onCompleted(
    m: z.infer<typeof completedMessageSchema>,
    during: 'start' | 'audio' | 'stop',
    endpoint: string,
    run: RunState,
  ): void {
    if (m.errorinfo) {
      throw errorFromResponse({ family: 'asr', endpoint, httpStatus: 200, body: m });
    }
    if (during !== 'stop') {
      throw new ServiceError({
        kind: 'session',
        message: `${endpoint}: the service ended the session (cause ${m.msg.cause ?? 'none'}) before stop`,
        endpoint,
        detail: `completed with cause ${m.msg.cause ?? 'none'}`,
      });
    }
    run.completed = true;
    run.completedCause = m.msg.cause;
    this.#emit({ type: 'completed', cause: m.msg.cause });
  }

  #summary(
    model: string,
    stopCause: StopCause,
    completedCause: string | undefined,
    started: number,
  ): StreamSummary {
    const audioSecondsSent = this.#audioBytesSent / this.#bytesPerSecond;
    return {
      uniqueId: this.#uniqueId,
      model,
      startOffsetSeconds: this.#offset,
      endOffsetSeconds: roundSeconds(this.#offset + audioSecondsSent),
      audioSecondsSent,
      results: this.#results,
      stopCause,
      completedCause,
      cost: this.#meter.snapshot(),
      durationMs: Math.round(performance.now() - started),
    };
  }

  #emit(event: StreamEvent): void {
    this.#events.push(event);
    this.#callback(() => this.#opts.callbacks?.onEvent?.(event));
  }

  /** A throwing callback ends the session with that error: it is the caller's signal that something is wrong. */
  #callback(fn: () => void): void {
    fn();
  }
}
