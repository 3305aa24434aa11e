/**
 * Summarization (spec 03, Summarization: `/nlp/v1/summary`), with documents beyond the 5,000-character
 * limit summarized hierarchically: cut into windows at sentence boundaries, each window summarized with
 * the requested length, the window summaries joined in order and summarized again, until one request
 * covers the whole.
 */
import {
  SUMMARY_DOCUMENT_MAX_CHARS,
  SUMMARY_DOCUMENT_MIN_CHARS,
  summaryRequestSchema,
} from '../../schemas/service-nlp.ts';
import type { ClientContext } from '../context.ts';
import { CostMeter } from '../cost.ts';
import { invalidInput, isServiceError } from '../errors.ts';
import { callNlp, type NlpCallOptions, type NlpResponse } from './call.ts';
import { NLP_ENDPOINTS } from './endpoints.ts';
import { codePointLength, windowsOf } from './sentences.ts';
import { validateRequest } from './validate.ts';

/** Levels of summaries of summaries before giving up; 5,000⁴ characters is far beyond any call. */
const MAX_SUMMARY_LEVELS = 4;
/** Summary length when the caller gives neither `sentLen` nor `charLen`. */
const DEFAULT_SUMMARY_SENTENCES = 3;

export interface SummarizeOptions extends NlpCallOptions {
  /** `extract-cc` for call-center dialogs (speaker labels removed, sentences in time order); default `extract-cc`. */
  mode?: 'extract' | 'extract-cc';
  /** Sentences in the summary, 1–100. At most one of `sentLen` and `charLen`; default 3 sentences. */
  sentLen?: number;
  /** Characters in the summary, 10–2,500. */
  charLen?: number;
  /** Language; required by `extract` (`ja` or `en`), not sent for `extract-cc` unless given. */
  lang?: string;
  /** Largest window in characters; default and maximum 5,000 (spec 03 Limits). For tests. */
  maxWindowChars?: number;
}

export interface SummaryOutcome {
  summary: string;
  /** 0 when the document was below the service's minimum and is its own summary, 1 for one request, more when hierarchical. */
  levels: number;
  /** Summary requests made (windows of every level). */
  windows: number;
}

/**
 * Summarizes `document`. A document shorter than the service's 10-character minimum is returned as its
 * own summary (no request); an empty one is an `invalid` error.
 */
export async function summarize(
  ctx: ClientContext,
  document: string,
  options: SummarizeOptions = {},
): Promise<NlpResponse<SummaryOutcome>> {
  const { path, result } = NLP_ENDPOINTS.summary;
  const mode = options.mode ?? 'extract-cc';
  const maxWindow = Math.min(
    options.maxWindowChars ?? SUMMARY_DOCUMENT_MAX_CHARS,
    SUMMARY_DOCUMENT_MAX_CHARS,
  );
  const lengths = {
    ...(options.sentLen !== undefined || options.charLen === undefined
      ? { sent_len: options.sentLen ?? DEFAULT_SUMMARY_SENTENCES }
      : {}),
    ...(options.charLen !== undefined ? { char_len: options.charLen } : {}),
    ...(options.lang !== undefined ? { lang: options.lang } : {}),
  };
  // Validate the parameters once, on a placeholder document, before any request.
  validateRequest(path, summaryRequestSchema, { document: '', mode, ...lengths });
  if (document.trim() === '') throw invalidInput(path, 'document: must not be empty');

  const meter = new CostMeter(options.meter);
  const callOptions: NlpCallOptions = { signal: options.signal, timeoutMs: options.timeoutMs, meter };
  let windowsSent = 0;
  const summarizeOne = async (text: string): Promise<string> => {
    if (codePointLength(text) < SUMMARY_DOCUMENT_MIN_CHARS) return text;
    windowsSent += 1;
    const res = await callNlp(ctx, path, { document: text, mode, ...lengths }, result, callOptions);
    return res.result;
  };

  try {
    let text = document;
    let levels = 0;
    while (text.length > maxWindow) {
      if (levels >= MAX_SUMMARY_LEVELS - 1) {
        throw invalidInput(
          path,
          `document: still ${text.length} characters after ${levels} levels of summaries`,
        );
      }
      const windows = windowsOf(text, maxWindow);
      const parts: string[] = [];
      // Windows one after another: the client's p-limit and Temporal bound concurrency, and a failure
      // half-way does not waste the rest of the level.
      for (const window of windows) parts.push(await summarizeOne(window));
      const next = parts.join('\n');
      levels += 1;
      if (next.length >= text.length) {
        throw invalidInput(
          path,
          `document: summaries of ${windows.length} windows did not shorten it; use a smaller sentLen or charLen`,
        );
      }
      text = next;
    }
    const before = windowsSent;
    const summary = await summarizeOne(text);
    if (windowsSent > before) levels += 1;
    return { result: { summary, levels, windows: windowsSent }, cost: meter.snapshot() };
  } catch (err) {
    if (isServiceError(err)) err.cost = meter.snapshot();
    throw err;
  }
}
