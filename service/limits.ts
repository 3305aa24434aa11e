/**
 * Per-process concurrency, one p-limit per endpoint family (docs/design.md, Task queues and limits). The
 * cross-worker rate of text calls is Temporal's task-queue rate limit; this only keeps one process from
 * opening more requests (or recognition sessions) than it was given.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import { LIMIT_DEFAULTS } from '../schemas/limits.ts';

/** The configuration's defaults (schemas/limits.ts), for a client built without one. */
const DEFAULT_NLP_CONCURRENCY = LIMIT_DEFAULTS.nlpConcurrency;
const DEFAULT_ASR_SESSIONS = LIMIT_DEFAULTS.asrConcurrentSessions;

export interface ConcurrencyOptions {
  /** Text-analysis requests in flight per process; default {@link DEFAULT_NLP_CONCURRENCY}. */
  nlp?: number | undefined;
  /** Recognition sessions open per process (a session holds its slot from start to `completed`); default {@link DEFAULT_ASR_SESSIONS}. */
  asrSessions?: number | undefined;
}

export interface Limiters {
  nlp: LimitFunction;
  asrSessions: LimitFunction;
}

export function createLimiters(options: ConcurrencyOptions = {}): Limiters {
  return {
    nlp: pLimit(options.nlp ?? DEFAULT_NLP_CONCURRENCY),
    asrSessions: pLimit(options.asrSessions ?? DEFAULT_ASR_SESSIONS),
  };
}
