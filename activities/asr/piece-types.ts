/**
 * The shapes of file recognition (activities/asr/pieces-activities.ts): a group of pieces' activity input
 * and output, and the one object it leaves in object storage, each piece's result in the shape of a
 * session's (session-types.ts), so the merge reads both alike.
 */
import { z } from 'zod';
import { sessionResultSchema } from './session-types.ts';

export interface PieceRef {
  /** The piece's index in the plan (its `session`). */
  session: number;
  start: number;
  end: number;
}

export interface RecognizePiecesInput {
  callId: string;
  /** The group's number within the call (names its result). */
  group: number;
  /** The staged track holding the pieces (the whole recording long, starting at 0). */
  audioKey: string;
  pieces: PieceRef[];
  /** Where the group's {@link PiecesResult} goes; its progress is kept beside it. */
  resultKey: string;
  /** Retries allowed per piece after errors the retry table retries (550 included). */
  maxRetries: number;
  model?: string;
  wordsKey?: string;
}

interface PieceOutput {
  session: number;
  utterances: number;
  requests: number;
  retries: number;
  audioSecondsSent: number;
}

export interface RecognizePiecesOutput {
  resultKey: string;
  pieces: PieceOutput[];
  /** True when the group's result was already there (nothing was recognized). */
  reused: boolean;
}

/** A group's result, and (as `partial`) its progress: the pieces recognized so far. */
export const piecesResultSchema = z.object({
  version: z.literal(1),
  pieces: z.array(sessionResultSchema),
});
export type PiecesResult = z.infer<typeof piecesResultSchema>;

/** Heartbeat details: counts only (no text), what a reader of the Web UI sees. */
export interface PiecesHeartbeat {
  done: number;
  inFlight: number;
  pieces: number;
}
