/**
 * One POST of an event to a receiver (a webhook or Slack), bounded and without surprises: the whole
 * exchange (redirects and answers included) is abandoned at the timeout; of an answer only its status and
 * headers matter, so at most {@link MAX_ANSWER_BYTES} of its body are read and a larger one is cut off
 * (a receiver can answer with a body of any size: read whole, it would fill the worker's memory); a
 * delivery counts only for a 2xx answered within both bounds. A redirect is followed only to the same
 * origin and only when it keeps the method (307, 308), at most {@link MAX_REDIRECTS} times; a redirect
 * elsewhere is never followed (the event would go somewhere nobody configured). Every failure is a
 * {@link DeliveryAttemptError} whose message says what the receiver did, never the URL (a webhook URL can
 * hold a token); a 429 or 503 with `Retry-After` says how long to wait.
 */

const MAX_REDIRECTS = 3;
/** The most of an answer's body read (docs/input-limits.md); receivers answer `ok` or a short JSON. */
export const MAX_ANSWER_BYTES = 16 * 1024;
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

/**
 * Reads an answer's body to its end if it is at most {@link MAX_ANSWER_BYTES} (which frees the socket for
 * the next request); a larger one, announced by Content-Length or found while reading, is cancelled there
 * (its connection closed). False when it was larger.
 */
async function drainAnswer(res: Response): Promise<boolean> {
  if (!res.body) return true;
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > MAX_ANSWER_BYTES) {
    await res.body.cancel();
    return false;
  }
  const reader = res.body.getReader();
  let read = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return true;
    read += value.byteLength;
    if (read > MAX_ANSWER_BYTES) {
      await reader.cancel();
      return false;
    }
  }
}

/** Where a redirect would go, told apart from the configured URL (never a path or a query: tokens). */
function elsewhere(from: URL, to: URL): string {
  if (to.hostname !== from.hostname) return `another host (${to.hostname})`;
  if (to.protocol !== from.protocol)
    return `another scheme (${to.protocol.replace(':', '')} on the same host)`;
  return `another port (${to.port || (to.protocol === 'https:' ? '443' : '80')} on the same host)`;
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
    } catch (err) {
      throw new DeliveryAttemptError(networkReason(err, options.timeoutMs));
    }
    let withinBound: boolean;
    try {
      withinBound = await drainAnswer(res);
    } catch (err) {
      throw new DeliveryAttemptError(
        `answered HTTP ${res.status}, then ${networkReason(err, options.timeoutMs)}`,
      );
    }
    if (res.status >= 200 && res.status < 300) {
      if (!withinBound)
        throw new DeliveryAttemptError(
          `answered HTTP ${res.status} with a body of more than ${MAX_ANSWER_BYTES / 1024} KiB: cut off there, not counted as delivered (a receiver's answer is its status and headers)`,
        );
      return { status: res.status, redirects };
    }
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
          `redirected (HTTP ${res.status}) to ${elsewhere(new URL(url), target)}: not followed; configure the URL it redirects to`,
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
