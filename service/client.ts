/**
 * The typed client of the Language Analysis Service: `createServiceClient(config, options)`.
 *
 * Glossary: *family* — endpoints sharing a path prefix and base URL (`nlp`, `asr`, and the token
 * endpoint); *session* — one stream recognition, start to `completed`, at most 3,000 s of audio;
 * *chunk* — the 240 ms of audio of one request; *cost* — requests, retries and bytes of one call.
 *
 * No retries are hidden in here (Temporal owns them); the exceptions are the token refresh on 99998 /
 * 401, which the spec makes part of authentication, and nothing else. Use `withRetry` outside Temporal.
 */
import { DEFAULT_SPEED_MAX, type ServiceConfig } from '../schemas/config.ts';
import type {
  FillerRemovalResult,
  KeywordResult,
  MisrecognitionResult,
  NamedEntityResult,
  SentenceTypeResult,
  SentimentResult,
} from '../schemas/service-nlp.ts';
import { silentLogger, trimSlash, type ClientContext, type ServiceLogger } from './context.ts';
import { createLimiters, type ConcurrencyOptions } from './limits.ts';
import { keyword, type KeywordOptions } from './nlp/keyword.ts';
import { namedEntities, type NamedEntityOptions } from './nlp/named-entities.ts';
import { removeFiller, type RemoveFillerOptions } from './nlp/remove-filler.ts';
import { sentiment } from './nlp/sentiment.ts';
import { detectMisrecognition } from './nlp/misrecognition.ts';
import { sentenceType, type SentenceTypeOptions } from './nlp/sentence-type.ts';
import { summarize, type SummarizeOptions, type SummaryOutcome } from './nlp/summarize.ts';
import type { NlpCallOptions, NlpResponse } from './nlp/call.ts';
import { DEFAULT_REQUEST_TIMEOUT_MS } from './http.ts';
import { StreamSession, type StreamRecognitionOptions } from './stream-session.ts';
import {
  recognizeFile,
  type FileRecognitionOptions,
  type FileRecognitionResult,
} from './file-recognition.ts';
import type { DictionaryEntry } from './dictionary.ts';
import {
  clearUserDictionary,
  downloadUserDictionary,
  uploadUserDictionary,
  userDictionaryIsSet,
  type DictionaryAnswer,
  type UserDictionaryOptions,
} from './user-dictionary.ts';
import { Credentials, TokenProvider } from './tokens.ts';
import { classifierClient, type ClassifierClient } from './classifier.ts';
import { AutoPace, fixedPace, type PaceEvent, type PacePolicy } from './pace.ts';

export interface ServiceClientOptions {
  /** Per-process concurrency per family; defaults 8 text requests, 16 recognition sessions. */
  concurrency?: ConcurrencyOptions;
  /** Time limit of each text-analysis request; default 30 s. */
  nlpTimeoutMs?: number;
  /** Time limit of each token request; default 30 s. */
  tokenTimeoutMs?: number;
  /** Debug/warn logging; never receives secrets, tokens or cookie values. Default: silent. */
  logger?: ServiceLogger;
  /** Replaces the pace the config's `speed` makes (tests, benchmarks). */
  pace?: PacePolicy;
  /** What `speed: auto` learns: for the worker's log and metrics. */
  onPaceEvent?: (event: PaceEvent) => void;
}

/** One pace per client, so `auto` remembers what it found for every later session of the process. */
function paceOf(config: ServiceConfig, onEvent?: (event: PaceEvent) => void): PacePolicy {
  if (config.speed !== 'auto') return fixedPace(config.speed);
  return new AutoPace({ max: config.speedMax ?? DEFAULT_SPEED_MAX, ...(onEvent ? { onEvent } : {}) });
}

interface NlpClient {
  /** `/nlp/beta/remove_filler`: fillers, normalized and fixed sentence. */
  removeFiller(text: string, options?: RemoveFillerOptions): Promise<NlpResponse<FillerRemovalResult>>;
  /** `/nlp/v1/summary`, hierarchical beyond 5,000 characters; `extract-cc` by default. */
  summarize(document: string, options?: SummarizeOptions): Promise<NlpResponse<SummaryOutcome>>;
  /** `/nlp/v1/sentiment` of one sentence. */
  sentiment(sentence: string, options?: NlpCallOptions): Promise<NlpResponse<SentimentResult>>;
  /** `/nlp/v1/keyword` of a document given as sentences. */
  keyword(sentences: string[], options?: KeywordOptions): Promise<NlpResponse<KeywordResult>>;
  /** `/nlp/v1/ne`: named entities of a text, with their positions. */
  namedEntities(sentence: string, options?: NamedEntityOptions): Promise<NlpResponse<NamedEntityResult>>;
  /** `/nlp/beta/detect_misrecognition`: how misrecognized a sentence is, suspect spans, corrections. */
  detectMisrecognition(
    sentence: string,
    options?: NlpCallOptions,
  ): Promise<NlpResponse<MisrecognitionResult>>;
  /** `/nlp/v1/sentence_type`: modality and speech acts of a sentence. */
  sentenceType(sentence: string, options?: SentenceTypeOptions): Promise<NlpResponse<SentenceTypeResult>>;
}

/** The user dictionary of a model (spec 02): reflected on the hour after an upload or a clear. */
interface UserDictionaryClient {
  upload(
    entries: readonly DictionaryEntry[],
    options?: UserDictionaryOptions,
  ): Promise<DictionaryAnswer<DictionaryEntry[]>>;
  clear(options?: UserDictionaryOptions): Promise<DictionaryAnswer<null>>;
  isSet(options?: UserDictionaryOptions): Promise<DictionaryAnswer<boolean>>;
  download(options?: UserDictionaryOptions): Promise<DictionaryAnswer<DictionaryEntry[]>>;
}

export interface ServiceClient {
  /** The shared access-token cache (single-flight, refreshed before expiry). */
  readonly tokens: TokenProvider;
  readonly nlp: NlpClient;
  readonly userDictionary: UserDictionaryClient;
  /** Text classification models (spec 03): learn, status, classify, list, delete. */
  readonly classifier: ClassifierClient;
  /** Starts a stream recognition session; see {@link StreamSession}. */
  recognizeStream(options: StreamRecognitionOptions): StreamSession;
  /** One file recognition request (at most 60 s of audio); see service/file-recognition.ts. */
  recognizeFile(options: FileRecognitionOptions): Promise<FileRecognitionResult>;
}

/** Builds a client for one account. The config's secret is kept only inside a redacting holder. */
export function createServiceClient(
  config: ServiceConfig,
  options: ServiceClientOptions = {},
): ServiceClient {
  const tokens = new TokenProvider({
    authUrl: config.authUrl,
    credentials: new Credentials(config.clientId, config.clientSecret),
    timeoutMs: options.tokenTimeoutMs,
  });
  const ctx: ClientContext = {
    nlpBaseUrl: trimSlash(config.baseUrl),
    asrBaseUrl: trimSlash(config.asrBaseUrl ?? config.baseUrl),
    tokens,
    limiters: createLimiters(options.concurrency),
    logger: options.logger ?? silentLogger,
    model: config.model,
    domainId: config.domainId,
    pace: options.pace ?? paceOf(config, options.onPaceEvent),
    nlpTimeoutMs: options.nlpTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
  };
  return {
    tokens,
    nlp: {
      removeFiller: (text, opts) => removeFiller(ctx, text, opts),
      summarize: (document, opts) => summarize(ctx, document, opts),
      sentiment: (sentence, opts) => sentiment(ctx, sentence, opts),
      keyword: (sentences, opts) => keyword(ctx, sentences, opts),
      namedEntities: (sentence, opts) => namedEntities(ctx, sentence, opts),
      sentenceType: (sentence, opts) => sentenceType(ctx, sentence, opts),
      detectMisrecognition: (sentence, opts) => detectMisrecognition(ctx, sentence, opts),
    },
    userDictionary: {
      upload: (entries, opts) => uploadUserDictionary(ctx, entries, opts),
      clear: (opts) => clearUserDictionary(ctx, opts),
      isSet: (opts) => userDictionaryIsSet(ctx, opts),
      download: (opts) => downloadUserDictionary(ctx, opts),
    },
    classifier: classifierClient(ctx),
    recognizeStream: (opts) => new StreamSession(ctx, opts),
    recognizeFile: (opts) => recognizeFile(ctx, opts),
  };
}
