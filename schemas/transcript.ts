/**
 * The merged timeline of one call: the utterances of every session of every track, in time order, on the
 * recording's own clock. It travels through staging storage (claim check), never through workflow
 * history: a 10-hour call has thousands of utterances.
 *
 * Recording, call, track, speaker, session and utterance mean what docs/terminology.md says: an utterance
 * belongs to a track (not to a channel of the file), and its speaker is that track's.
 */
import { z } from 'zod';

const utteranceSchema = z.object({
  /** Position in the merged timeline (0-based, time order). */
  index: z.number().int().nonnegative(),
  /** Speaker of the track (e.g. `agent`, `customer`, `mixed`). */
  speaker: z.string().min(1),
  /** Track of the session plan the utterance came from. */
  track: z.number().int().nonnegative(),
  /** Session index in the plan. */
  session: z.number().int().nonnegative(),
  /** Absolute times in seconds from the start of the recording. */
  start: z.number().nonnegative(),
  end: z.number().nonnegative(),
  /** Recognized text as the service returned it. */
  text: z.string(),
  /** Confidence 0–1 when the service gave one (the service's sentence `score`). */
  confidence: z.number().optional(),
  /**
   * How sure the speakers stage is of `speaker` (0–1): 1 on a track of its own, the voice separation's
   * margin on a one-track call; absent before the stage ran.
   */
  speakerConfidence: z.number().min(0).max(1).optional(),
  /** The voice of a one-track call the utterance was given (0 = heard first); null when none could be. */
  voice: z.number().int().nonnegative().nullable().optional(),
  /** The recognizer joined two voices in this utterance; `speaker` is the one holding most of it. */
  joined: z.boolean().optional(),
});
export type Utterance = z.infer<typeof utteranceSchema>;

/** What recognition recorded about one session besides its utterances. */
const timelineSessionSchema = z.object({
  /** Session index in the plan. */
  session: z.number().int().nonnegative(),
  /** Why each restart of the session happened, in order (the error that ended the stream before it). */
  restartReasons: z.array(z.string()),
});

export const timelineSchema = z.object({
  callId: z.string().min(1),
  /** Length of the recording, seconds. */
  durationSeconds: z.number().nonnegative(),
  speakers: z.array(z.string()),
  utterances: z.array(utteranceSchema),
  /** One entry per session, by index. Absent in a timeline merged by a 0.1 worker (a call under way across the upgrade). */
  sessions: z.array(timelineSessionSchema).optional(),
});
export type Timeline = z.infer<typeof timelineSchema>;
