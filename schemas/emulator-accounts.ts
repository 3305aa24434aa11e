/**
 * Accounts of the service emulator (`emulator/`), read from `--accounts file.json`.
 *
 * An account is what the live service's account page gives a holder (spec 01, "What the service does"):
 * credentials, a kind (Developers or Enterprise), a usage limit per 24 h, a request-rate limit and a cap on
 * concurrent recognition sessions (spec 02: `550 No Resource` beyond it).
 */
import { z } from 'zod';

const ACCOUNT_KINDS = ['Developers', 'Enterprise'] as const;
export type AccountKind = (typeof ACCOUNT_KINDS)[number];

/** Default number of concurrent recognition sessions of an emulated account. */
export const DEFAULT_CONCURRENT_SESSIONS = 64;
/** Spec 01 says "not shown" for the Developers daily limit; the emulator's choice, configurable. */
export const DEFAULT_DEVELOPERS_USAGE_LIMIT = 1000;
/** Spec 01: the rate that triggers 99997 is "not shown"; the emulator's default bucket. */
export const DEFAULT_RATE_LIMIT = { requestsPerSecond: 50, burst: 100 } as const;

export const emulatorAccountSchema = z.object({
  clientId: z.string().min(1),
  clientSecret: z.string().min(1),
  kind: z.enum(ACCOUNT_KINDS).default('Enterprise'),
  /** ASR domain ids of the account (spec 02: 8 alphanumerics). The first is the account's default. */
  domainIds: z
    .array(z.string().regex(/^[A-Za-z0-9]{8}$/))
    .min(1)
    .optional(),
  /**
   * Uses allowed within any 24 h window (text-analysis calls). Developers: the daily limit (99996);
   * Enterprise: the preset limit set on the account page (99995). `null` = unlimited.
   */
  usageLimitPer24h: z.number().int().positive().nullable().optional(),
  /** Request-rate token bucket for text-analysis calls (99997); `null` switches it off. */
  rateLimit: z
    .object({ requestsPerSecond: z.number().positive(), burst: z.number().int().positive() })
    .nullable()
    .optional(),
  /** Concurrent stream recognition sessions (550 No Resource beyond it). */
  concurrentSessions: z.number().int().positive().optional(),
});
export type EmulatorAccountInput = z.input<typeof emulatorAccountSchema>;

/** The file: either `{ "accounts": [...] }` or a bare array. */
export const emulatorAccountsFileSchema = z.union([
  z.object({ accounts: z.array(emulatorAccountSchema).min(1) }),
  z
    .array(emulatorAccountSchema)
    .min(1)
    .transform((accounts) => ({ accounts })),
]);
