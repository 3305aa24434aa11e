/**
 * A small cookie jar for one recognition session (spec 02, Recognition from stream): the rotating
 * `token` cookie (it identifies request order, so every request must carry the one set by the last
 * response) and the load-balancer cookie of the ready response (it pins the session to one server).
 *
 * Our own rather than a library's: the rules we need are few (RFC 6265 §5.2–5.4: name/value, Domain,
 * Path, Max-Age/Expires, Secure), and one rule deliberately follows browsers rather than older jars:
 * a `Secure` cookie is kept and sent over plain HTTP to a loopback host (RFC 6265bis "potentially
 * trustworthy" origins), because ordinary HTTP clients drop it over plain HTTP, which would break every
 * session against a local emulator that marks its cookies `Secure`.
 */

export interface StoredCookie {
  name: string;
  value: string;
  /** Host the cookie was set by, or the Domain attribute (lower case, no leading dot). */
  domain: string;
  /** True when no Domain attribute: only the exact host gets it. */
  hostOnly: boolean;
  path: string;
  secure: boolean;
  /** Epoch ms, or undefined for a session cookie. */
  expiresAt: number | undefined;
}

function isLoopback(host: string): boolean {
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '[::1]' ||
    host === '::1' ||
    /^127\./.test(host)
  );
}

/** Secure transport in the RFC 6265bis sense: HTTPS, or a loopback host. */
function isTrustworthy(url: URL): boolean {
  return url.protocol === 'https:' || isLoopback(url.hostname);
}

function defaultPath(url: URL): string {
  const path = url.pathname;
  if (!path.startsWith('/') || path.lastIndexOf('/') === 0) return '/';
  return path.slice(0, path.lastIndexOf('/'));
}

function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/';
}

function domainMatches(host: string, cookie: StoredCookie): boolean {
  if (cookie.hostOnly) return host === cookie.domain;
  return host === cookie.domain || host.endsWith(`.${cookie.domain}`);
}

export class CookieJar {
  readonly #cookies = new Map<string, StoredCookie>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Stores the cookies of every `Set-Cookie` header of a response from `url`. */
  setFromResponse(url: string | URL, setCookieHeaders: readonly string[]): void {
    const target = typeof url === 'string' ? new URL(url) : url;
    for (const header of setCookieHeaders) this.set(target, header);
  }

  /** Stores one `Set-Cookie` header value (RFC 6265 §5.2), ignoring malformed ones. */
  set(url: URL, header: string): void {
    const [pair = '', ...attributes] = header.split(';');
    const eq = pair.indexOf('=');
    if (eq <= 0) return;
    const name = pair.slice(0, eq).trim();
    const value = pair
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    if (name === '') return;
    const host = url.hostname.toLowerCase();
    const cookie: StoredCookie = {
      name,
      value,
      domain: host,
      hostOnly: true,
      path: defaultPath(url),
      secure: false,
      expiresAt: undefined,
    };
    let maxAgeSeen = false;
    for (const attribute of attributes) {
      const i = attribute.indexOf('=');
      const key = (i < 0 ? attribute : attribute.slice(0, i)).trim().toLowerCase();
      const val = i < 0 ? '' : attribute.slice(i + 1).trim();
      if (key === 'secure') cookie.secure = true;
      else if (key === 'path' && val.startsWith('/')) cookie.path = val;
      else if (key === 'domain' && val !== '') {
        const domain = val.replace(/^\./, '').toLowerCase();
        // A server may not set a cookie for a domain it is not in (RFC 6265 §5.3 step 6).
        if (host !== domain && !host.endsWith(`.${domain}`)) return;
        cookie.domain = domain;
        cookie.hostOnly = false;
      } else if (key === 'max-age' && /^-?\d+$/.test(val)) {
        maxAgeSeen = true;
        const seconds = Number(val);
        cookie.expiresAt = seconds <= 0 ? 0 : this.#now() + seconds * 1000;
      } else if (key === 'expires' && !maxAgeSeen) {
        const at = Date.parse(val);
        if (!Number.isNaN(at)) cookie.expiresAt = at;
      }
    }
    if (cookie.secure && !isTrustworthy(url)) return;
    const key = `${cookie.domain};${cookie.path};${cookie.name}`;
    if (cookie.expiresAt !== undefined && cookie.expiresAt <= this.#now()) {
      this.#cookies.delete(key);
      return;
    }
    this.#cookies.set(key, cookie);
  }

  /** The `Cookie` header for a request to `url` (RFC 6265 §5.4), or undefined when no cookie applies. */
  headerFor(url: string | URL): string | undefined {
    const target = typeof url === 'string' ? new URL(url) : url;
    const host = target.hostname.toLowerCase();
    const now = this.#now();
    const matching: StoredCookie[] = [];
    for (const [key, cookie] of this.#cookies) {
      if (cookie.expiresAt !== undefined && cookie.expiresAt <= now) {
        this.#cookies.delete(key);
        continue;
      }
      if (!domainMatches(host, cookie) || !pathMatches(target.pathname, cookie.path)) continue;
      if (cookie.secure && !isTrustworthy(target)) continue;
      matching.push(cookie);
    }
    if (matching.length === 0) return undefined;
    // Longer paths first (RFC 6265 §5.4 step 2).
    matching.sort((a, b) => b.path.length - a.path.length);
    return matching.map((c) => `${c.name}=${c.value}`).join('; ');
  }

  /** Value of a cookie by name (any domain/path), for diagnostics and tests. Never log it. */
  get(name: string): string | undefined {
    for (const cookie of this.#cookies.values()) if (cookie.name === name) return cookie.value;
    return undefined;
  }

  /** Cookie names held (values are session credentials and stay inside). */
  names(): string[] {
    return [...new Set([...this.#cookies.values()].map((c) => c.name))];
  }

  toJSON() {
    return { cookies: this.names() };
  }
}
