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
  /**
   * A worker's leases on the account's sessions outlive its last heartbeat by this much: longer than the
   * service takes to close a session nobody talks to (the emulator: 10 s; spec 02 gives deadlines of 1 s
   * between requests), so a killed worker's sessions are closed before its slots are granted again. Its
   * recognition sessions are then failed and retried elsewhere: a crashed worker's sessions resume about
   * this long after the crash.
   */
  asrLeaseSeconds: 60,
  nlpRequestsPerSecond: 20,
  nlpConcurrency: 8,
  mediaConcurrency: 2,
  probeConcurrency: 2,
  maxSessionSeconds: SERVICE_MAX_SESSION_SECONDS,
  planStrategy: 'balanced',
  minSessionSeconds: 60,
} as const;

/** The AWS SDK's own pool size: sockets per S3 host in a process that sets none (the command, tests). */
export const S3_DEFAULT_MAX_SOCKETS = 50;
/**
 * An S3 socket silent this long (no byte either way) fails its request, retryably. The SDK waits forever
 * by default: one stalled socket would hold an activity for its whole start-to-close timeout (10 minutes
 * for a text step). No read of ours pauses a socket: staged audio is read range by range into memory.
 */
export const S3_SOCKET_IDLE_TIMEOUT_MS = 60_000;
/** Connecting to the S3 endpoint; beyond it the request fails, retryably. */
export const S3_CONNECT_TIMEOUT_MS = 10_000;

/** The limits a process's own resources are sized from (a subset of the configuration's `limits`). */
export interface ProcessLimits {
  asrConcurrentSessions: number;
  nlpConcurrency: number;
  mediaConcurrency: number;
  probeConcurrency: number;
}

/**
 * S3 sockets a worker's pool allows: each recognition session has at most one staged-audio range
 * read and one partial-result write in flight, each ffmpeg slot a few transfers (source spool, staged
 * upload), each text call one read or write; never fewer than the SDK's default.
 */
export function s3SocketsFor(limits: ProcessLimits): number {
  const wanted =
    2 * limits.asrConcurrentSessions +
    4 * (limits.mediaConcurrency + limits.probeConcurrency) +
    limits.nlpConcurrency +
    16;
  return Math.max(S3_DEFAULT_MAX_SOCKETS, wanted);
}

/** File descriptors of a worker process before any work: Node, Temporal's core, metrics, logs. */
const PROCESS_BASE_FILE_DESCRIPTORS = 256;
/** File descriptors of one ffmpeg slot: its three pipes, input and output files, a spool, S3 sockets. */
const FILE_DESCRIPTORS_PER_FFMPEG = 16;

/**
 * File descriptors a worker process may need at its configured limits: the base, the S3 pool, one socket
 * to the service per open recognition session and per text call in flight, the ffmpeg slots. Checked
 * against `ulimit -n` at start (workers/process-resources.ts).
 */
export function fileDescriptorsFor(limits: ProcessLimits): number {
  return (
    PROCESS_BASE_FILE_DESCRIPTORS +
    s3SocketsFor(limits) +
    limits.asrConcurrentSessions +
    limits.nlpConcurrency +
    FILE_DESCRIPTORS_PER_FFMPEG * (limits.mediaConcurrency + limits.probeConcurrency)
  );
}

/**
 * Staged audio is read in ranges of this many bytes, each as the recognition stream needs it: 512 KiB is
 * 65.5 s of 8 kHz mu-law, so a real-time stream sends one GET a minute (each a billed request) and holds
 * no socket in between. A range is kept as the pieces it arrived in, each freed once streamed, so a
 * stream holds about half a range on average and at most one range and its read-ahead.
 */
export const STAGED_AUDIO_RANGE_BYTES = 512 * 1024;
/**
 * The next range is asked for when less than this much of the current one is left to stream: 16.4 s of
 * audio, time enough for a GET at the fastest pace a test or benchmark streams at.
 */
export const STAGED_AUDIO_READ_AHEAD_BYTES = 128 * 1024;

/**
 * Most rows in one compacted part of a table partition: a day of utterances in a few files
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

/**
 * New recognition sessions a planned session may open after errors before its call fails (every call's
 * `maxRestarts`, schemas/call-spec.ts).
 */
export const SESSION_MAX_RESTARTS = 10;
/**
 * Heartbeat timeout of a recognition session, seconds (every call's `heartbeatTimeoutSeconds`): the
 * fallback that retries a session whose worker went silent this long, resuming after its last staged
 * final result. A lost worker's sessions are normally retried sooner, once the account's session budget
 * has not heard of the worker for `limits.asrLeaseSeconds` (workflows/session-budget.ts). Long, because
 * each heartbeat that reaches the server is a billed action: a session sends one per this less 30 s
 * (activities/asr/session-run.ts).
 */
export const RECOGNITION_HEARTBEAT_SECONDS = 150;
