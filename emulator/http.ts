/** Small helpers over node:http: bodies, JSON answers, cookies, content types. */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Largest request body accepted (a 60 s file recognition at 96 kHz PCM is about 11.5 MB). */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
}

/** Reads the whole body; chunked transfer encoding is undone by node:http already. */
export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLargeError(`body larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

/** The media type of a Content-Type header, lower case, without parameters or stray spaces. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/** One parameter of a Content-Type header (e.g. `boundary`), unquoted. */
export function mediaTypeParam(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';').slice(1)) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim().toLowerCase() !== name) continue;
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    return value;
  }
  return undefined;
}

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

export function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

export interface SendOptions {
  contentType?: string;
  headers?: Record<string, string | string[]>;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  options: SendOptions = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': options.contentType ?? 'application/json',
    'Content-Length': Buffer.byteLength(text),
    ...options.headers,
  });
  res.end(text);
}

export function sendEmpty(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | string[]> = {},
): void {
  res.writeHead(status, headers);
  res.end();
}

export function sendText(res: ServerResponse, status: number, body: string, contentType = 'text/html'): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** Parses JSON, returning `undefined` for anything that is not valid JSON. */
export function tryParseJson(body: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) as unknown };
  } catch {
    return { ok: false };
  }
}
