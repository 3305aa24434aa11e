/**
 * What the media probe learns about a recording (activities/media/probe.ts). Small JSON: it travels in
 * workflow history and into result.json's audio facts.
 */
import { z } from 'zod';

export const probeResultSchema = z.object({
  /** Local path that was probed (the spooled copy for S3 inputs). */
  path: z.string(),
  sizeBytes: z.number().int().positive(),
  /** Content fingerprint (`sha256:<hex>`): staging keys and idempotency derive from it. */
  fingerprint: z.string(),
  /** ffprobe's container name, e.g. `wav`, `mp3`, `mov,mp4,m4a,3gp,3g2,mj2`, `ogg`. */
  container: z.string(),
  /** Codec of the audio track, e.g. `pcm_s16le`, `pcm_mulaw`, `mp3`, `aac`, `opus`. */
  codec: z.string(),
  /** Index of the audio track used among all the file's streams (a video file's audio is not always 0). */
  streamIndex: z.number().int().nonnegative(),
  sampleRate: z.number().int().positive(),
  channels: z.number().int().positive(),
  /** Length measured by decoding every sample: the one to trust. */
  durationSeconds: z.number().positive(),
  /** Length the container claims (may be estimated, or absent): kept for diagnosis only. */
  metadataDurationSeconds: z.number().nonnegative().nullable(),
  /** Whether the file also holds video (its audio track is what we use). */
  hasVideo: z.boolean(),
});
export type ProbeResult = z.infer<typeof probeResultSchema>;
