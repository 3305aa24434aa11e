/**
 * Inputs and outputs of the text activities (task queue `callpipe-nlp`). Inputs and outputs are small
 * JSON: the call's text travels through object storage (claim check), keys travel in workflow history.
 */
import type { CallCost } from '../../service/index.ts';
import type { TextGrain } from '../../schemas/text-grains.ts';

/** What every text activity takes. */
export interface NlpStepInput {
  callId: string;
  /** Key of the call's merged Timeline JSON (schemas/transcript.ts) in the store's bucket. */
  timelineKey: string;
  /** Where the step writes its output JSON (schemas/result.ts: `<step>OutputSchema`). */
  outputKey: string;
}

/** Steps after filler removal read the cleaned text when the fillers step succeeded. */
interface CleanedTextInput extends NlpStepInput {
  /** Key of the fillers step's output; without it the raw recognized text is used. */
  fillersKey?: string | undefined;
}

export interface RedactTextInput extends NlpStepInput {
  /** Where the redacted timeline goes: what every later text step reads. */
  redactedTimelineKey: string;
  /** Characters per named-entity request; default DEFAULT_NE_WINDOW_CHARS (redaction/named-entities.ts). */
  maxWindowChars?: number;
}

export interface RemoveFillersInput extends NlpStepInput {
  /** Largest request text in characters (UTF-16 units); default {@link DEFAULT_FILLER_BATCH_CHARS}. */
  maxBatchChars?: number;
  /** Most utterances per request; default {@link DEFAULT_FILLER_BATCH_UTTERANCES}. */
  maxBatchUtterances?: number;
}

export interface SummarizeCallInput extends CleanedTextInput {
  /** `extract-cc` (call-center model, the default) or `extract`. */
  mode?: 'extract' | 'extract-cc';
  /** Sentences in the summary (1–100); default 3. At most one of sentLen and charLen. */
  sentLen?: number;
  /** Characters in the summary (10–2,500). */
  charLen?: number;
  /** `ja`/`en`; required by `extract` only. */
  lang?: string;
  /** Largest window of the hierarchical summary (default and maximum 5,000, spec 03 Limits); for tests. */
  maxWindowChars?: number;
}

/** Steps that send one unit of text a request (schemas/text-grains.ts). */
interface GrainedTextInput extends CleanedTextInput {
  /** Default `utterance` (what callers before grains asked for). */
  grain?: TextGrain;
  /** Length of a window, and the longest turn, seconds; default 30. */
  windowSeconds?: number;
  /** Requests in flight for this call; default 4. The client's p-limit caps the process as a whole. */
  concurrency?: number;
}

export type AnalyzeSentimentInput = GrainedTextInput;

/** Speech acts (`/nlp/v1/sentence_type`) of every unit of the call. */
export type ClassifyDialogActsInput = GrainedTextInput;

export interface ExtractKeywordsInput extends CleanedTextInput {
  /** `max_keyword_num` (spec 01, Rule 4); default {@link DEFAULT_CALL_KEYWORDS}. */
  maxKeywords?: number;
}

/**
 * What every text activity returns. `failed` means the input can never succeed (the service's
 * `invalid` class): the call's result records the reason and the other steps go on. Every other error
 * leaves the activity as an ApplicationFailure (failures.ts) for Temporal to retry or not.
 */
export interface NlpStepOutput {
  status: 'ok' | 'failed';
  /** Set when `ok`: the key the output was written to. */
  outputKey?: string;
  /** Set when `failed`. */
  reason?: string;
  /** Requests, retries and bytes of this step, earlier failed attempts included (from their checkpoint). */
  cost: CallCost;
}

export const DEFAULT_FILLER_BATCH_CHARS = 1500;
export const DEFAULT_FILLER_BATCH_UTTERANCES = 40;
export const DEFAULT_SENTIMENT_CONCURRENCY = 4;
/** More than the service's default of 5: a call covers several topics. */
export const DEFAULT_CALL_KEYWORDS = 10;
