/**
 * The one place requests leave the process. Global `fetch` (Node 20's undici) keeps connections alive
 * per origin by default and opens as many as there are requests in flight, which suits many concurrent
 * recognition sessions each running a strict request/response loop every 240 ms: every session reuses a
 * warm socket, and no request waits behind another session's.
 *
 * Network failures and timeouts become `transient` ServiceErrors; an abort by the caller's own signal
 * rejects with the signal's reason so that cancellation stays cancellation.
 */
import { ServiceError, type ErrorFamily } from './errors.ts';
import type { CostMeter } from './cost.ts';

/** Default time limit of one request, unless the caller gives one. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

export interface HttpRequest {
  url: string;
  method?: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string | Uint8Array | undefined;
  /** Path for errors and logs (never the query string, never a header). */
  endpoint: string;
  family: ErrorFamily;
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  meter?: CostMeter | undefined;
}

export interface HttpResponse {
  status: number;
  headers: Headers;
  /** Body as text; empty for 204. */
  text: string;
}

function byteLength(body: string | Uint8Array | undefined): number {
  if (body === undefined) return 0;
  return typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
}

/** Sends one request and reads the whole body. Never throws for an HTTP status: the caller decides. */
export async function sendRequest(req: HttpRequest): Promise<HttpResponse> {
  req.signal?.throwIfAborted();
  const timeoutMs = req.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
  req.meter?.addRequest(byteLength(req.body));
  try {
    const res = await fetch(req.url, {
      method: req.method ?? 'POST',
      headers: req.headers,
      body: req.body as BodyInit | undefined,
      signal,
      redirect: 'error',
    });
    const text = await res.text();
    req.meter?.addReceived(Buffer.byteLength(text));
    return { status: res.status, headers: res.headers, text };
  } catch (err) {
    if (req.signal?.aborted) throw req.signal.reason;
    const timedOut = timeout.aborted;
    const reason = timedOut ? `no answer within ${timeoutMs} ms` : describeNetworkError(err);
    throw new ServiceError({
      kind: 'transient',
      message: `${req.endpoint} failed (transient): ${reason}`,
      endpoint: req.endpoint,
      detail: reason,
      cause: timedOut ? undefined : err,
    });
  }
}

function describeNetworkError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return `network error ${cause.code}`;
  return `network error: ${cause?.message ?? (err as Error).message}`;
}

/** Parses a JSON body; `undefined` for an empty or non-JSON body (the error parsers then fall back to HTTP status). */
export function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
