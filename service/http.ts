/**
 * The one place requests leave the process, over `node:http`/`node:https` with keep-alive agents: every
 * recognition session runs a strict request/response loop every 240 ms, so each reuses a warm socket, and
 * no request waits behind another session's (no cap on sockets per origin).
 *
 * Not the global `fetch`: undici's fetch spent several times the CPU per small request, which at many
 * sessions against a fast emulator was the whole core of the workers process (bench/README.md, "Figures
 * behind the code").
 *
 * Network failures and timeouts become `transient` ServiceErrors; an abort by the caller's own signal
 * rejects with the signal's reason so that cancellation stays cancellation. Redirects are not followed.
 */
import http from 'node:http';
import https from 'node:https';
import { ServiceError, type ErrorFamily } from './errors.ts';
import type { CostMeter } from './cost.ts';

/** Default time limit of one request, unless the caller gives one. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

const agents = {
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
};

/** Where a URL's requests go, as `request` takes it: parsed once per URL, not once per request. */
interface Target {
  transport: typeof http | typeof https;
  agent: http.Agent;
  options: { protocol: string; hostname: string; port: string; path: string; auth?: string };
}

/**
 * Parsed URLs. A session sends every request to one URL, 15,000 an hour: parsing it and turning the
 * `URL` into request options each time was a measurable share of the client's CPU. The URLs are the
 * configured endpoints, a few; the cap only keeps a caller that varies its query string from growing it.
 */
const targets = new Map<string, Target>();
const MAX_TARGETS = 256;

function targetOf(url: string, endpoint: string): Target {
  let target = targets.get(url);
  if (target) return target;
  const parsed = new URL(url);
  const agent = agents[parsed.protocol as keyof typeof agents];
  if (!agent) throw new RangeError(`unsupported URL scheme ${parsed.protocol} for ${endpoint}`);
  target = {
    transport: parsed.protocol === 'https:' ? https : http,
    agent,
    options: {
      protocol: parsed.protocol,
      // `[::1]` in a URL is `::1` to the socket.
      hostname: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: parsed.port,
      path: `${parsed.pathname}${parsed.search}`,
      ...(parsed.username
        ? { auth: `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}` }
        : {}),
    },
  };
  if (targets.size >= MAX_TARGETS) targets.clear();
  targets.set(url, target);
  return target;
}

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

/** The response headers callers read (names case-insensitive). */
interface ResponseHeaders {
  get(name: string): string | null;
  /** Every `Set-Cookie` header, one string each. */
  getSetCookie(): string[];
}

export interface HttpResponse {
  status: number;
  headers: ResponseHeaders;
  /** Body as text; empty for 204. */
  text: string;
}

function responseHeaders(raw: http.IncomingHttpHeaders): ResponseHeaders {
  return {
    get(name) {
      const value = raw[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
    getSetCookie: () => raw['set-cookie'] ?? [],
  };
}

/** Sends one request and reads the whole body. Never throws for an HTTP status: the caller decides. */
export async function sendRequest(req: HttpRequest): Promise<HttpResponse> {
  req.signal?.throwIfAborted();
  const timeoutMs = req.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const body =
    req.body === undefined ? undefined : typeof req.body === 'string' ? Buffer.from(req.body) : req.body;
  req.meter?.addRequest(body?.byteLength ?? 0);
  const { transport, agent, options } = targetOf(req.url, req.endpoint);
  const fail = (reason: string, cause?: unknown) =>
    new ServiceError({
      kind: 'transient',
      message: `${req.endpoint} failed (transient): ${reason}`,
      endpoint: req.endpoint,
      detail: reason,
      cause,
    });

  return new Promise<HttpResponse>((resolve, reject) => {
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      settle();
    };
    const request = transport.request({
      ...options,
      method: req.method ?? 'POST',
      agent,
      headers:
        body === undefined ? req.headers : { ...req.headers, 'Content-Length': String(body.byteLength) },
    });
    const timer = setTimeout(() => {
      finish(() => reject(fail(`no answer within ${timeoutMs} ms`)));
      request.destroy();
    }, timeoutMs);
    const onAbort = () => {
      finish(() => reject(req.signal!.reason));
      request.destroy();
    };
    req.signal?.addEventListener('abort', onAbort, { once: true });
    request.on('error', (err: NodeJS.ErrnoException) => {
      const reason = err.code ? `network error ${err.code}` : `network error: ${err.message}`;
      finish(() => reject(fail(reason, err)));
    });
    request.on('response', (res) => {
      const chunks: Buffer[] = [];
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.byteLength;
      });
      res.on('error', (err) => finish(() => reject(fail(`network error: ${err.message}`, err))));
      res.on('end', () => {
        // Most recognition answers are a 204 with no body at all.
        const text =
          chunks.length === 0
            ? ''
            : (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
        req.meter?.addReceived(received);
        finish(() => resolve({ status: res.statusCode ?? 0, headers: responseHeaders(res.headers), text }));
      });
    });
    request.end(body);
  });
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
