/**
 * Messages of stream recognition (spec 02): the start message the client sends and the server messages
 * that come back in response arrays.
 *
 * The start message's `param` keys are flat names containing a dot (`baseParam.samplingRate`), not
 * nested objects (spec 02, Start parameters).
 */
import { z } from 'zod';
import { errorInfoSchema } from './service-errors.ts';

/** Temporary dictionary entry as sent (spec 02, Temporary dictionary entry). */
export const temporaryWordSchema = z.object({
  surface: z.string(),
  reading: z.string(),
  prob: z.number().optional(),
});
export type TemporaryWord = z.infer<typeof temporaryWordSchema>;

/** The start message exactly as it goes on the wire. */
export const startMessageSchema = z.object({
  msg: z.object({ msgname: z.literal('start') }),
  param: z
    .object({
      'baseParam.samplingRate': z.number().int(),
      'recognizeParameter.domainId': z.string(),
      'baseParam.audioCodec': z.enum(['pcm', 'mulaw']).optional(),
      'baseParam.filler': z.boolean().optional(),
      'baseParam.punctuation': z.boolean().optional(),
      'baseParam.reading': z.boolean().optional(),
      'baseParam.delimiter': z.boolean().optional(),
      'recognizeParameter.enableContinuous': z.boolean().optional(),
      'recognizeParameter.enableProgress': z.boolean().optional(),
      'recognizeParameter.maxResults': z.number().int().optional(),
    })
    .strict(),
  words: z.array(temporaryWordSchema).optional(),
});
export type StartMessage = z.infer<typeof startMessageSchema>;

/** One candidate sentence of a `recognized` message (spec 02, Server message). */
const recognizedSentenceSchema = z.looseObject({
  surface: z.string(),
  score: z.number().optional(),
  /** Seconds from the start of the audio sent in this session. */
  startTime: z.number(),
  endTime: z.number(),
  reading: z.string().optional(),
});
export type RecognizedSentence = z.infer<typeof recognizedSentenceSchema>;

const msgHeader = (name: string) =>
  z.looseObject({ msgname: z.literal(name), uniqueId: z.string().optional() });

const startedMessageSchema = z.looseObject({ msg: msgHeader('started') });
export const speechStartDetectedSchema = z.looseObject({
  msg: msgHeader('speechStartDetected'),
  timeinfo: z.looseObject({ startDetectTime: z.number() }),
});
export const speechEndDetectedSchema = z.looseObject({
  msg: msgHeader('speechEndDetected'),
  timeinfo: z.looseObject({ endDetectTime: z.number() }),
});
export const recognizedMessageSchema = z.looseObject({
  msg: msgHeader('recognized'),
  result: z.looseObject({
    /** 0 interim, 1 final with sentences, 2 end marker with an empty array (spec 02, Server message). */
    type: z.number().int(),
    sentence: z.array(recognizedSentenceSchema),
  }),
});
export const completedMessageSchema = z.looseObject({
  msg: z.looseObject({
    msgname: z.literal('completed'),
    uniqueId: z.string().optional(),
    cause: z.string().optional(),
  }),
  errorinfo: errorInfoSchema.optional(),
});

/** Any server message of a stream response array. */
const serverMessageSchema = z.union([
  startedMessageSchema,
  speechStartDetectedSchema,
  speechEndDetectedSchema,
  recognizedMessageSchema,
  completedMessageSchema,
]);
export type ServerMessage = z.infer<typeof serverMessageSchema>;

/** A 200 response body: a JSON array of server messages (spec 02, Recognition from stream). */
export const serverMessagesSchema = z.array(serverMessageSchema);
