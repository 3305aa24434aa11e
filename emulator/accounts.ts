/**
 * Accounts and their limits (spec 01, "What the service does" and "Limits").
 *
 * - usage: uses of text analysis within a sliding 24 h window; beyond the limit, 99996 for Developers and
 *   99995 for Enterprise accounts.
 * - rate: a token bucket per account; an empty bucket answers 99997.
 * - concurrent recognition sessions: a count of live stream sessions; beyond it, 550 No Resource.
 *
 * The usage window and the bucket run on wall-clock time, not divided by `--speed`: they limit the
 * client's request throughput, which speed does not change.
 */
import { readFileSync } from 'node:fs';
import { LOCAL_CLIENT_ID, LOCAL_CLIENT_SECRET, LOCAL_DOMAIN_ID } from '../schemas/config.ts';
import {
  DEFAULT_CONCURRENT_SESSIONS,
  DEFAULT_DEVELOPERS_USAGE_LIMIT,
  DEFAULT_RATE_LIMIT,
  emulatorAccountSchema,
  emulatorAccountsFileSchema,
  type AccountKind,
  type EmulatorAccountInput,
} from '../schemas/emulator-accounts.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

export class Account {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly kind: AccountKind;
  readonly domainIds: string[];
  readonly usageLimit: number | null;
  readonly rateLimit: { requestsPerSecond: number; burst: number } | null;
  readonly concurrentSessions: number;
  activeSessions = 0;
  /** Most sessions open at once since start or the last stats reset (the evidence of a session budget). */
  peakSessions = 0;
  private uses: number[] = [];
  private tokens: number;
  private refilledAt: number;

  constructor(input: EmulatorAccountInput, now = Date.now()) {
    const a = emulatorAccountSchema.parse(input);
    this.clientId = a.clientId;
    this.clientSecret = a.clientSecret;
    this.kind = a.kind;
    this.domainIds = a.domainIds ?? [LOCAL_DOMAIN_ID];
    this.usageLimit =
      a.usageLimitPer24h === undefined
        ? a.kind === 'Developers'
          ? DEFAULT_DEVELOPERS_USAGE_LIMIT
          : null
        : a.usageLimitPer24h;
    this.rateLimit = a.rateLimit === undefined ? { ...DEFAULT_RATE_LIMIT } : a.rateLimit;
    this.concurrentSessions = a.concurrentSessions ?? DEFAULT_CONCURRENT_SESSIONS;
    this.tokens = this.rateLimit?.burst ?? 0;
    this.refilledAt = now;
  }

  /** A session opened (the caller checked the cap). */
  sessionOpened(): void {
    this.activeSessions += 1;
    this.peakSessions = Math.max(this.peakSessions, this.activeSessions);
  }

  /** Takes one token from the bucket; false when the burst is used up (99997). */
  takeRateToken(now = Date.now()): boolean {
    if (!this.rateLimit) return true;
    const { requestsPerSecond, burst } = this.rateLimit;
    this.tokens = Math.min(burst, this.tokens + ((now - this.refilledAt) / 1000) * requestsPerSecond);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Counts one use; false when the 24 h limit is reached (the use is then not counted). */
  takeUse(now = Date.now()): boolean {
    if (this.usageLimit === null) return true;
    while (this.uses.length > 0 && this.uses[0]! <= now - DAY_MS) this.uses.shift();
    if (this.uses.length >= this.usageLimit) return false;
    this.uses.push(now);
    return true;
  }

  /** The envelope status for a used-up limit (spec 01, Errors). */
  get usageErrorCode(): 99995 | 99996 {
    return this.kind === 'Developers' ? 99996 : 99995;
  }
}

/** The default account: the local stack's credentials (schemas/config.ts), Enterprise. */
export function defaultAccountInput(overrides: Partial<EmulatorAccountInput> = {}): EmulatorAccountInput {
  return {
    clientId: LOCAL_CLIENT_ID,
    clientSecret: LOCAL_CLIENT_SECRET,
    kind: 'Enterprise',
    domainIds: [LOCAL_DOMAIN_ID],
    concurrentSessions: DEFAULT_CONCURRENT_SESSIONS,
    ...overrides,
  };
}

export function readAccountsFile(path: string): EmulatorAccountInput[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`accounts file ${path}: ${(err as Error).message}`);
  }
  const parsed = emulatorAccountsFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`accounts file ${path}: ${issue.path.join('.')}: ${issue.message}`);
  }
  return parsed.data.accounts;
}

export class AccountStore {
  private byId = new Map<string, Account>();

  constructor(inputs: EmulatorAccountInput[], now: () => number = Date.now) {
    for (const input of inputs) {
      const account = new Account(input, now());
      this.byId.set(account.clientId, account);
    }
  }

  /** The account for these credentials, or undefined when they are wrong. */
  authenticate(clientId: unknown, clientSecret: unknown): Account | undefined {
    if (typeof clientId !== 'string' || typeof clientSecret !== 'string') return undefined;
    const account = this.byId.get(clientId);
    return account && account.clientSecret === clientSecret ? account : undefined;
  }

  all(): Account[] {
    return [...this.byId.values()];
  }
}
