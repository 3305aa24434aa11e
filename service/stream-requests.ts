/**
 * The HTTP side of one stream recognition session (spec 02): every request after the start carries the
 * `Unique-ID` header and the cookies of the previous response (they rotate with every response, error
 * responses included), and every answer is checked against the server message schema.
 */
import { serverMessagesSchema, type ServerMessage } from '../schemas/service-asr.ts';
import type { ClientContext } from './context.ts';
import { CookieJar } from './cookie-jar.ts';
import type { CostMeter } from './cost.ts';
import { errorFromResponse, errorFromSchema } from './errors.ts';
import { parseJson, sendRequest } from './http.ts';
import { withToken, type AccessToken } from './tokens.ts';

/** Time limit of a cancel request sent while aborting (best effort). */
const CANCEL_TIMEOUT_MS = 2_000;

export const JSON_CONTENT_TYPE = 'application/json; charset=UTF-8';
export const AUDIO_CONTENT_TYPE = 'application/octet-stream';

/** The body of a session's control request (`stop` or `cancel`). */
export function controlMessage(msgname: 'stop' | 'cancel'): string {
  return JSON.stringify({ msg: { msgname } });
}

export class StreamRequests {
  /** `/asr/v1/speech_recognition/<model>`: the endpoint named in errors and metrics. */
  readonly endpoint: string;
  readonly #url: string;
  /** The same, parsed once: the cookie jar reads its host and path on every request. */
  readonly #target: URL;
  readonly #jar = new CookieJar();
  readonly #ctx: ClientContext;
  readonly #meter: CostMeter;
  readonly #uniqueId: () => string | undefined;

  /** `uniqueId`: the session's id once the service gave it (sent on every request from then on). */
  constructor(ctx: ClientContext, meter: CostMeter, model: string, uniqueId: () => string | undefined) {
    this.#ctx = ctx;
    this.#meter = meter;
    this.#uniqueId = uniqueId;
    this.endpoint = `/asr/v1/speech_recognition/${model}`;
    this.#url = `${ctx.asrBaseUrl}${this.endpoint}`;
    this.#target = new URL(this.#url);
  }

  #headers(token: AccessToken, contentType: string): Record<string, string> {
    const headers: Record<string, string> = {
      Connection: 'Keep-Alive',
      'Content-Type': contentType,
      Authorization: `Bearer ${token.value.reveal()}`,
    };
    const uniqueId = this.#uniqueId();
    if (uniqueId !== undefined) headers['Unique-ID'] = uniqueId;
    const cookie = this.#jar.headerFor(this.#target);
    if (cookie !== undefined) headers.Cookie = cookie;
    return headers;
  }

  /** One request of the session (token refreshed once if refused): its server messages, or a ServiceError. */
  post(
    body: string | Uint8Array,
    contentType: string,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<ServerMessage[]> {
    const { endpoint } = this;
    return withToken(this.#ctx.tokens, this.#meter, async (token: AccessToken) => {
      const res = await sendRequest({
        url: this.#url,
        headers: this.#headers(token, contentType),
        body,
        endpoint,
        family: 'asr',
        timeoutMs,
        signal,
        meter: this.#meter,
      });
      // Cookies rotate with every response, error responses included.
      this.#jar.setFromResponse(this.#target, res.headers.getSetCookie());
      if (res.status === 204) return [];
      const parsedBody = parseJson(res.text);
      if (res.status !== 200) {
        throw errorFromResponse({
          family: 'asr',
          endpoint,
          httpStatus: res.status,
          body: parsedBody,
          retryAfter: res.headers.get('retry-after'),
        });
      }
      const messages = serverMessagesSchema.safeParse(parsedBody);
      if (!messages.success) throw errorFromSchema(endpoint, messages.error.issues, res.status);
      return messages.data;
    });
  }

  /** On abort: tell the service, without waiting long and without the aborted signal. */
  async cancelBestEffort(): Promise<void> {
    try {
      const token = await this.#ctx.tokens.get(this.#meter);
      await sendRequest({
        url: this.#url,
        headers: this.#headers(token, JSON_CONTENT_TYPE),
        body: controlMessage('cancel'),
        endpoint: this.endpoint,
        family: 'asr',
        timeoutMs: CANCEL_TIMEOUT_MS,
        meter: this.#meter,
      });
    } catch {
      // The session is being abandoned; the service times it out on its own (spec 02: 651).
    }
  }
}
