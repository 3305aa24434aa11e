/**
 * Wall-clock bounds of the ffmpeg and ffprobe runs on a recording (activities/media/time-bound.ts
 * enforces them), and the start-to-close timeouts of the media activities that hold those runs. A run
 * past its bound fails its call once, with `timed-out` and a reason; an activity's own timeout must
 * therefore never come first, or Temporal would time the activity out and retry it into the same stall
 * (a 20-hour recording's plan is bounded at about 45 minutes). So an activity whose run grows with the
 * recording gets a timeout that follows its bound, and the probe, whose work does not grow with the
 * recording's length, has its bounds capped under its activity's timeout. Pure numbers: the workflow
 * computes the timeouts from the same rules.
 */

export interface MediaTimeBounds {
  /** Every run gets at least this long, however small its input. */
  floorSeconds: number;
  /** Added per hour of audio the run reads or decodes. */
  secondsPerAudioHour: number;
  /** Added per MiB of the recording the run reads. */
  secondsPerMebibyte: number;
}

/**
 * Defaults far above what a healthy run takes on a busy worker (a decode of an hour reads at hundreds
 * of times real time): the bound is there to end a run that waits for nothing, not to judge speed.
 */
const DEFAULT_MEDIA_TIME_BOUNDS: Readonly<MediaTimeBounds> = Object.freeze({
  floorSeconds: 300,
  secondsPerAudioHour: 120,
  secondsPerMebibyte: 2,
});

/** The bound of a run that reads `sizeBytes` of a recording and `audioSeconds` of its audio, ms. */
export function timeBoundMs(
  what: { sizeBytes?: number; audioSeconds?: number },
  bounds: MediaTimeBounds = DEFAULT_MEDIA_TIME_BOUNDS,
): number {
  const audio = Number.isFinite(what.audioSeconds) ? Math.max(0, what.audioSeconds!) : 0;
  const size = Number.isFinite(what.sizeBytes) ? Math.max(0, what.sizeBytes!) : 0;
  const seconds =
    bounds.floorSeconds +
    (audio / 3600) * bounds.secondsPerAudioHour +
    (size / 2 ** 20) * bounds.secondsPerMebibyte;
  return Math.ceil(seconds * 1000);
}

/** Start-to-close of the probe and of the media activities of a recording of ordinary length. */
export const MEDIA_ACTIVITY_TIMEOUT_SECONDS = 15 * 60;

/**
 * What an activity spends besides its bounded run: the worker's local copy of the recording (fetched
 * from object storage on first use) and the upload of what it made.
 */
const MEDIA_ACTIVITY_MARGIN_SECONDS = 5 * 60;

/**
 * The longest bound of a probe's run, whatever the recording: under the probe's start-to-close with
 * the margin. A probe reads the file without decoding it (but its head), so a healthy probe of the
 * longest recording ends far sooner; one still running then waits for nothing.
 */
export const PROBE_MAX_BOUND_MS = (MEDIA_ACTIVITY_TIMEOUT_SECONDS - MEDIA_ACTIVITY_MARGIN_SECONDS) * 1000;

/**
 * Start-to-close of a media activity whose one bounded run reads `what` (the plan's decode of the whole
 * recording, the redacted copy): its bound and the margin, never less than the ordinary timeout.
 */
export function mediaActivityTimeoutSeconds(
  what: { sizeBytes?: number; audioSeconds?: number },
  bounds: MediaTimeBounds = DEFAULT_MEDIA_TIME_BOUNDS,
): number {
  const bound = Math.ceil(timeBoundMs(what, bounds) / 1000);
  return Math.max(MEDIA_ACTIVITY_TIMEOUT_SECONDS, bound + MEDIA_ACTIVITY_MARGIN_SECONDS);
}
