/**
 * Error classes of the media activities. Every failure is a value with a class and a reason a user can
 * act on. Whether trying again could help is the retry table's to say (schemas/retry-table.ts, one
 * entry per class name), applied at the workers' activity boundary, never here.
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
  | 'length-mismatch'
  | 'invalid-option'
  /** It names other files or addresses (a playlist, a concat list) or is not a regular file. */
  | 'refused-reference'
  /** A tool gave no answer within the recording's time bound (a pipe or a stalled input). */
  | 'timed-out';

/** A bad input (or a bad option for this input): fails the recording, the batch goes on. */
export class MediaError extends Error {
  override name = 'MediaError';
  readonly kind: MediaErrorKind;
  readonly path?: string;
  constructor(kind: MediaErrorKind, message: string, path?: string) {
    super(message);
    this.kind = kind;
    this.path = path;
  }
}

/** ffmpeg or ffprobe failed in a way we did not classify as a bad input. */
export class FfmpegError extends Error {
  override name = 'FfmpegError';
  readonly tool: string;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderrTail: string;
  constructor(
    message: string,
    tool: string,
    exitCode: number | null,
    signal: NodeJS.Signals | null,
    /** The last lines ffmpeg wrote on stderr: the reason, when it gave one. */
    stderrTail: string,
  ) {
    super(message);
    this.tool = tool;
    this.exitCode = exitCode;
    this.signal = signal;
    this.stderrTail = stderrTail;
  }
}

/** The ffmpeg/ffprobe binary is missing: a deployment problem, not the recording's. */
export class MediaToolMissingError extends Error {
  override name = 'MediaToolMissingError';
  readonly tool: string;
  constructor(tool: string) {
    super(`${tool} not found: install ffmpeg or set CALLPIPE_FFMPEG / CALLPIPE_FFPROBE`);
    this.tool = tool;
  }
}

/** The work was cancelled through its AbortSignal (activity cancellation, shutdown). */
export class MediaCancelledError extends Error {
  override name = 'MediaCancelledError';
  constructor(what: string) {
    super(`${what} cancelled`);
  }
}
