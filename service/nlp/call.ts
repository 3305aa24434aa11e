/**
 * One text-analysis request: token, per-family concurrency limit, envelope check, result validation.
 * Shared by every `nlp` endpoint (spec 01, Common response envelope).
 */
import type { z } from 'zod';
import { successEnvelopeSchema } from '../../schemas/service-nlp.ts';
import type { ClientContext } from '../context.ts';
import { CostMeter, type CallCost } from '../cost.ts';
import { errorFromResponse, errorFromSchema, isServiceError } from '../errors.ts';
import { parseJson, sendRequest } from '../http.ts';
import { withToken } from '../tokens.ts';

/** Options every text call takes. */
export interface NlpCallOptions {
  signal?: AbortSignal | undefined;
  /** Time limit of each request; default the client's `nlpTimeoutMs` (30 s). */
  timeoutMs?: number | undefined;
  /** Adds this call's cost to an aggregate (e.g. per recording). */
  meter?: CostMeter | undefined;
}

/** Every text call resolves to its result and what it cost. */
export interface NlpResponse<T> {
  result: T;
  cost: CallCost;
}

/**
 * Reads an `nlp` response: HTTP 200 with `status` 0 and a `result` matching `schema`. Any other status,
 * or `status > 0` in the envelope at any HTTP status, is a ServiceError classified from its code; a body
 * that does not match is an `invalid` error naming the field.
 */
export function parseNlpResponse<S extends z.ZodType>(
  endpoint: string,
  schema: S,
  httpStatus: number,
  body: unknown,
  retryAfter?: string | null,
): z.infer<S> {
  const status = (body as { status?: unknown } | undefined)?.status;
  if (httpStatus !== 200 || (typeof status === 'number' && status > 0)) {
    throw errorFromResponse({ family: 'nlp', endpoint, httpStatus, body, retryAfter });
  }
  const parsed = successEnvelopeSchema(schema).safeParse(body);
  if (!parsed.success) throw errorFromSchema(endpoint, parsed.error.issues, httpStatus);
  return (parsed.data as { result: z.infer<S> }).result;
}

/** Sends `body` as JSON to `{baseUrl}{path}` and returns the validated `result`. */
export function callNlp<S extends z.ZodType>(
  ctx: ClientContext,
  path: string,
  body: unknown,
  schema: S,
  options: NlpCallOptions = {},
): Promise<NlpResponse<z.infer<S>>> {
  const request = {
    method: 'POST',
    body: JSON.stringify(body),
    contentType: 'application/json;charset=UTF-8',
  };
  return requestNlp(ctx, path, request as NlpRequest, schema, options);
}

/** An `nlp` request of any method and body: text classification also lists, deletes and uploads files. */
export interface NlpRequest {
  method: 'POST' | 'GET' | 'DELETE';
  body?: string | Uint8Array | undefined;
  contentType?: string | undefined;
}

/** Sends one `nlp` request under the token and the family's limiter; the validated `result`. */
export async function requestNlp<S extends z.ZodType>(
  ctx: ClientContext,
  path: string,
  request: NlpRequest,
  schema: S,
  options: NlpCallOptions = {},
): Promise<NlpResponse<z.infer<S>>> {
  const meter = new CostMeter(options.meter);
  try {
    const result = await ctx.limiters.nlp(() =>
      withToken(ctx.tokens, meter, async (token) => {
        const res = await sendRequest({
          url: `${ctx.nlpBaseUrl}${path}`,
          method: request.method,
          headers: {
            ...(request.contentType ? { 'Content-Type': request.contentType } : {}),
            Authorization: `Bearer ${token.value.reveal()}`,
          },
          body: request.body,
          endpoint: path,
          family: 'nlp',
          timeoutMs: options.timeoutMs ?? ctx.nlpTimeoutMs,
          signal: options.signal,
          meter,
        });
        return parseNlpResponse(
          path,
          schema,
          res.status,
          parseJson(res.text),
          res.headers.get('retry-after'),
        );
      }),
    );
    return { result, cost: meter.snapshot() };
  } catch (err) {
    if (isServiceError(err)) err.cost = meter.snapshot();
    ctx.logger.debug('nlp call failed', {
      endpoint: path,
      error: isServiceError(err) ? err.toJSON() : String(err),
    });
    throw err;
  }
}
