/**
 * `callpipe codec-server`: Temporal's codec server (docs.temporal.io, "Codec Server"), so that operators
 * read the payloads callpipe encrypts (workers/payload-codec.ts) in the Web UI and the `temporal` CLI as
 * before: `POST /decode` and `POST /encode` take and give `{payloads: [...]}` in Temporal's JSON form
 * (metadata values and data in base64), for the namespace of the `X-Namespace` header. Only the Web UI's
 * origins get CORS answers, and every request needs the bearer token: payloads are customers' data.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { CliError, parseCommandArgs } from '../command.ts';
import { pipelineConfig } from '../stack-client.ts';
import { EncryptionCodec, PayloadKeyError, payloadKeysOf } from '../../workers/payload-codec.ts';
import { stopWithParent } from '../../workers/parent-watch.ts';

export const summary = 'serves the payload codec to the Temporal Web UI and CLI (decode, encode)';

const DEFAULT_PORT = 8888;
/** Larger than any history page the Web UI decodes at once; a body past it is refused, not buffered. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export const help = `Usage: callpipe codec-server [--port N] [--host ADDR] [--origin URL]… [--token-file FILE]

Serves Temporal's codec server endpoints with callpipe's payload keys (CALLPIPE_PAYLOAD_KEYS or
CALLPIPE_PAYLOAD_KEYS_FILE, else the running local stack's), so that the Web UI and the temporal CLI
show the workflows' inputs, results and failure messages decrypted. Stops on Ctrl-C.

  POST /decode, POST /encode   body {"payloads": [...]}, header X-Namespace: the configured namespace

Every request needs the token: an "Authorization: Bearer <token>" header (temporal CLI:
--codec-endpoint http://127.0.0.1:${DEFAULT_PORT} --codec-auth "Bearer <token>"), or, for a Web UI that
cannot add the header, the token as the endpoint's first path segment (codec endpoint
http://127.0.0.1:${DEFAULT_PORT}/<token> in the UI's settings).

Options:
  --port N          port (default ${DEFAULT_PORT}; 0 = any free port)
  --host ADDR       address to listen on (default 127.0.0.1)
  --origin URL      an origin of the Web UI allowed to call (CORS), repeatable (default: the local
                    stack's Web UI, else http://localhost:8233 and http://127.0.0.1:8233)
  --token-file FILE the token, at least 32 characters (default: $CALLPIPE_HOME/codec-server-token,
                    made once, readable by the user alone)`;

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** The namespace whose payloads the keys are for: requests naming another are refused. */
  namespace: string;
  token: string;
  /** Origins of the Web UI (scheme, host and port) allowed to call from a browser. */
  origins: string[];
  host?: string;
  port?: number;
}

/** Temporal's JSON form of a payload: metadata values and data in base64. */
interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

function fromJson(p: JsonPayload): Payload {
  if (!p || typeof p !== 'object') throw new HttpError(400, 'each payload must be an object');
  const bytes = (v: unknown) => {
    if (typeof v !== 'string') throw new HttpError(400, 'payload metadata and data must be base64 strings');
    return Buffer.from(v, 'base64');
  };
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, bytes(v)])),
    data: p.data === undefined ? undefined : bytes(p.data),
  };
}

function toJson(p: Payload): JsonPayload {
  const b64 = (v: Uint8Array | null | undefined) => Buffer.from(v ?? []).toString('base64');
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, b64(v)])),
    ...(p.data ? { data: b64(p.data) } : {}),
  };
}

function sameSecret(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `body larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The codec server; resolves once it listens. */
export async function startCodecServer(
  options: CodecServerOptions,
): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const origins = new Set(options.origins.map((o) => new URL(o).origin));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (!origins.has(origin)) throw new HttpError(403, 'origin not allowed');
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.setHeader('Vary', 'Origin');
    }
    if (req.method === 'OPTIONS') {
      // A browser's preflight carries no credentials: it learns what it may send, nothing more.
      res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-Namespace');
      res.setHeader('Access-Control-Max-Age', '600');
      res.writeHead(204).end();
      return;
    }
    const segments = (req.url ?? '/').split('?')[0]!.split('/').filter(Boolean);
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const inPath = segments.length === 2 && sameSecret(decodeURIComponent(segments[0]!), options.token);
    if (!inPath && !(bearer !== undefined && sameSecret(bearer, options.token)))
      throw new HttpError(401, 'a valid bearer token is required');
    const action = segments.at(-1);
    if (req.method !== 'POST' || (action !== 'decode' && action !== 'encode'))
      throw new HttpError(404, 'POST /decode or /encode');
    const namespace = req.headers['x-namespace'];
    if (namespace !== undefined && namespace !== options.namespace)
      throw new HttpError(403, `this codec server holds the keys of namespace ${options.namespace} only`);
    let body: { payloads?: JsonPayload[] };
    try {
      body = JSON.parse(await readBody(req)) as typeof body;
    } catch (err) {
      if (err instanceof HttpError) throw err;
      throw new HttpError(400, 'the body must be JSON: {"payloads": [...]}');
    }
    if (!body || !Array.isArray(body.payloads))
      throw new HttpError(400, 'the body must be {"payloads": [...]}');
    const payloads = body.payloads.map(fromJson);
    const out =
      action === 'decode' ? await options.codec.decode(payloads) : await options.codec.encode(payloads);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ payloads: out.map(toJson) }));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A key id at most, never a payload or key material (PayloadKeyError); anything else stays here.
      const status = err instanceof HttpError ? err.status : err instanceof PayloadKeyError ? 400 : 500;
      const message =
        err instanceof HttpError || err instanceof PayloadKeyError ? err.message : 'internal error';
      if (!res.headersSent) res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: message }));
      req.resume();
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port ?? DEFAULT_PORT, host }, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The token of `file`, or of the home's token file, made once (0600) when there is none. */
function codecToken(file: string | undefined, home: string): { token: string; file: string } {
  const path = file ?? join(home, 'codec-server-token');
  if (!file && !existsSync(path)) {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    writeFileSync(path, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(path, 0o600);
  }
  let token: string;
  try {
    token = readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw new CliError(
      `codec-server: token file ${path} cannot be read (${(err as NodeJS.ErrnoException).code})`,
    );
  }
  if (token.length < 32 || /\s/.test(token))
    throw new CliError(`codec-server: the token in ${path} must be at least 32 characters without spaces`);
  return { token, file: path };
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(
    'codec-server',
    argv,
    {
      port: { type: 'string' },
      host: { type: 'string' },
      origin: { type: 'string', multiple: true },
      'token-file': { type: 'string' },
    },
    false,
  );
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new CliError(`codec-server: --port must be a port number, got '${values.port}'`);
  const { config, webUiUrl } = pipelineConfig();
  let keys;
  try {
    keys = payloadKeysOf(config.temporal);
  } catch (err) {
    throw new CliError(`codec-server: ${(err as Error).message}`, 1);
  }
  if (!keys)
    throw new CliError(
      'codec-server: no payload keys: set CALLPIPE_PAYLOAD_KEYS or CALLPIPE_PAYLOAD_KEYS_FILE, or start the local stack (callpipe up)',
      1,
    );
  const origins =
    values.origin ?? (webUiUrl ? [webUiUrl] : ['http://localhost:8233', 'http://127.0.0.1:8233']);
  for (const origin of origins) {
    if (!URL.canParse(origin)) throw new CliError(`codec-server: --origin must be a URL, got '${origin}'`);
  }
  const { token, file } = codecToken(values['token-file'], config.stack.home);
  const server = await startCodecServer({
    codec: new EncryptionCodec(keys),
    namespace: config.temporal.namespace,
    token,
    origins,
    host: values.host,
    port,
  }).catch((err: unknown) => {
    throw new CliError(`codec-server: cannot listen: ${(err as Error).message}`, 1);
  });
  console.error(
    `codec server on ${server.url} for namespace ${config.temporal.namespace}, keys of ${keys.source}; ` +
      `Web UI origins ${origins.join(', ')}; bearer token in ${file}`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
    stopWithParent();
  });
  await server.close();
  return 0;
}
