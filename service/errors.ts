/**
 * One error type for everything the Language Analysis Service (or the way to it) can do wrong, with a
 * classification the layers above decide on (docs/design.md, Task queues and limits: "a retry decision is
 * made in one place, from that class"). The code → class table is docs/retries.md's error table.
 */
import { inspect } from 'node:util';
import type { z } from 'zod';
import {
  envelopeErrorSchema,
  errorInfoCarrierSchema,
  faultBodySchema,
  ttsErrorBodySchema,
} from '../schemas/service-errors.ts';
import type { CallCost } from './cost.ts';

/**
 * - `rateLimited`: 99997, HTTP 429; retry with backoff and jitter.
 * - `quota`: 99995, 99996; pause for a long time (hours), say why.
 * - `auth`: 99998, HTTP 401 (after one token refresh); fix the credentials.
 * - `invalid`: the request can never succeed as sent (bad input, bad response shape); fail the item.
 * - `session`: a stream recognition error; restart from a start request, resuming after the last final.
 * - `noResource`: 550 No Resource, the account's concurrent sessions all in use (or a domain id the
 *   service does not know); wait and start again, which a restart budget should not pay for.
 * - `transient`: network errors, timeouts, 5xx without a known code; retry.
 */
export type ServiceErrorKind =
  'rateLimited' | 'quota' | 'auth' | 'invalid' | 'session' | 'noResource' | 'transient';

export const SERVICE_ERROR_KINDS: readonly ServiceErrorKind[] = [
  'rateLimited',
  'quota',
  'auth',
  'invalid',
  'session',
  'noResource',
  'transient',
];

/** Kinds after which the same request may succeed as sent (quota needs hours, auth needs people). */
export const RETRYABLE_KINDS: readonly ServiceErrorKind[] = ['rateLimited', 'transient'];

/** Shared `nlp` codes (spec 01, Errors) and summarization's (spec 03, Errors). */
const NLP_CODE_KINDS: Readonly<Record<number, ServiceErrorKind>> = {
  99993: 'invalid', // invalid version in the path
  99995: 'quota', // preset usage limit (Enterprise)
  99996: 'quota', // 24-hour usage limit (Developers)
  99997: 'rateLimited', // burst blocked
  99998: 'auth',
  6103: 'invalid', // invalid JSON in a parsing request
  17001: 'invalid', // summarization: not JSON or validation error
};

/** Recognition request codes (spec 02, Errors, Request errors). */
const ASR_REQUEST_CODE_KINDS: Readonly<Record<number, ServiceErrorKind>> = {
  410: 'invalid', // Invalid Parameter (also every temporary-dictionary error)
  411: 'session', // Invalid State: Invalid Unique ID
  412: 'session', // Interval Too Brief
  413: 'invalid', // Invalid Data (file)
  450: 'session', // Invalid Token: the *cookie* token, not the access token
  550: 'noResource', // No Resource: the account's sessions are all open (or an unknown domain id)
  552: 'session', // Network Error
  600: 'session', // Internal Error
  651: 'session', // Session Timeout
  652: 'invalid', // Excess Of Max Voice Length (file)
};

/** Codes that call for contacting the operator (spec 02, Errors); in a stream they end the session. */
export const ASR_OPERATOR_CODES: readonly number[] = [
  500, 510, 551, 552, 553, 601, 610, 611, 612, 650, 690, 691, 692, 693,
];

/** HTTP-level statuses without a service code. */
function kindOfHttpStatus(status: number | undefined): ServiceErrorKind {
  if (status === undefined) return 'transient';
  // 403: the account may not use the endpoint (spec 01: Developers accounts cannot use speech
  // recognition); as actionable as bad credentials, and no retry helps.
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rateLimited';
  if (status === 408 || status >= 500) return 'transient';
  return 'invalid';
}

/** Which family's code table applies; recognition codes overlap HTTP statuses, so the family matters. */
export type ErrorFamily = 'auth' | 'nlp' | 'asr';

/**
 * Class of a service code. The family decides the table: in stream recognition every code ends the
 * session (spec 02: "after any error restart from the start request") unless it is an invalid
 * parameter, which a restart would only repeat.
 */
export function classifyCode(
  family: ErrorFamily,
  code: number | string | undefined,
  httpStatus: number | undefined,
  format?: ErrorBodyFormat,
): ServiceErrorKind {
  const n = typeof code === 'string' && /^\d+$/.test(code) ? Number(code) : code;
  if (typeof n === 'number') {
    const shared = NLP_CODE_KINDS[n];
    if (shared) return shared;
    // A gateway's envelope in front of the recognizer (`{"status":403}`) carries an HTTP status, not a
    // recognition code: 403 there is not a session error.
    if (family === 'asr' && format === 'envelope') return kindOfHttpStatus(httpStatus);
    if (family === 'asr') {
      const known = ASR_REQUEST_CODE_KINDS[n];
      if (known) return known;
      // An access-token rejection that happens to carry some code is still an auth error.
      if (httpStatus === 401) return 'auth';
      return 'session';
    }
    if (family === 'auth' && (n === 401 || httpStatus === 401)) return 'auth';
    // Summarization: 17001 is invalid input, other 17xxx are "system internal error" (spec 03).
    if (n >= 17000 && n < 18000) return 'transient';
  }
  return kindOfHttpStatus(httpStatus);
}

export interface ServiceErrorInit {
  kind: ServiceErrorKind;
  /** Human-readable summary; never contains a secret or a token. */
  message: string;
  /** Service code: `nlp` status, `errorinfo.code`, fault `errorcode` or tts `code`. */
  code?: number | string | undefined;
  httpStatus?: number | undefined;
  /** Path of the call (`/nlp/v1/summary`, `/asr/v1/speech_recognition/<model>`), never a query string. */
  endpoint?: string | undefined;
  /** The service's detail text, or the client's reason (the field that failed validation). */
  detail?: string | undefined;
  /** The service's own message text (`message`, `faultstring`). */
  serviceMessage?: string | undefined;
  /** How long to wait before retrying, where one is known (a `Retry-After` header). */
  retryAfterMs?: number | undefined;
  /** What the failed call cost before it failed. */
  cost?: CallCost | undefined;
  cause?: unknown;
}

/** The error every service call rejects with (abort by the caller's signal excepted: that rejects with the signal's reason). */
export class ServiceError extends Error {
  override name = 'ServiceError';
  readonly kind: ServiceErrorKind;
  readonly code: number | string | undefined;
  readonly httpStatus: number | undefined;
  readonly endpoint: string | undefined;
  readonly detail: string | undefined;
  readonly serviceMessage: string | undefined;
  readonly retryAfterMs: number | undefined;
  cost: CallCost | undefined;

  constructor(init: ServiceErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.code = init.code;
    this.httpStatus = init.httpStatus;
    this.endpoint = init.endpoint;
    this.detail = init.detail;
    this.serviceMessage = init.serviceMessage;
    this.retryAfterMs = init.retryAfterMs;
    this.cost = init.cost;
  }

  /** Whether a retry of the same request may succeed (rateLimited, transient). */
  get retryable(): boolean {
    return RETRYABLE_KINDS.includes(this.kind);
  }

  /** Plain data for logs and Temporal failure details: no cause chain, no request, no headers. */
  toJSON() {
    return {
      name: this.name,
      kind: this.kind,
      message: this.message,
      code: this.code,
      httpStatus: this.httpStatus,
      endpoint: this.endpoint,
      detail: this.detail,
      serviceMessage: this.serviceMessage,
      retryAfterMs: this.retryAfterMs,
    };
  }

  [inspect.custom]() {
    return `ServiceError(${this.kind}) ${this.message} ${inspect(this.toJSON())}`;
  }
}

export function isServiceError(err: unknown): err is ServiceError {
  return err instanceof ServiceError;
}

/** Which of the spec's error formats a body was. */
export type ErrorBodyFormat = 'envelope' | 'errorinfo' | 'fault' | 'tts';

interface ParsedErrorBody {
  format: ErrorBodyFormat;
  code?: number | string | undefined;
  serviceMessage?: string | undefined;
  detail?: string | undefined;
}

function asNumberIfNumeric(code: number | string): number | string {
  return typeof code === 'string' && /^\d+$/.test(code) ? Number(code) : code;
}

/**
 * Reads a service code out of any of the error formats of the spec; `undefined` when the body is none
 * of them (e.g. an HTML page from a proxy, or an empty body).
 */
export function parseErrorBody(body: unknown): ParsedErrorBody | undefined {
  const envelope = envelopeErrorSchema.safeParse(body);
  if (envelope.success && !Array.isArray(body)) {
    return { format: 'envelope', code: envelope.data.status, serviceMessage: envelope.data.message };
  }
  const elements = Array.isArray(body) ? [...body].reverse() : [body];
  for (const element of elements) {
    const carrier = errorInfoCarrierSchema.safeParse(element);
    if (carrier.success) {
      const info = carrier.data.errorinfo;
      return {
        format: 'errorinfo',
        code: asNumberIfNumeric(info.code),
        serviceMessage: info.message,
        detail: info.detail,
      };
    }
  }
  const fault = faultBodySchema.safeParse(body);
  if (fault.success) {
    const errorcode = fault.data.fault.detail?.errorcode;
    return {
      format: 'fault',
      code: errorcode === undefined ? undefined : asNumberIfNumeric(errorcode),
      serviceMessage: fault.data.fault.faultstring,
    };
  }
  const tts = ttsErrorBodySchema.safeParse(body);
  if (tts.success) return { format: 'tts', code: asNumberIfNumeric(tts.data.code), detail: tts.data.detail };
  return undefined;
}

/** `Retry-After` in seconds or as an HTTP date (RFC 9110 §10.2.3), in milliseconds from now. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface ErrorResponse {
  family: ErrorFamily;
  endpoint: string;
  httpStatus: number | undefined;
  body: unknown;
  retryAfter?: string | null | undefined;
}

/** Builds the ServiceError of an HTTP error response, or of a 200 whose envelope says `status > 0`. */
export function errorFromResponse(res: ErrorResponse): ServiceError {
  const parsed = parseErrorBody(res.body);
  const kind = classifyCode(res.family, parsed?.code, res.httpStatus, parsed?.format);
  const codeText = parsed?.code === undefined ? '' : ` code ${parsed.code}`;
  const words = [parsed?.serviceMessage, parsed?.detail].filter(Boolean).join(': ');
  return new ServiceError({
    kind,
    message: `${res.endpoint} failed (${kind}${codeText}, HTTP ${res.httpStatus ?? '-'})${words ? `: ${words}` : ''}`,
    code: parsed?.code,
    httpStatus: res.httpStatus,
    endpoint: res.endpoint,
    detail: parsed?.detail,
    serviceMessage: parsed?.serviceMessage,
    retryAfterMs: parseRetryAfter(res.retryAfter),
  });
}

/** A response that does not match its schema: names the first field at fault. */
export function errorFromSchema(
  endpoint: string,
  issues: z.core.$ZodIssue[],
  httpStatus?: number,
): ServiceError {
  const issue = issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join('.') : '(body)';
  return new ServiceError({
    kind: 'invalid',
    message: `${endpoint}: unexpected response, field ${field}: ${issue?.message ?? 'invalid'}`,
    httpStatus,
    endpoint,
    detail: `field ${field}: ${issue?.message ?? 'invalid'}`,
  });
}

/** Client-side input validation failure: the request is not sent. */
export function invalidInput(endpoint: string, detail: string): ServiceError {
  return new ServiceError({
    kind: 'invalid',
    message: `${endpoint}: invalid input: ${detail}`,
    endpoint,
    detail,
  });
}
