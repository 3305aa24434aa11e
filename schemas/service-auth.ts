/**
 * Messages of the token endpoint (spec 01, Authentication).
 *
 * The recorded service answered 201 with `expires_in` and `issued_at` as *strings*, the
 * spec's table says "string in the sample": both strings and numbers are accepted and coerced.
 */
import { z } from 'zod';

/** `"86399"` or `86399`; must be a finite non-negative number once coerced. */
const numeric = z.union([z.number(), z.string().regex(/^\d+(\.\d+)?$/)]).transform((v) => Number(v));

/** Successful token response (spec 01, Authentication, step 2). */
export const tokenResponseSchema = z.object({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  /** Remaining validity in seconds. */
  expires_in: numeric,
  scope: z.string().optional(),
  /** Issue time in epoch milliseconds; informative only (clocks differ), validity is taken from `expires_in`. */
  issued_at: numeric.optional(),
});
export type TokenResponse = z.infer<typeof tokenResponseSchema>;
