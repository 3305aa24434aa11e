/**
 * What the media probe learns about a recording (activities/media/probe.ts). Small JSON: it travels in
 * workflow history and into result.json's audio facts.
 */
import { z } from 'zod';

/**
 * How ffmpeg reads the recording (activities/media/input-format.ts): by its content, or, for a headerless
 * telephony format, with the demuxer and options its extension names; and whether its frames are
 * repaired first (activities/media/amr.ts). Every ffmpeg run on the recording uses it.
 */
export const inputReaderSchema = z.object({
  /** ffmpeg demuxer forced before `-i` (`g722`, `mulaw`…), or null: ffmpeg reads the content. */
  format: z.string().nullable(),
  /** That demuxer's options as ffmpeg spells them, e.g. `{ sample_rate: '8000', channels: '1' }`. */
  options: z.record(z.string(), z.string()),
  /**
   * `amr`: an AMR stream whose comfort-noise and no-data frames (DTX) ffmpeg's decoder would drop,
   * shortening the timeline; it is read from a copy with those frames replaced by silent speech frames.
   */
  repair: z.enum(['amr']).nullable(),
});
export type InputReader = z.infer<typeof inputReaderSchema>;

/** The frames of an AMR stream, by type (activities/media/amr.ts). */
export const amrFramesSchema = z.object({
  variant: z.enum(['nb', 'wb']),
  /** Every frame, 20 ms each: the stream's true length is frames × 0.02 s. */
  frames: z.number().int().nonnegative(),
  speech: z.number().int().nonnegative(),
  /** Comfort-noise (SID) frames of discontinuous transmission. */
  sid: z.number().int().nonnegative(),
  /** NO_DATA frames (nothing sent) and frames of reserved or lost types. */
  noData: z.number().int().nonnegative(),
  /** Bytes of an incomplete last frame, dropped. */
  truncatedBytes: z.number().int().nonnegative(),
});
export type AmrFrames = z.infer<typeof amrFramesSchema>;

/** The decoded length checked against the container's own timeline (activities/media/length-check.ts). */
export const lengthCheckSchema = z.object({
  decodedSeconds: z.number().nonnegative(),
  /** The length the file's frames or packets hold, independent of the decoder. */
  containerSeconds: z.number().nonnegative(),
  /** `amr-frames`: counted from the AMR frames; `packets`: the demuxed packets' timestamps and durations. */
  measuredBy: z.enum(['amr-frames', 'packets']),
  toleranceSeconds: z.number().nonnegative(),
});
export type LengthCheck = z.infer<typeof lengthCheckSchema>;

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
  /**
   * Length of the audio. A probe reads it without decoding ({@link containerSeconds}, an estimate); the
   * plan decodes every sample and its length is the one to trust (SessionPlan `source.decodedSeconds`,
   * the length a call's result states). Probes made before the plan counted it decoded every sample.
   */
  durationSeconds: z.number().positive(),
  /**
   * What the file's packets (or, for AMR, its frames) hold, read without decoding: the plan checks the
   * decoded length against it. Absent from earlier probes, which checked the length themselves.
   */
  containerSeconds: z.number().nonnegative().optional(),
  /** Length the container claims (may be estimated, or absent): kept for diagnosis only. */
  metadataDurationSeconds: z.number().nonnegative().nullable(),
  /** Whether the file also holds video (its audio track is what we use). */
  hasVideo: z.boolean(),
  /** How every ffmpeg run reads it; absent in results of probes before 0.2.0 (read by content). */
  reader: inputReaderSchema.optional(),
  /**
   * The decoded length against the container's timeline (they agreed within the tolerance): made by the
   * plan (SessionPlan `lengthCheck`); here only in probes made before the plan counted the length.
   */
  lengthCheck: lengthCheckSchema.optional(),
  /** AMR streams: their frames by type. */
  amr: amrFramesSchema.optional(),
});
export type ProbeResult = z.infer<typeof probeResultSchema>;
