export { createServiceClient } from './client.ts';
export type { NlpClient, ServiceClient, ServiceClientOptions, UserDictionaryClient } from './client.ts';
export {
  DictionaryFileError,
  dictionaryEntryProblem,
  parseDictionary,
  dictionaryLines,
  temporaryWords,
  MAX_USER_DICTIONARY_LINES,
  type DictionaryEntry,
} from './dictionary.ts';
export type { ServiceLogger } from './context.ts';
export {
  ServiceError,
  SERVICE_ERROR_KINDS,
  classifyCode,
  isServiceError,
  parseErrorBody,
  type ServiceErrorKind,
} from './errors.ts';
export { CostMeter, addCosts, emptyCost, type CallCost } from './cost.ts';
export { Credentials, TokenProvider, parseTokenResponse, withToken, type AccessToken } from './tokens.ts';
export { Secret } from './secret.ts';
export { withRetry, backoffDelay, DEFAULT_RETRY_KINDS, type RetryOptions } from './retry.ts';
export { DEFAULT_ASR_SESSIONS, DEFAULT_NLP_CONCURRENCY, type ConcurrencyOptions } from './limits.ts';
export { CookieJar } from './cookie-jar.ts';
export {
  ASR_MODELS,
  buildStartMessage,
  startParamProblems,
  type AsrModelId,
  type AudioCodec,
  type RecognitionOptions,
  type StartParams,
} from './start-message.ts';
export {
  audioOffset,
  bytesPerSecond,
  chunkBytes,
  CHUNK_MS,
  MAX_SESSION_SECONDS,
  type AudioOffset,
  type AudioSource,
} from './audio.ts';
export {
  StreamSession,
  SESSION_DEADLINE_MS,
  type RecognizedUtterance,
  type StopCause,
  type StreamCallbacks,
  type StreamEvent,
  type StreamProgress,
  type StreamRecognitionOptions,
  type StreamSummary,
  type TimedSentence,
} from './stream-session.ts';
export { parseNlpResponse, type NlpCallOptions, type NlpResponse } from './nlp/call.ts';
export { NLP_ENDPOINTS, endpointOfPath, type NlpEndpointName } from './nlp/endpoints.ts';
export type { RemoveFillerOptions } from './nlp/remove-filler.ts';
export type { SummarizeOptions, SummaryOutcome } from './nlp/summarize.ts';
export type { KeywordOptions } from './nlp/keyword.ts';
export type { NamedEntityOptions } from './nlp/named-entities.ts';
export {
  DEFAULT_FILE_REQUEST_TIMEOUT_MS,
  type FileRecognitionOptions,
  type FileRecognitionResult,
} from './file-recognition.ts';
