/**
 * Error bodies of the Language Analysis Service, one schema per format the spec describes. The client
 * tries them in this order (service/errors.ts): the `nlp` envelope with `status > 0` (spec 01,
 * Errors; also the token endpoint's 401 as recorded), the stream/file recognition array whose last
 * element carries `errorinfo` (spec 02, Errors; as the official sample clients read it), the `{fault: …}` body (spec 02, Recognition
 * from file), and the speech-synthesis `{code, detail}` body (spec 03, Errors).
 */
import { z } from 'zod';

/** `nlp` envelope of a failed call: `status` > 0 (spec 01, Common response envelope). */
export const envelopeErrorSchema = z.object({
  status: z.number().int().positive(),
  message: z.string().optional(),
  result: z.unknown().optional(),
});

/** `errorinfo` of a recognition error or of a `completed` message (spec 02, Server message). */
export const errorInfoSchema = z.object({
  code: z.union([z.number(), z.string()]),
  message: z.string().optional(),
  level: z.union([z.string(), z.number()]).optional(),
  detail: z.string().optional(),
});

/** An element carrying `errorinfo` (the last element of an error array, or a `completed` message). */
export const errorInfoCarrierSchema = z.looseObject({ errorinfo: errorInfoSchema });

/** `{fault: {faultstring, detail: {errorcode}}}` (spec 02, Recognition from file). */
export const faultBodySchema = z.object({
  fault: z.object({
    faultstring: z.string().optional(),
    detail: z.looseObject({ errorcode: z.union([z.string(), z.number()]).optional() }).optional(),
  }),
});

/** Speech-synthesis error body `{code, detail}` (spec 03, Errors). */
export const ttsErrorBodySchema = z.object({
  code: z.union([z.string(), z.number()]),
  detail: z.string().optional(),
});
