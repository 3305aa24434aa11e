/**
 * The user dictionary of a recognition model (spec 02, Japanese models): upload (multipart, one part
 * `cascadeword` of dictionary lines; a new upload replaces the last), clear, state (`isSet`: the last
 * update has been reflected, which happens on the hour) and download. Answers are multipart with a
 * `status` part of three text lines (code, message, detail; success is 200 OK success), except a
 * successful state check, which is JSON. The service's parts carry only their Content-Disposition; a part
 * Content-Type, a part with no header, `key: value` status lines or LF line ends are read as well.
 */
import { boundaryOf, buildMultipart, parseMultipart } from '../schemas/multipart.ts';
import type { ClientContext } from './context.ts';
import { CostMeter, type CallCost } from './cost.ts';
import { dictionaryLines, type DictionaryEntry } from './dictionary.ts';
import { ServiceError } from './errors.ts';
import { sendRequest, type HttpResponse } from './http.ts';
import { withToken } from './tokens.ts';

export interface UserDictionaryOptions {
  /** Default: the client's model. */
  model?: string | undefined;
  /** Default: the client's domain id. */
  domainId?: string | undefined;
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

/** The `status` part: code, message and detail. */
export interface DictionaryStatus {
  code: number;
  message: string;
  detail: string;
}

export interface DictionaryAnswer<T> {
  status: DictionaryStatus;
  result: T;
  cost: CallCost;
}

type Operation = 'upload' | 'clear' | 'isset' | 'download';

/** Reads a `status` part: three lines (code, message, detail), or `key: value` lines in any order. */
export function parseStatusPart(text: string): DictionaryStatus {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const keyed = new Map(
    lines.flatMap((l) => {
      const m = /^(code|message|detail)\s*[:=]\s*(.*)$/i.exec(l);
      return m ? [[m[1]!.toLowerCase(), m[2]!] as const] : [];
    }),
  );
  const [code, message, detail] =
    keyed.size > 0 ? [keyed.get('code'), keyed.get('message'), keyed.get('detail')] : lines;
  return { code: Number(code), message: message ?? '', detail: detail ?? '' };
}

/** Dictionary lines of an answer: notation, reading, and either `M` and the weight (upload) or the weight. */
export function parseDictionaryLines(text: string): DictionaryEntry[] {
  return text
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [surface = '', reading = '', ...rest] = l.split('\t');
      const weight = rest.filter((f) => f !== 'M').at(-1);
      return { surface, reading, ...(weight !== undefined && weight !== '' ? { prob: Number(weight) } : {}) };
    });
}

async function call(
  ctx: ClientContext,
  operation: Operation,
  options: UserDictionaryOptions,
  body?: { body: Buffer; contentType: string },
): Promise<{ res: HttpResponse; raw: Buffer; meter: CostMeter }> {
  const model = options.model ?? ctx.model;
  const domainId = options.domainId ?? ctx.domainId;
  const endpoint = `/asr/v1/speech_words/${model}/${operation}`;
  const meter = new CostMeter();
  const res = await withToken(ctx.tokens, meter, async (token) => {
    const answer = await sendRequest({
      url: `${ctx.asrBaseUrl}${endpoint}?domainid=${encodeURIComponent(domainId)}`,
      method: body ? 'POST' : 'GET',
      headers: {
        Authorization: `Bearer ${token.value.reveal()}`,
        ...(body ? { 'Content-Type': body.contentType } : {}),
      },
      body: body?.body,
      endpoint,
      family: 'asr',
      timeoutMs: options.timeoutMs ?? ctx.nlpTimeoutMs,
      signal: options.signal,
      meter,
    });
    if (answer.status === 401) {
      throw new ServiceError({
        kind: 'auth',
        message: `${endpoint} refused the access token (HTTP 401)`,
        httpStatus: 401,
        endpoint,
      });
    }
    return answer;
  });
  return { res, raw: Buffer.from(res.text, 'utf8'), meter };
}

/** The parts of a multipart answer; a failed `status` part (or an answer without one) is a ServiceError. */
function partsOf(endpoint: string, res: HttpResponse, raw: Buffer) {
  const boundary = boundaryOf(res.headers.get('content-type') ?? undefined);
  const parts = boundary ? parseMultipart(raw, boundary) : undefined;
  const statusPart = parts?.find((p) => p.name === 'status');
  if (!parts || !statusPart) {
    throw new ServiceError({
      kind: res.status >= 500 ? 'transient' : 'invalid',
      message: `${endpoint}: unexpected answer (HTTP ${res.status}, no status part)`,
      httpStatus: res.status,
      endpoint,
    });
  }
  const status = parseStatusPart(statusPart.data.toString('utf8'));
  if (status.code !== 200) {
    // 410 Invalid Parameter (the entries, the domain, the model); 600 and the rest: the operator's.
    throw new ServiceError({
      kind: status.code === 410 ? 'invalid' : 'transient',
      message: `${endpoint} failed (code ${status.code}): ${status.message}${status.detail ? `: ${status.detail}` : ''}`,
      code: status.code,
      httpStatus: res.status,
      endpoint,
      detail: status.detail,
      serviceMessage: status.message,
    });
  }
  return { status, parts };
}

/** Replaces the model's user dictionary; the answer echoes the entries as the service took them. */
export async function uploadUserDictionary(
  ctx: ClientContext,
  entries: readonly DictionaryEntry[],
  options: UserDictionaryOptions = {},
): Promise<DictionaryAnswer<DictionaryEntry[]>> {
  const body = buildMultipart([
    { name: 'cascadeword', contentType: 'text/plain; charset=UTF-8', data: dictionaryLines(entries) },
  ]);
  const { res, raw, meter } = await call(ctx, 'upload', options, body);
  const { status, parts } = partsOf('upload', res, raw);
  const echoed = parts.find((p) => p.name === 'cascadeword');
  return {
    status,
    result: echoed ? parseDictionaryLines(echoed.data.toString('utf8')) : [],
    cost: meter.snapshot(),
  };
}

/** Deletes the model's user dictionary (reflected on the hour, like an upload). */
export async function clearUserDictionary(
  ctx: ClientContext,
  options: UserDictionaryOptions = {},
): Promise<DictionaryAnswer<null>> {
  const { res, raw, meter } = await call(ctx, 'clear', options);
  return { status: partsOf('clear', res, raw).status, result: null, cost: meter.snapshot() };
}

/**
 * Whether no upload or clear is waiting to be reflected (JSON `{isSet}` on success): false from a change
 * until the top of the hour, true afterwards and before any change.
 */
export async function userDictionaryIsSet(
  ctx: ClientContext,
  options: UserDictionaryOptions = {},
): Promise<DictionaryAnswer<boolean>> {
  const { res, raw, meter } = await call(ctx, 'isset', options);
  // Success is JSON, an error multipart (spec 02): anything but multipart is read as the JSON.
  if (!(res.headers.get('content-type') ?? '').startsWith('multipart/') && res.status === 200) {
    let json: { isSet?: unknown } | undefined;
    try {
      json = JSON.parse(res.text) as { isSet?: unknown };
    } catch {
      json = undefined;
    }
    if (typeof json?.isSet !== 'boolean') {
      throw new ServiceError({
        kind: 'invalid',
        message: 'isset: unexpected answer, field isSet',
        endpoint: 'isset',
      });
    }
    return {
      status: { code: 200, message: 'OK', detail: 'success' },
      result: json.isSet,
      cost: meter.snapshot(),
    };
  }
  partsOf('isset', res, raw);
  throw new ServiceError({
    kind: 'invalid',
    message: 'isset: a multipart answer without an error',
    endpoint: 'isset',
  });
}

/** The last uploaded dictionary (notation, reading, weight per line). */
export async function downloadUserDictionary(
  ctx: ClientContext,
  options: UserDictionaryOptions = {},
): Promise<DictionaryAnswer<DictionaryEntry[]>> {
  const { res, raw, meter } = await call(ctx, 'download', options);
  const { status, parts } = partsOf('download', res, raw);
  const lines = parts.find((p) => p.name === 'cascadeword');
  return {
    status,
    result: lines ? parseDictionaryLines(lines.data.toString('utf8')) : [],
    cost: meter.snapshot(),
  };
}
