/**
 * Limits, each defined once: the service's own (spec 02, Limits) and the defaults of ours that
 * configuration overrides (`schemas/config.ts` DEFAULTS.limits, `CALLPIPE_*` variables). Code that can
 * run without a configuration (plan options, the service client's limiters, the emulator) takes its
 * defaults from here too, so a default changes in one place. Imports nothing.
 */

/** Longest stream audio per recognition session (spec 02, Limits: "Stream audio length per session"). */
export const SERVICE_MAX_SESSION_SECONDS = 3000;

/** Defaults of the configuration's `limits` (see `limitsConfigSchema` in schemas/config.ts for each). */
export const LIMIT_DEFAULTS = {
  /** Open recognition streams per asr worker process; also the balanced plan's default budget. */
  asrConcurrentSessions: 16,
  nlpRequestsPerSecond: 20,
  nlpConcurrency: 8,
  mediaConcurrency: 2,
  probeConcurrency: 1,
  maxSessionSeconds: SERVICE_MAX_SESSION_SECONDS,
  planStrategy: 'balanced',
  minSessionSeconds: 60,
} as const;

/**
 * Most rows in one compacted part of a table partition (issue 17): a day of utterances in a few files
 * of about 10–30 MB each, small enough for a worker to hold while it writes one, large enough that
 * readers open few files. A call's rows never span two parts.
 */
export const TABLE_PART_MAX_ROWS = 500_000;

/**
 * The redacted copy of a recording (activities/media/redacted-audio.ts). Each masked span reaches this far
 * beyond the utterance's recognized range on both sides: a recognizer's times mark where it heard speech,
 * and a word's onset or tail can sit a few tens of milliseconds outside them.
 */
export const REDACTED_AUDIO_PAD_SECONDS = 0.1;
/**
 * How far an utterance may end past the decoded recording's end and still be mapped (the masked span is
 * then cut at the end): about one 240-ms recognition request (spec 02), the most a session's last
 * request can overhang. Any farther, and the times and the audio disagree: nothing is written.
 */
export const REDACTED_AUDIO_END_TOLERANCE_SECONDS = 0.24;
/** The tone over a redacted span: 1 kHz (inside the telephone band, unlike any voice), -12 dBFS peak. */
export const REDACTED_AUDIO_TONE_HZ = 1000;
export const REDACTED_AUDIO_TONE_PEAK = 0.25;
