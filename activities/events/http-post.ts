/**
 * One POST of an event to a receiver, bounded and without surprises: a request (answer included) that
 * takes longer than the timeout is abandoned; a redirect is followed only to the same origin and only
 * when it keeps the method (307, 308), at most {@link MAX_REDIRECTS} times; a redirect to another host is
 * never followed (the event would go somewhere nobody configured). Every failure is a
 * {@link DeliveryAttemptError} whose message says what the receiver did, never the URL (a webhook URL can
 * hold a token); a 429 or 503 with `Retry-After` says how long to wait.
 */

export const MAX_REDIRECTS = 3;
/** The longest Retry-After honoured; a later one waits the retry policy's longest delay instead. */
const MAX_RETRY_AFTER_MS = 6 * 3_600_000;

export class DeliveryAttemptError extends Error {
  override name = 'DeliveryAttemptError';
  readonly retryAfterMs: number | undefined;
  constructor(message: string, retryAfterMs?: number) {
    super(message);
    this.retryAfterMs = retryAfterMs;
  }
}

export interface PostOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  fetch?: typeof fetch;
}

function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - now;
  return Number.isFinite(ms) && ms >= 0 ? Math.min(ms, MAX_RETRY_AFTER_MS) : undefined;
}

function networkReason(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError')
    return `no complete answer within ${timeoutMs / 1000} s (the request was abandoned)`;
  const code = e?.cause?.code;
  if (code === 'ECONNREFUSED') return 'the receiver refused the connection (nothing listens there)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the receiver’s host name does not resolve';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'the receiver closed the connection';
  return `the request failed: ${code ?? e?.cause?.message ?? e?.message ?? String(err)}`;
}

/** POSTs `body`; resolves with the status of a 2xx answer, throws {@link DeliveryAttemptError} otherwise. */
export async function postEvent(options: PostOptions): Promise<{ status: number; redirects: number }> {
  const doFetch = options.fetch ?? fetch;
  const signal = AbortSignal.timeout(options.timeoutMs);
  const origin = new URL(options.url).origin;
  let url = options.url;
  for (let redirects = 0; ; redirects++) {
    let res: Response;
    try {
      res = await doFetch(url, {
        method: 'POST',
        body: options.body,
        headers: options.headers,
        redirect: 'manual',
        signal,
      });
      // The answer's body is not needed; reading it to its end (bounded by the same timeout) frees the socket.
      await res.arrayBuffer();
    } catch (err) {
      throw new DeliveryAttemptError(networkReason(err, options.timeoutMs));
    }
    if (res.status >= 200 && res.status < 300) return { status: res.status, redirects };
    if (res.status >= 300 && res.status < 400) {
      const location = res.headers.get('location');
      let target: URL | undefined;
      try {
        target = location ? new URL(location, url) : undefined;
      } catch {
        target = undefined;
      }
      if (!target) throw new DeliveryAttemptError(`answered HTTP ${res.status} with no usable Location`);
      if (target.origin !== origin)
        throw new DeliveryAttemptError(
          `redirected (HTTP ${res.status}) to another host (${target.hostname}): not followed; configure the URL it redirects to`,
        );
      if (res.status !== 307 && res.status !== 308)
        throw new DeliveryAttemptError(
          `answered HTTP ${res.status}: a redirect that would turn the POST into a GET; configure the URL it redirects to`,
        );
      if (redirects >= MAX_REDIRECTS) throw new DeliveryAttemptError(`more than ${MAX_REDIRECTS} redirects`);
      url = target.href;
      continue;
    }
    const wait =
      res.status === 429 || res.status === 503 ? retryAfterMs(res.headers.get('retry-after')) : undefined;
    throw new DeliveryAttemptError(`answered HTTP ${res.status}`, wait);
  }
}
