/**
 * The one module that runs ffmpeg and ffprobe. fluent-ffmpeg is archived upstream and its output
 * parsing breaks on ffmpeg 7, so we drive the binaries ourselves: `child_process.spawn` with argument
 * arrays (never a shell, so no file name can inject anything), `-nostdin` (ffmpeg otherwise reads the
 * terminal and hangs or eats keystrokes under a worker), the stderr tail kept for error messages,
 * cancellation through an AbortSignal, and exit codes and signals mapped to our error classes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Readable } from 'node:stream';
import { mediaTools } from '../../schemas/process-settings.ts';
import { childEnv } from '../../schemas/child-env.ts';
import { FfmpegError, MediaCancelledError, MediaToolMissingError } from './errors.ts';
import { meterChildProcess } from '../cost/activity-meter.ts';

/** Binary paths (schemas/process-settings.ts mediaTools); the tools module sets their variables for the stack. */
export function ffmpegBinary(): string {
  return mediaTools().ffmpeg;
}
function ffprobeBinary(): string {
  return mediaTools().ffprobe;
}

/** How much of stderr is kept for error messages: enough for ffmpeg's reason, bounded for 10-hour runs. */
const STDERR_TAIL_LINES = 20;
/** ffprobe's JSON for one file is a few kB; more means something is wrong. */
const MAX_COLLECTED_STDOUT_BYTES = 16 * 1024 * 1024;
/** A SIGTERMed ffmpeg gets this long to exit before SIGKILL. */
const KILL_GRACE_MS = 2000;

export interface ToolRunOptions {
  /** Cancels the run: the process is killed and the promise rejects with MediaCancelledError. */
  signal?: AbortSignal;
  /** Data for the process's stdin (use `pipe:0` as an input): a stream, piped with backpressure, or a buffer. */
  stdin?: Readable | Buffer;
  /** Called with every stderr line (ffmpeg's log; silencedetect reports there). */
  onStderrLine?: (line: string) => void;
  /** Called with every stdout line (text outputs such as framecrc). */
  onStdoutLine?: (line: string) => void;
}

/** A running tool whose stdout the caller consumes as a stream (`pipe:1` outputs). */
export interface ToolProcess {
  /** The tool's stdout; read it, or the process stalls on backpressure. */
  stdout: Readable;
  /** Resolves when the process exits with 0; rejects with a mapped error otherwise. */
  done: Promise<void>;
  /** Stops the process (no effect once it has exited). */
  kill(): void;
}

/** Splits a byte stream into lines, calling `onLine` for each complete one. */
function lineSplitter(onLine: (line: string) => void): { push(chunk: Buffer): void; end(): void } {
  let rest = '';
  return {
    push(chunk) {
      const text = rest + chunk.toString('utf8');
      const lines = text.split(/\r\n|\r|\n/);
      rest = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    },
    end() {
      if (rest) onLine(rest);
      rest = '';
    },
  };
}

function start(
  tool: string,
  binary: string,
  args: string[],
  options: ToolRunOptions,
  stdoutMode: 'stream' | 'lines' | 'collect' | 'ignore',
): { child: ChildProcess; done: Promise<void>; collected: () => Buffer; kill(): void } {
  const { signal } = options;
  if (signal?.aborted) {
    return {
      child: undefined as unknown as ChildProcess,
      done: Promise.reject(new MediaCancelledError(tool)),
      collected: () => Buffer.alloc(0),
      kill() {},
    };
  }
  const child = spawn(binary, args, {
    // A recording's decoder needs no secret of the worker's: only the base environment.
    env: childEnv(),
    stdio: [options.stdin ? 'pipe' : 'ignore', stdoutMode === 'ignore' ? 'ignore' : 'pipe', 'pipe'],
    shell: false,
    windowsHide: true,
  });
  // Its CPU, read as it is reaped, goes to the activity that started it (activities/cost/activity-meter.ts).
  child.once('exit', meterChildProcess());

  const tail: string[] = [];
  const stderrLines = lineSplitter((line) => {
    if (!line.trim()) return;
    tail.push(line);
    if (tail.length > STDERR_TAIL_LINES) tail.shift();
    options.onStderrLine?.(line);
  });
  child.stderr!.on('data', (chunk: Buffer) => stderrLines.push(chunk));

  const chunks: Buffer[] = [];
  let collectedBytes = 0;
  let overflow = false;
  if (stdoutMode === 'lines') {
    const stdoutLines = lineSplitter((line) => options.onStdoutLine?.(line));
    child.stdout!.on('data', (chunk: Buffer) => stdoutLines.push(chunk));
    child.stdout!.on('end', () => stdoutLines.end());
  } else if (stdoutMode === 'collect') {
    child.stdout!.on('data', (chunk: Buffer) => {
      collectedBytes += chunk.length;
      if (collectedBytes > MAX_COLLECTED_STDOUT_BYTES) {
        overflow = true;
        kill();
      } else chunks.push(chunk);
    });
  }

  if (options.stdin && child.stdin) {
    // ffmpeg may exit before reading all its input (an error, or `-t`): EPIPE is then expected, and the
    // exit code, not the write error, says what happened.
    child.stdin.on('error', () => {});
    if (Buffer.isBuffer(options.stdin)) child.stdin.end(options.stdin);
    else {
      const input = options.stdin;
      input.on('error', () => kill());
      input.pipe(child.stdin);
    }
  }

  let aborted = false;
  let killTimer: NodeJS.Timeout | undefined;
  function kill(): void {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    killTimer ??= setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS).unref();
  }
  const onAbort = () => {
    aborted = true;
    kill();
  };
  signal?.addEventListener('abort', onAbort, { once: true });

  const done = new Promise<void>((resolve, reject) => {
    let spawnError: NodeJS.ErrnoException | undefined;
    child.on('error', (err: NodeJS.ErrnoException) => {
      spawnError = err;
    });
    child.on('close', (code, sig) => {
      stderrLines.end();
      signal?.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      const stderrTail = tail.join('\n');
      if (spawnError?.code === 'ENOENT') return reject(new MediaToolMissingError(binary));
      if (spawnError) return reject(new FfmpegError(`${tool}: ${spawnError.message}`, tool, null, null, ''));
      if (aborted) return reject(new MediaCancelledError(tool));
      if (overflow) return reject(new FfmpegError(`${tool}: output too large`, tool, code, sig, stderrTail));
      if (code === 0) return resolve();
      const reason = tail.at(-1) ?? 'no message';
      const how = sig ? `was killed by ${sig}` : `exited with code ${code}`;
      reject(new FfmpegError(`${tool} ${how}: ${reason}`, tool, code, sig, stderrTail));
    });
  });
  return { child, done, collected: () => Buffer.concat(chunks), kill };
}

/** Arguments every ffmpeg run gets: no terminal interaction, no banner, no progress lines. */
const FFMPEG_COMMON_ARGS = ['-nostdin', '-hide_banner', '-nostats'];

/** Runs ffprobe and returns its stdout (ask for `-of json`). */
export async function runFfprobe(args: string[], options: ToolRunOptions = {}): Promise<string> {
  const run = start('ffprobe', ffprobeBinary(), ['-hide_banner', ...args], options, 'collect');
  await run.done;
  return run.collected().toString('utf8');
}

/**
 * Runs ffmpeg to completion. stdout goes to `onStdoutLine` when given (text muxers such as framecrc),
 * otherwise it is discarded; outputs to files need neither.
 */
export async function runFfmpeg(args: string[], options: ToolRunOptions = {}): Promise<void> {
  const run = start(
    'ffmpeg',
    ffmpegBinary(),
    [...FFMPEG_COMMON_ARGS, ...args],
    options,
    options.onStdoutLine ? 'lines' : 'ignore',
  );
  await run.done;
}

/** Starts ffmpeg with its stdout as a stream (an output of `pipe:1`), for streaming transcodes. */
export function spawnFfmpeg(args: string[], options: ToolRunOptions = {}): ToolProcess {
  const run = start('ffmpeg', ffmpegBinary(), [...FFMPEG_COMMON_ARGS, ...args], options, 'stream');
  // Cancelled before it started: nothing to read, `done` carries the cancellation.
  if (!run.child) return { stdout: Readable.from([]), done: run.done, kill() {} };
  return { stdout: run.child.stdout!, done: run.done, kill: run.kill };
}
