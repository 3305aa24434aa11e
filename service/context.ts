/**
 * What every call of the client shares: where the families live, the token cache, the limiters and the
 * logger. Built once by `createServiceClient`.
 */
import type { Limiters } from './limits.ts';
import type { PacePolicy } from './pace.ts';
import type { TokenProvider } from './tokens.ts';

/** Structured logger; the client never passes it a secret, a token or a cookie value. */
export interface ServiceLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: ServiceLogger = { debug: () => undefined, warn: () => undefined };

export interface ClientContext {
  /** `baseUrl` without a trailing slash: `/nlp/...` is appended (spec 01, Versioning). */
  nlpBaseUrl: string;
  /** `asrBaseUrl ?? baseUrl` without a trailing slash: `/asr/v1/...` is appended. */
  asrBaseUrl: string;
  tokens: TokenProvider;
  limiters: Limiters;
  logger: ServiceLogger;
  /** Default recognition model and domain (config). */
  model: string;
  domainId: string;
  /** How fast sessions send audio (config `speed`): fixed, or found (`auto`), one per client. */
  pace: PacePolicy;
  /** Per-request time limit of text calls. */
  nlpTimeoutMs: number;
}

export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
