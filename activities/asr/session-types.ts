/**
 * The shapes of one session's recognition: its activity's input and output, what it stages while it
 * runs (partial results, heartbeats) and what it leaves in object storage when it is done.
 */
import { z } from 'zod';
import type { ServiceClient } from '../../service/index.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import type { CheckpointBook } from './checkpoint-book.ts';
import type { PieceLeases } from './pieces-activities.ts';

const sessionUtteranceSchema = z.object({
  start: z.number(),
  end: z.number(),
  text: z.string(),
  score: z.number().optional(),
});

/** What recognizing a session has cost so far, and what it kept. */
const sessionProgressSchema = z.object({
  utterances: z.array(sessionUtteranceSchema),
  audioSecondsSent: z.number(),
  restarts: z.number().int(),
  reStreamedSeconds: z.number(),
  requests: z.number().int(),
  restartReasons: z.array(z.string()),
});

/** What a finished session leaves in object storage (claim check: the workflow gets only its key). */
export const sessionResultSchema = sessionProgressSchema.extend({
  session: z.number().int(),
  start: z.number(),
  end: z.number(),
});
export type SessionResult = z.infer<typeof sessionResultSchema>;

/** Staged progress of an unfinished session: the final results up to `resumeAt`. */
export const partialSchema = sessionProgressSchema.extend({ resumeAt: z.number() });
export type PartialProgress = z.infer<typeof partialSchema>;

export interface RecognizeSessionInput {
  callId: string;
  session: number;
  /**
   * Staged raw 8 kHz mu-law holding the session: its track, the whole recording long (the plan's staged
   * tracks), or the session alone (exactly (end − start) × 8,000 bytes) in runs from before.
   */
  audioKey: string;
  /**
   * Where the audio object starts on the recording's clock, seconds: 0 for a track; absent, the
   * session's `start` (its own object, as runs started before the plan staged tracks pass).
   */
  audioStart?: number;
  /** The session's range on the recording's clock, seconds. */
  start: number;
  end: number;
  /** Where the finished SessionResult goes. */
  resultKey: string;
  /** New sessions allowed after errors before the activity gives up. */
  maxRestarts: number;
  model?: string;
  /** A custom vocabulary (store's bucket, JSON words, cli/call-files.ts): every start request sends it. */
  wordsKey?: string;
}

export interface RecognizeSessionOutput {
  resultKey: string;
  utterances: number;
  audioSecondsSent: number;
  restarts: number;
  reStreamedSeconds: number;
  requests: number;
  /** True when the result was already there (nothing was streamed). */
  reused: boolean;
}

/** Heartbeat details: the resume point and counters, small and secret-free. */
export interface RecognizeHeartbeat {
  resumeAt: number;
  positionSeconds: number;
  utterances: number;
  restarts: number;
}

export interface AsrActivityDeps {
  service: ServiceClient;
  store: ObjectStore;
  /**
   * The slowest pace, × real time, the client may send at (its own pace decides: fixed, or `auto`): what
   * the time left of an attempt is judged by.
   */
  slowestPace: number;
  /** Recognition model when the input names none (the config's). */
  model: string;
  /**
   * Wait before a new session after an error, growing with each restart; default the retry table's
   * (`RETRY_LOOPS.RecognitionRestart`).
   */
  restartDelayMs?: number;
  /** How long a finished session's result write is retried; default the retry table's (5 min). */
  resultWriteBudgetMs?: number;
  /** Draws the jitter of waits (`Math.random`; tests fix it). */
  random?: () => number;
  /** Bytes per GET of the staged audio; default `STAGED_AUDIO_RANGE_BYTES` (tests cross range edges sooner). */
  stagedAudioRangeBytes?: number;
  /** Leases on the account's sessions for file requests beyond an activity's own (pieces-activities.ts). */
  pieceLeases?: PieceLeases | undefined;
  /** File requests in flight per group of pieces at most (default 1). */
  maxPiecesInFlight?: number | undefined;
  /** This process's recognition checkpoints (checkpoint-book.ts); `createAsrActivities` makes one. */
  checkpoints?: CheckpointBook;
}
