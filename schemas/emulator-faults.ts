/**
 * Fault injection of the service emulator (`--faults file.json`, or `faults` in `startEmulator`).
 *
 * Every random decision draws from one generator seeded by `seed`, so a run with the same requests in the
 * same order injects the same faults. Times in `schedule` are wall-clock seconds since the emulator
 * started; they are not divided by `--speed` (they describe the service's weather, not audio time).
 */
import { z } from 'zod';

const probability = z.number().min(0).max(1);
/** Which families a fault applies to: token endpoint, text analysis, speech recognition. */
const families = z.array(z.enum(['token', 'nlp', 'asr'])).min(1);
const window = z.object({ fromSeconds: z.number().nonnegative(), toSeconds: z.number().positive() });

/** Stream recognition errors the emulator can inject mid-stream (spec 02, Errors). */
const INJECTABLE_STREAM_ERRORS = [550, 552, 600, 651] as const;

export const emulatorFaultsSchema = z.object({
  seed: z.number().int().optional(),
  /** Text-analysis calls answered `99997` (burst blocked): by probability, or inside scheduled windows. */
  rateLimitBursts: z
    .object({ probability: probability.default(0), schedule: z.array(window).default([]) })
    .optional(),
  /** Mid-stream recognition errors on audio requests. */
  streamErrors: z
    .array(
      z.object({
        code: z.union(INJECTABLE_STREAM_ERRORS.map((c) => z.literal(c))),
        /** Fire on the first audio request at which the session has received at least this much audio. */
        afterAudioSeconds: z.number().nonnegative().optional(),
        /** Or: probability per audio request. */
        probability: probability.optional(),
        /** At most this many injections over the emulator's life (default unlimited). */
        times: z.number().int().positive().optional(),
      }),
    )
    .default([]),
  /** The socket is destroyed without an answer. */
  dropConnections: z.object({ probability, families: families.optional() }).optional(),
  /** Extra latency before an answer. */
  latency: z
    .object({
      ms: z.number().nonnegative(),
      probability: probability.default(1),
      families: families.optional(),
    })
    .optional(),
  /** An HTTP 5xx with a non-JSON body, as a proxy in front of the service would answer. */
  serverErrors: z
    .object({
      probability,
      status: z.number().int().min(500).max(599).default(502),
      body: z.string().default('<html><body><h1>502 Bad Gateway</h1></body></html>'),
      families: families.optional(),
    })
    .optional(),
  /** Access tokens that stop working early: after `afterSeconds`, or at random per request. */
  tokenExpiry: z
    .object({ afterSeconds: z.number().positive().optional(), probability: probability.optional() })
    .optional(),
});
export type EmulatorFaultsInput = z.input<typeof emulatorFaultsSchema>;
export type EmulatorFaults = z.infer<typeof emulatorFaultsSchema>;
