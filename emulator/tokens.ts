/**
 * Access tokens (spec 01, Authentication; golden `create_access_token`).
 *
 * Success is HTTP 201 with `expires_in` and `issued_at` as strings, as recorded; the recorded lifetime
 * of 24 h showed `"86399"`, so `expires_in` is the lifetime minus one second. Bad credentials: HTTP 401
 * with the recorded body `{"result":{},"message":"An error has occurred.","status":401}`.
 */
import { randomBytes } from 'node:crypto';
import type { Account } from './accounts.ts';

/** Spec 01, Limits: an access token is valid for 24 hours. */
export const DEFAULT_TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;

/** The recorded body of a failed token request (and of other gateway-level refusals). */
export function gatewayErrorBody(status: number) {
  return { result: {}, message: 'An error has occurred.', status };
}

interface TokenRecord {
  account: Account;
  issuedAt: number;
  expiresAt: number;
}

export class TokenStore {
  private tokens = new Map<string, TokenRecord>();

  private lifetimeSeconds;
  private earlyExpirySeconds?: number;
  constructor(
    lifetimeSeconds = DEFAULT_TOKEN_LIFETIME_SECONDS,
    /** Fault injection: tokens stop working this many seconds after issue, whatever they say. */
    earlyExpirySeconds?: number,
  ) {
    this.lifetimeSeconds = lifetimeSeconds;
    this.earlyExpirySeconds = earlyExpirySeconds;
  }

  setEarlyExpiry(seconds: number | undefined): void {
    this.earlyExpirySeconds = seconds;
  }

  issue(account: Account, now = Date.now()) {
    const token = randomBytes(21).toString('base64url');
    this.tokens.set(token, { account, issuedAt: now, expiresAt: now + this.lifetimeSeconds * 1000 });
    return {
      access_token: token,
      token_type: 'bearer',
      expires_in: String(Math.max(0, this.lifetimeSeconds - 1)),
      scope: '',
      issued_at: String(Math.floor(now)),
    };
  }

  /** The account of a valid token, or undefined when it is unknown, expired or revoked. */
  verify(token: string | undefined, now = Date.now()): Account | undefined {
    if (!token) return undefined;
    const record = this.tokens.get(token);
    if (!record) return undefined;
    const early =
      this.earlyExpirySeconds === undefined ? Infinity : record.issuedAt + this.earlyExpirySeconds * 1000;
    if (now >= Math.min(record.expiresAt, early)) {
      this.tokens.delete(token);
      return undefined;
    }
    return record.account;
  }

  /** Fault injection: the token stops working now. */
  revoke(token: string): void {
    this.tokens.delete(token);
  }
}
