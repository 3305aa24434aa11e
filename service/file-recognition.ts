/**
 * Recognition from file (spec 02): one `multipart/form-data` request of exactly three parts in order,
 * `parameter` (the start message, with `enableProgress` false: spec 02 refuses interim results here),
 * `audio` (raw audio, at most 60 s) and `command` (`{msg:{msgname:"stop"}}`); the answer is the whole
 * array of server messages. Unpaced: the request waits only for the service's own processing. Times come
 * back relative to the file and are placed on the original timeline by `startOffsetSeconds`.
 *
 * One request holds one of the process's recognition slots (as a stream session does) while in flight.
 * Errors are ServiceErrors as streams' are (`550` No Resource, `652` too long, `413` invalid data…): the
 * caller decides what to retry (activities/asr/pieces-activities.ts, through the retry table).
 */
import {
  completedMessageSchema,
  recognizedMessageSchema,
  serverMessagesSchema,
  type TemporaryWord,
} from '../schemas/service-asr.ts';
import { buildMultipart } from '../schemas/multipart.ts';
import { SERVICE_MAX_FILE_SECONDS } from '../schemas/recognition.ts';
import { bytesPerSecond } from './audio.ts';
import type { ClientContext } from './context.ts';
import { CostMeter, type CallCost } from './cost.ts';
import { errorFromResponse, errorFromSchema, invalidInput, isServiceError } from './errors.ts';
import { parseJson, sendRequest } from './http.ts';
import { buildStartMessage, ASR_MODELS, type AudioCodec, type RecognitionOptions } from './start-message.ts';
import { controlMessage, JSON_CONTENT_TYPE, AUDIO_CONTENT_TYPE } from './stream-requests.ts';
import { toTimeline, type RecognizedUtterance } from './stream-session.ts';
import { withToken } from './tokens.ts';

/** Time limit of one file request: it waits for the whole recognition of up to 60 s of audio. */
const DEFAULT_FILE_REQUEST_TIMEOUT_MS = 120_000;

export interface FileRecognitionOptions {
  /** Raw audio (no header) in `codec` at `sampleRate`: at most 60 s. */
  audio: Uint8Array;
  codec?: AudioCodec;
  sampleRate?: number;
  model?: string | undefined;
  domainId?: string;
  /** The same options as the call's streams; `enableProgress` is always sent false. */
  options?: RecognitionOptions;
  words?: readonly TemporaryWord[];
  /** Where `audio` begins on the original timeline, seconds. Default 0. */
  startOffsetSeconds?: number;
  signal?: AbortSignal | undefined;
  timeoutMs?: number;
  meter?: CostMeter;
}

export interface FileRecognitionResult {
  uniqueId: string | undefined;
  /** Final results in order, times absolute. */
  results: RecognizedUtterance[];
  audioSeconds: number;
  cost: CallCost;
  /** Wall time of the request, ms (what the running real-time factor is measured from). */
  durationMs: number;
}

/** The request's server messages read as final results (throws the error a `completed` carries). */
function finalsOf(messages: unknown, endpoint: string, offset: number, httpStatus: number) {
  const parsed = serverMessagesSchema.safeParse(messages);
  if (!parsed.success) throw errorFromSchema(endpoint, parsed.error.issues, httpStatus);
  const results: RecognizedUtterance[] = [];
  let uniqueId: string | undefined;
  for (const message of parsed.data) {
    uniqueId ??= message.msg.uniqueId;
    if (message.msg.msgname === 'recognized') {
      const m = recognizedMessageSchema.parse(message);
      const sentences = m.result.sentence.map((s) => toTimeline(s, offset));
      if (m.result.type === 1 && sentences.length > 0)
        results.push({ ...sentences[0]!, alternatives: sentences });
    } else if (message.msg.msgname === 'completed') {
      const m = completedMessageSchema.parse(message);
      if (m.errorinfo) throw errorFromResponse({ family: 'asr', endpoint, httpStatus, body: m });
    }
  }
  return { uniqueId, results };
}

export async function recognizeFile(
  ctx: ClientContext,
  opts: FileRecognitionOptions,
): Promise<FileRecognitionResult> {
  const model = opts.model ?? ctx.model;
  const codec = opts.codec ?? 'mulaw';
  const sampleRate =
    opts.sampleRate ?? (codec === 'mulaw' ? 8000 : ((ASR_MODELS as Record<string, number>)[model] ?? 16000));
  const endpoint = `/asr/v1/speech_recognition/${model}`;
  const audioSeconds = opts.audio.byteLength / bytesPerSecond(codec, sampleRate);
  if (audioSeconds > SERVICE_MAX_FILE_SECONDS)
    throw invalidInput(
      endpoint,
      `file recognition takes at most ${SERVICE_MAX_FILE_SECONDS} s of audio, got ${audioSeconds} s`,
    );
  const start = buildStartMessage({
    model,
    domainId: opts.domainId ?? ctx.domainId,
    codec,
    sampleRate,
    options: { ...opts.options, enableProgress: false },
    words: opts.words,
  });
  const { body, contentType } = buildMultipart([
    { name: 'parameter', contentType: JSON_CONTENT_TYPE, data: JSON.stringify(start) },
    // A view of the caller's bytes, not a copy: the body below is their one copy.
    {
      name: 'audio',
      contentType: AUDIO_CONTENT_TYPE,
      data: Buffer.from(opts.audio.buffer, opts.audio.byteOffset, opts.audio.byteLength),
    },
    { name: 'command', contentType: JSON_CONTENT_TYPE, data: controlMessage('stop') },
  ]);
  const meter = new CostMeter(opts.meter);
  const url = `${ctx.asrBaseUrl}${endpoint}`;
  const started = performance.now();
  const answer = await ctx.limiters
    .asrSessions(() =>
      withToken(ctx.tokens, meter, async (token) => {
        const res = await sendRequest({
          url,
          headers: { 'Content-Type': contentType, Authorization: `Bearer ${token.value.reveal()}` },
          body,
          endpoint,
          family: 'asr',
          timeoutMs: opts.timeoutMs ?? DEFAULT_FILE_REQUEST_TIMEOUT_MS,
          signal: opts.signal,
          meter,
        });
        const parsed = parseJson(res.text);
        if (res.status !== 200)
          throw errorFromResponse({
            family: 'asr',
            endpoint,
            httpStatus: res.status,
            body: parsed,
            retryAfter: res.headers.get('retry-after'),
          });
        return finalsOf(parsed, endpoint, opts.startOffsetSeconds ?? 0, res.status);
      }),
    )
    .catch((err: unknown) => {
      // What the failed request cost (the token's included), as a stream's errors carry it.
      if (isServiceError(err)) err.cost = meter.snapshot();
      throw err;
    });
  return {
    ...answer,
    audioSeconds,
    cost: meter.snapshot(),
    durationMs: Math.round(performance.now() - started),
  };
}
