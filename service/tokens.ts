/**
 * Access tokens (spec 01, Authentication): client-credentials request to `authUrl`, cached, refreshed
 * before expiry, one request in flight however many callers need a token, and the "refresh once on
 * 99998 / HTTP 401, then fail with an auth error" rule of docs/design.md.
 */
import { inspect } from 'node:util';
import { tokenResponseSchema, type TokenResponse } from '../schemas/service-auth.ts';
import { CostMeter } from './cost.ts';
import { ServiceError, errorFromResponse, errorFromSchema, isServiceError } from './errors.ts';
import { parseJson, sendRequest } from './http.ts';
import { Secret, REDACTED } from './secret.ts';

/** Token validity when the response does not say (spec 01, Limits: 24 hours). */
const TOKEN_VALIDITY_MS = 24 * 3_600_000;
/**
 * Refresh this long before expiry: a stream session (at most 3,000 s, spec 02 Limits) that starts with a
 * token must be able to finish with it, so one hour is kept in hand.
 */
const TOKEN_REFRESH_MARGIN_MS = 3_600_000;
/** For short-lived tokens (tests, emulators) the margin is at most this share of the validity. */
const TOKEN_REFRESH_MAX_SHARE = 0.5;
/** The token endpoint path used in errors (the auth URL itself may carry a tenant path). */
const TOKEN_ENDPOINT = 'token';

/** The client credentials; `toJSON` and `inspect` redact the secret. */
export class Credentials {
  readonly clientId: string;
  readonly #secret: Secret;

  constructor(clientId: string, clientSecret: string) {
    this.clientId = clientId;
    this.#secret = new Secret(clientSecret);
  }

  /** @internal the request body of the token call; the only place the secret is read. */
  tokenRequestBody(): string {
    return JSON.stringify({
      grantType: 'client_credentials',
      clientId: this.clientId,
      clientSecret: this.#secret.reveal(),
    });
  }

  toJSON() {
    return { clientId: this.clientId, clientSecret: REDACTED };
  }

  [inspect.custom]() {
    return `Credentials { clientId: '${this.clientId}', clientSecret: '${REDACTED}' }`;
  }
}

/** A cached access token. `value` is a {@link Secret}: it prints as `[redacted]`. */
export interface AccessToken {
  readonly value: Secret;
  /** Epoch ms (local clock) after which the token is no longer used. */
  readonly expiresAt: number;
  /** Epoch ms (local clock) after which a fresh token is fetched in the background. */
  readonly refreshAt: number;
}

export interface TokenProviderOptions {
  authUrl: string;
  credentials: Credentials;
  /** Time limit of a token request; default 30 s. */
  timeoutMs?: number | undefined;
  /** Clock, for tests. */
  now?: () => number;
  /** Receives the cost of every token request. */
  meter?: CostMeter | undefined;
}

/**
 * Caches one access token per credentials. `get()` never sends more than one token request at a time:
 * concurrent callers share the request in flight. While a still-valid token is being refreshed, callers
 * keep using it and do not wait.
 */
export class TokenProvider {
  readonly #authUrl: string;
  readonly #credentials: Credentials;
  readonly #timeoutMs: number | undefined;
  readonly #now: () => number;
  readonly #meter: CostMeter | undefined;
  #token: AccessToken | undefined;
  #inFlight: Promise<AccessToken> | undefined;
  /** Token requests sent so far (for tests and metrics). */
  requestCount = 0;

  constructor(options: TokenProviderOptions) {
    this.#authUrl = options.authUrl;
    this.#credentials = options.credentials;
    this.#timeoutMs = options.timeoutMs;
    this.#now = options.now ?? Date.now;
    this.#meter = options.meter;
  }

  /** A valid access token, fetching or refreshing it when needed. */
  async get(meter?: CostMeter): Promise<AccessToken> {
    const now = this.#now();
    const token = this.#token;
    if (token && now < token.refreshAt) return token;
    if (token && now < token.expiresAt) {
      // Stale-while-revalidate: refresh in the background, keep serving the valid token.
      this.#refresh(meter).catch(() => undefined);
      return token;
    }
    return this.#refresh(meter);
  }

  /**
   * Drops `token` when the service rejected it (99998 / HTTP 401), so the next `get()` fetches a new
   * one. A token other than the cached one (already replaced by a concurrent caller) is ignored, so a
   * burst of rejections costs one token request, not one each.
   */
  invalidate(token: AccessToken): void {
    if (this.#token === token) this.#token = undefined;
  }

  /** Forgets the cached token. */
  clear(): void {
    this.#token = undefined;
  }

  #refresh(meter?: CostMeter): Promise<AccessToken> {
    if (!this.#inFlight) {
      this.#inFlight = this.#request(meter).finally(() => {
        this.#inFlight = undefined;
      });
    }
    return this.#inFlight;
  }

  async #request(meter?: CostMeter): Promise<AccessToken> {
    const endpoint = TOKEN_ENDPOINT;
    this.requestCount += 1;
    const callMeter = new CostMeter(meter ?? this.#meter);
    const res = await sendRequest({
      url: this.#authUrl,
      headers: { 'Content-Type': 'application/json' },
      body: this.#credentials.tokenRequestBody(),
      endpoint,
      family: 'auth',
      timeoutMs: this.#timeoutMs,
      meter: callMeter,
    });
    let data: TokenResponse;
    try {
      data = parseTokenResponse(res.status, parseJson(res.text));
    } catch (err) {
      if (isServiceError(err)) err.cost = callMeter.snapshot();
      throw err;
    }
    const received = this.#now();
    const validityMs = Number.isFinite(data.expires_in) ? data.expires_in * 1000 : TOKEN_VALIDITY_MS;
    const margin = Math.min(TOKEN_REFRESH_MARGIN_MS, validityMs * TOKEN_REFRESH_MAX_SHARE);
    const token: AccessToken = {
      value: new Secret(data.access_token),
      expiresAt: received + validityMs,
      refreshAt: received + validityMs - margin,
    };
    this.#token = token;
    return token;
  }

  toJSON() {
    return {
      authUrl: this.#authUrl,
      credentials: this.#credentials.toJSON(),
      token: this.#token ? REDACTED : undefined,
    };
  }

  [inspect.custom]() {
    return `TokenProvider ${inspect(this.toJSON())}`;
  }
}

/**
 * Reads a token response: 200 or 201 (the real service answered 201) with the fields of spec 01;
 * anything else is a ServiceError (bad credentials: `auth`, from the recorded 401 envelope).
 */
export function parseTokenResponse(httpStatus: number, body: unknown): TokenResponse {
  if (httpStatus !== 200 && httpStatus !== 201) {
    throw errorFromResponse({ family: 'auth', endpoint: TOKEN_ENDPOINT, httpStatus, body });
  }
  const parsed = tokenResponseSchema.safeParse(body);
  if (!parsed.success) throw errorFromSchema(TOKEN_ENDPOINT, parsed.error.issues, httpStatus);
  return parsed.data;
}

/** Whether an error means "the access token was rejected": 99998 or HTTP 401 (spec 01, Errors). */
function isTokenRejection(err: unknown): err is ServiceError {
  return isServiceError(err) && err.kind === 'auth' && (err.code === 99998 || err.httpStatus === 401);
}

/**
 * Runs `call` with a token; when the service rejects the token, refreshes once and runs `call` again;
 * a second rejection becomes an auth error that says what to check (docs/design.md, Error handling).
 */
export async function withToken<T>(
  tokens: TokenProvider,
  meter: CostMeter,
  call: (token: AccessToken) => Promise<T>,
): Promise<T> {
  const first = await tokens.get(meter);
  try {
    return await call(first);
  } catch (err) {
    if (!isTokenRejection(err)) throw err;
    tokens.invalidate(first);
  }
  meter.addRetry();
  const second = await tokens.get(meter);
  try {
    return await call(second);
  } catch (err) {
    if (!isTokenRejection(err)) throw err;
    tokens.invalidate(second);
    throw new ServiceError({
      kind: 'auth',
      message: `${err.endpoint ?? 'request'} rejected a freshly issued access token (code ${err.code ?? err.httpStatus}): check the client id and secret and the account's access to this endpoint`,
      code: err.code,
      httpStatus: err.httpStatus,
      endpoint: err.endpoint,
      detail: err.detail,
      serviceMessage: err.serviceMessage,
      cost: meter.snapshot(),
    });
  }
}
