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
  serverMessagesSchema,
  speechEndDetectedSchema,
  speechStartDetectedSchema,
  type RecognizedSentence,
  type ServerMessage,
  type TemporaryWord,
} from '../schemas/service-asr.ts';
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
import { CookieJar } from './cookie-jar.ts';
import { CostMeter, type CallCost } from './cost.ts';
import { errorFromResponse, errorFromSchema, isServiceError, ServiceError } from './errors.ts';
import { EventQueue } from './event-queue.ts';
import { parseJson, sendRequest } from './http.ts';
import { fixedPace } from './pace.ts';
import { Pacer } from './pacer.ts';
import { buildStartMessage, ASR_MODELS, type AudioCodec, type RecognitionOptions } from './start-message.ts';
import { withToken, type AccessToken } from './tokens.ts';

/** First audio request within 1 s of the start response; stop/cancel within 1 s of the last audio response (spec 02, Limits). */
export const SESSION_DEADLINE_MS = 1000;
/** Time limit of the start and of each audio request: answers normally come in tens of ms. */
export const DEFAULT_AUDIO_REQUEST_TIMEOUT_MS = 10_000;
/** Time limit of the stop request: its 200 comes "after all recognition is complete" (spec 02). */
export const DEFAULT_STOP_TIMEOUT_MS = 120_000;
/** Time limit of a cancel request sent while aborting (best effort). */
export const CANCEL_TIMEOUT_MS = 2_000;
/** Spec 02: audio sent faster than the service accepts. */
const INTERVAL_TOO_BRIEF = 412;

/** A candidate sentence with times on the original timeline (seconds). */
export interface TimedSentence {
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

export interface StreamCallbacks {
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
    const endpoint = `/asr/v1/speech_recognition/${model}`;
    const url = `${ctx.asrBaseUrl}${endpoint}`;
    const jar = new CookieJar();
    const pace = o.speed !== undefined ? fixedPace(o.speed).session() : ctx.pace.session();
    const pacer = new Pacer(CHUNK_MS, () => pace.rate());
    const signal = o.signal;
    const timeoutMs = o.requestTimeoutMs ?? DEFAULT_AUDIO_REQUEST_TIMEOUT_MS;
    const chunks = rechunk(o.audio, chunkBytes(codec, sampleRate), bytesPerSample(codec));
    let stopCause: StopCause = 'end-of-audio';
    let completedCause: string | undefined;
    let completed = false;

    const post = (
      body: string | Uint8Array,
      contentType: string,
      requestTimeoutMs: number,
      requestSignal: AbortSignal | undefined,
    ) =>
      withToken(ctx.tokens, this.#meter, async (token: AccessToken) => {
        const headers: Record<string, string> = {
          Connection: 'Keep-Alive',
          'Content-Type': contentType,
          Authorization: `Bearer ${token.value.reveal()}`,
        };
        if (this.#uniqueId !== undefined) headers['Unique-ID'] = this.#uniqueId;
        const cookie = jar.headerFor(url);
        if (cookie !== undefined) headers.Cookie = cookie;
        const res = await sendRequest({
          url,
          headers,
          body,
          endpoint,
          family: 'asr',
          timeoutMs: requestTimeoutMs,
          signal: requestSignal,
          meter: this.#meter,
        });
        // Cookies rotate with every response, error responses included.
        jar.setFromResponse(url, res.headers.getSetCookie());
        if (res.status === 204) return [];
        const parsedBody = parseJson(res.text);
        if (res.status !== 200) {
          throw errorFromResponse({
            family: 'asr',
            endpoint,
            httpStatus: res.status,
            body: parsedBody,
            retryAfter: res.headers.get('retry-after'),
          });
        }
        const messages = serverMessagesSchema.safeParse(parsedBody);
        if (!messages.success) throw errorFromSchema(endpoint, messages.error.issues, res.status);
        return messages.data;
      });

    const handle = (messages: ServerMessage[], during: 'start' | 'audio' | 'stop'): void => {
      for (const message of messages) {
        const name = message.msg.msgname;
        if (name === 'started') {
          this.#uniqueId ??= message.msg.uniqueId;
          this.#emit({ type: 'started', uniqueId: message.msg.uniqueId ?? '' });
        } else if (name === 'speechStartDetected') {
          const m = speechStartDetectedSchema.parse(message);
          const atSeconds = roundSeconds(this.#offset + m.timeinfo.startDetectTime / 1000);
          this.#emit({ type: 'speechStartDetected', atSeconds });
          this.#callback(() => o.callbacks?.onSpeechStartDetected?.(atSeconds));
        } else if (name === 'speechEndDetected') {
          const m = speechEndDetectedSchema.parse(message);
          const atSeconds = roundSeconds(this.#offset + m.timeinfo.endDetectTime / 1000);
          this.#emit({ type: 'speechEndDetected', atSeconds });
          this.#callback(() => o.callbacks?.onSpeechEndDetected?.(atSeconds));
        } else if (name === 'recognized') {
          const m = recognizedMessageSchema.parse(message);
          const sentences = m.result.sentence.map((s) => toTimeline(s, this.#offset));
          const event = { type: 'recognized' as const, resultType: m.result.type, sentences };
          this.#emit(event);
          this.#callback(() => o.callbacks?.onRecognized?.(event));
          if (m.result.type === 1 && sentences.length > 0) {
            const utterance: RecognizedUtterance = { ...sentences[0]!, alternatives: sentences };
            this.#results.push(utterance);
            this.#callback(() => o.callbacks?.onFinal?.(utterance));
          }
        } else if (name === 'completed') {
          const m = completedMessageSchema.parse(message);
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
          completed = true;
          completedCause = m.msg.cause;
          this.#emit({ type: 'completed', cause: m.msg.cause });
        }
      }
    };

    let sessionOpen = false;
    let nextChunk: Promise<IteratorResult<Buffer>> | undefined;
    try {
      // Read the first chunk before starting: the first audio request is due within 1 s of the
      // start response (spec 02), and a source (ffmpeg, S3) may take longer than that to begin.
      nextChunk = chunks.next();
      let current: IteratorResult<Buffer> = await nextChunk;
      if (current.done) {
        return this.#summary(model, 'end-of-audio', undefined, started);
      }
      signal?.throwIfAborted();

      const startAnswer = await post(
        JSON.stringify(startMessage),
        'application/json; charset=UTF-8',
        timeoutMs,
        signal,
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
      sessionOpen = true;
      handle(startAnswer, 'start');
      ctx.logger.debug('recognition session started', {
        uniqueId: this.#uniqueId,
        model,
        startOffsetSeconds: this.#offset,
      });

      // One signal for every pacing wait of the session: AbortSignal.any per chunk was 4 % of a
      // 512-stream worker's JavaScript thread (its listeners, and their removal, on every request).
      const pacingSignal = signal
        ? AbortSignal.any([signal, this.#cancelPacing.signal])
        : this.#cancelPacing.signal;
      while (!current.done) {
        let chunk: Buffer = current.value;
        const room = maxBytes - this.#audioBytesSent;
        if (chunk.byteLength > room) chunk = chunk.subarray(0, room);
        // Prefetch the next chunk while this one is paced, sent and answered.
        nextChunk = chunk.byteLength < current.value.byteLength ? undefined : chunks.next();
        nextChunk?.catch(() => undefined);
        if (this.#cancelRequested) break;
        try {
          await pacer.wait(pacingSignal);
        } catch (err) {
          if (signal?.aborted) throw signal.reason;
          if (!this.#cancelRequested) throw err;
          break;
        }
        pacer.sent();
        const answer = await post(chunk, 'application/octet-stream', timeoutMs, signal);
        pace.accepted(chunk.byteLength / this.#bytesPerSecond);
        this.#audioBytesSent += chunk.byteLength;
        handle(answer, 'audio');
        this.#callback(() => o.callbacks?.onProgress?.(this.progress()));
        if (this.#audioBytesSent >= maxBytes) {
          const more = nextChunk === undefined || !(await nextChunk).done;
          if (more) stopCause = 'max-duration';
          break;
        }
        current = await nextChunk!;
      }

      if (this.#cancelRequested) {
        stopCause = 'cancelled';
        const answer = await post(
          JSON.stringify({ msg: { msgname: 'cancel' } }),
          'application/json; charset=UTF-8',
          timeoutMs,
          signal,
        );
        sessionOpen = false;
        handle(
          answer.filter((m) => m.msg.msgname !== 'completed'),
          'audio',
        );
        return this.#summary(model, stopCause, undefined, started);
      }
      // Stop right away: it is due within 1 s of the last audio response (spec 02).
      const answer = await post(
        JSON.stringify({ msg: { msgname: 'stop' } }),
        'application/json; charset=UTF-8',
        o.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS,
        signal,
      );
      sessionOpen = false;
      handle(answer, 'stop');
      if (!completed) {
        throw new ServiceError({
          kind: 'session',
          message: `${endpoint}: stop answered without a completed message`,
          endpoint,
          httpStatus: 200,
          detail: 'no completed after stop',
        });
      }
      return this.#summary(model, stopCause, completedCause, started);
    } catch (err) {
      // The service ends a session itself on any error it answers (spec 02); a session we leave for a
      // reason of our own (abort, timeout, a throwing callback) is cancelled so it frees its slot.
      const answeredByService = isServiceError(err) && err.httpStatus !== undefined;
      if (sessionOpen && !answeredByService) await this.#bestEffortCancel(url, endpoint, jar);
      if (isServiceError(err)) err.cost = this.#meter.snapshot();
      if (isServiceError(err) && err.code === INTERVAL_TOO_BRIEF) pace.refused();
      if (isServiceError(err) || signal?.aborted) {
        ctx.logger.debug('recognition session ended with an error', {
          uniqueId: this.#uniqueId,
          error: isServiceError(err) ? err.toJSON() : 'aborted',
          progress: this.progress(),
        });
      }
      throw err;
    } finally {
      pace.end();
      await chunks.return(undefined).catch(() => undefined);
    }
  }

  /** On abort: tell the service, without waiting long and without the aborted signal. */
  async #bestEffortCancel(url: string, endpoint: string, jar: CookieJar): Promise<void> {
    try {
      const token = await this.#ctx.tokens.get(this.#meter);
      const headers: Record<string, string> = {
        Connection: 'Keep-Alive',
        'Content-Type': 'application/json; charset=UTF-8',
        Authorization: `Bearer ${token.value.reveal()}`,
      };
      if (this.#uniqueId !== undefined) headers['Unique-ID'] = this.#uniqueId;
      const cookie = jar.headerFor(url);
      if (cookie !== undefined) headers.Cookie = cookie;
      await sendRequest({
        url,
        headers,
        body: JSON.stringify({ msg: { msgname: 'cancel' } }),
        endpoint,
        family: 'asr',
        timeoutMs: CANCEL_TIMEOUT_MS,
        meter: this.#meter,
      });
    } catch {
      // The session is being abandoned; the service times it out on its own (spec 02: 651).
    }
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
