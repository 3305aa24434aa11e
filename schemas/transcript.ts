/**
 * The merged timeline of one call: what recognition produced, on the recording's own clock. It travels
 * through staging storage (claim check), never through workflow history: a 10-hour call has thousands
 * of utterances.
 *
 * Glossary: a *recording* is one audio file; a *call* is what it records; a *channel* (track) is one
 * audio channel of it; a *speaker* is who talks on a channel (agent, customer); a *session* is one
 * stream-recognition session of at most 3,000 s of one channel; an *utterance* is one final result.
 */
import { z } from 'zod';

export const utteranceSchema = z.object({
  /** Position in the merged timeline (0-based, time order). */
  index: z.number().int().nonnegative(),
  /** Speaker label of the channel (e.g. `agent`, `customer`, `speaker`). */
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
});
export type Utterance = z.infer<typeof utteranceSchema>;

/** What recognition recorded about one session besides its utterances. */
export const timelineSessionSchema = z.object({
  /** Session index in the plan. */
  session: z.number().int().nonnegative(),
  /** Why each restart of the session happened, in order (the error that ended the stream before it). */
  restartReasons: z.array(z.string()),
});
export type TimelineSession = z.infer<typeof timelineSessionSchema>;

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
