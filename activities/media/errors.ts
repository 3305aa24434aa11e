/**
 * Error classes of the media activities. Every failure is a value with a class and a reason a user can
 * act on; `retryable` is the one place that says whether trying again could help, so the activity
 * wrappers (activities.ts) turn it into a Temporal retry decision without reading messages.
 */

/** Why a recording cannot be processed. Each is a property of the input: retrying will not help. */
export type MediaErrorKind =
  | 'not-found'
  | 'empty'
  | 'unreadable'
  | 'no-audio'
  | 'zero-duration'
  | 'unsupported-codec'
  | 'unsupported-rate'
  | 'invalid-option';

/** A bad input (or a bad option for this input): fails the recording, the batch goes on. */
export class MediaError extends Error {
  override name = 'MediaError';
  readonly retryable = false;
  constructor(
    readonly kind: MediaErrorKind,
    message: string,
    readonly path?: string,
  ) {
    super(message);
  }
}

/** ffmpeg or ffprobe failed in a way we did not classify as a bad input. */
export class FfmpegError extends Error {
  override name = 'FfmpegError';
  /** A crash or a kill may be the machine's fault (memory, restart): worth another attempt. */
  readonly retryable = true;
  constructor(
    message: string,
    readonly tool: string,
    readonly exitCode: number | null,
    readonly signal: NodeJS.Signals | null,
    /** The last lines ffmpeg wrote on stderr: the reason, when it gave one. */
    readonly stderrTail: string,
  ) {
    super(message);
  }
}

/** The ffmpeg/ffprobe binary is missing: a deployment problem, not the recording's. */
export class MediaToolMissingError extends Error {
  override name = 'MediaToolMissingError';
  readonly retryable = false;
  constructor(readonly tool: string) {
    super(`${tool} not found: install ffmpeg or set CALLPIPE_FFMPEG / CALLPIPE_FFPROBE`);
  }
}

/** The work was cancelled through its AbortSignal (activity cancellation, shutdown). */
export class MediaCancelledError extends Error {
  override name = 'MediaCancelledError';
  readonly retryable = false;
  constructor(what: string) {
    super(`${what} cancelled`);
  }
}

/** A transcode produced a different number of bytes than the session's length requires. */
export class MediaLengthError extends Error {
  override name = 'MediaLengthError';
  /** Usually a defect, but a truncated upload or a killed process can cause it too: try again. */
  readonly retryable = true;
  constructor(
    readonly expected: number,
    readonly actual: number,
    what: string,
  ) {
    super(`${what}: expected ${expected} bytes, got ${actual}`);
  }
}

/** Whether another attempt could succeed; unknown errors are assumed transient. */
export function isRetryable(err: unknown): boolean {
  if (err && typeof err === 'object' && 'retryable' in err) return Boolean(err.retryable);
  return true;
}
