/**
 * How speech is recognized (spec 02 offers two ways): by **stream** (sessions of at most 3,000 s, audio
 * sent in 240-ms requests at real-time pace) or from **file** (one multipart request of at most 60 s,
 * unpaced). callpipe's modes, one home for what they mean:
 *
 * - `stream` (the default): every planned session is a stream session;
 * - `file`: each track is cut into pieces of at most {@link FILE_PIECE_MAX_SECONDS}, only in silences
 *   (activities/media/file-pieces.ts); a stretch with no such silence stays a stream session;
 * - `auto`: `file` while the deployment's own file requests are answered faster than real time (a
 *   running real-time factor per model, activities/asr/file-rate.ts), `stream` otherwise.
 */
import { z } from 'zod';

export const RECOGNITION_MODES = ['stream', 'file', 'auto'] as const;
export type RecognitionMode = (typeof RECOGNITION_MODES)[number];
export const recognitionModeSchema = z.enum(RECOGNITION_MODES);

/** The recognition mode of a call's spec: `stream` for one made before the modes. */
export function recognitionOf(spec: { recognition?: RecognitionMode | undefined }): RecognitionMode {
  return spec.recognition ?? 'stream';
}

/** How one planned session is recognized. */
export const SESSION_RECOGNITIONS = ['stream', 'file'] as const;
export type SessionRecognition = (typeof SESSION_RECOGNITIONS)[number];

/** Spec 02, Limits: a file request holds at most 60 s of audio. */
export const SERVICE_MAX_FILE_SECONDS = 60;
/** The longest piece callpipe sends: a margin under the service's limit (framing, rounding). */
export const FILE_PIECE_MAX_SECONDS = 58;
/**
 * The shortest silence a piece is cut in, the cut at least half of it from speech on either side: the
 * latency plan's rule (activities/media/plan.ts), for the same reason (the recognizer ends an utterance
 * after 0.2 s of quiet; a phrase's own tone gaps are 40 ms).
 */
export const FILE_CUT_SILENCE_SECONDS = 0.5;
/** Pieces of one track per recognition activity: a call's pieces go through a few activities. */
export const PIECES_PER_ACTIVITY = 32;
/**
 * `auto` chooses file recognition while the measured real-time factor of file requests (processing
 * seconds ÷ audio seconds) is under this: a piece then costs less wall time than streaming it.
 */
export const AUTO_FILE_RTF_BELOW = 1;
/** The emulator's default processing time of a file request, × its audio seconds (`--file-rtf`). */
export const DEFAULT_FILE_RTF = 0.25;

/** Why a call was recognized as it was (result.json `recognition`). */
export const recognitionFactsSchema = z.object({
  /** The mode asked for. */
  requested: recognitionModeSchema,
  /** What the plan used: `mixed` when pieces and stream sessions share the call. */
  used: z.enum(['stream', 'file', 'mixed', 'none']),
  /** In words: auto's choice and the rate it saw, stretches that could not be cut. */
  reason: z.string(),
});
export type RecognitionFacts = z.infer<typeof recognitionFactsSchema>;
