/**
 * Probe: what a recording is, and whether we can process it. ffprobe reads the container's claims
 * (numbers as strings; a duration that may be estimated or `N/A`), then one decode pass counts the
 * samples, because the decoded length is what the plan and the byte counts must agree with. Bad inputs
 * become {@link MediaError}s with a reason a user can act on.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { ProbeResult } from '../../schemas/media-probe.ts';
import { FfmpegError, MediaError } from './errors.ts';
import { runFfmpeg, runFfprobe } from './ffmpeg.ts';

/** Lowest input rate we accept: the 8 kHz models need at least 8 kHz (spec 02, Audio formats). */
export const MIN_INPUT_SAMPLE_RATE = 8000;

export interface ProbeOptions {
  signal?: AbortSignal;
  /** A fingerprint the caller already knows (e.g. from the S3 object); default: SHA-256 of the content. */
  fingerprint?: string;
}

interface FfprobeStream {
  index?: number;
  codec_type?: string;
  codec_name?: string;
  sample_rate?: string;
  channels?: number;
}
interface FfprobeOutput {
  streams?: FfprobeStream[];
  format?: { format_name?: string; duration?: string };
}

/** ffprobe's numbers are strings, sometimes `N/A`. */
function parseNumber(value: string | number | undefined): number | null {
  if (value === undefined) return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

/** ffmpeg's reason without the file name it starts with. */
function reasonOf(err: FfmpegError, path: string): string {
  const last = err.stderrTail.split('\n').filter(Boolean).at(-1) ?? err.message;
  return last.startsWith(`${path}: `) ? last.slice(path.length + 2) : last;
}

/** SHA-256 of the file's content, streamed. */
export async function fileFingerprint(path: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash, { signal });
  return `sha256:${hash.digest('hex')}`;
}

/**
 * Decodes the audio track once and counts its samples (the framecrc muxer prints one line per decoded
 * frame with its duration in 1/sample-rate units). Returns seconds.
 */
export async function decodedDurationSeconds(
  path: string,
  streamIndex: number,
  signal?: AbortSignal,
): Promise<number> {
  let timeBase = 0;
  let units = 0;
  await runFfmpeg(['-v', 'error', '-i', path, '-map', `0:${streamIndex}`, '-f', 'framecrc', '-'], {
    signal,
    onStdoutLine(line) {
      if (line.startsWith('#tb 0:')) {
        const [num, den] = line.slice(6).trim().split('/').map(Number);
        timeBase = num! / den!;
      } else if (!line.startsWith('#')) {
        const duration = Number(line.split(',')[3]);
        if (Number.isFinite(duration)) units += duration;
      }
    },
  });
  return units * timeBase;
}

/** Probes a local file; throws {@link MediaError} for anything we cannot process. */
export async function probeRecording(path: string, options: ProbeOptions = {}): Promise<ProbeResult> {
  const { signal } = options;
  let sizeBytes: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new MediaError('unreadable', `${path} is not a file`, path);
    sizeBytes = info.size;
  } catch (err) {
    if (err instanceof MediaError) throw err;
    throw new MediaError('not-found', `${path}: no such file`, path);
  }
  if (sizeBytes === 0) throw new MediaError('empty', `${path} is empty (0 bytes)`, path);

  let probed: FfprobeOutput;
  try {
    const json = await runFfprobe(
      [
        '-v',
        'error',
        '-show_entries',
        'format=format_name,duration:stream=index,codec_type,codec_name,sample_rate,channels',
        '-of',
        'json',
        path,
      ],
      { signal },
    );
    probed = JSON.parse(json) as FfprobeOutput;
  } catch (err) {
    if (err instanceof FfmpegError) {
      throw new MediaError(
        'unreadable',
        `${path} is not a readable audio file (${reasonOf(err, path)})`,
        path,
      );
    }
    throw err;
  }

  const streams = probed.streams ?? [];
  const audio = streams.find((s) => s.codec_type === 'audio');
  const hasVideo = streams.some((s) => s.codec_type === 'video');
  if (!audio) {
    const what = hasVideo ? 'a video with no audio track' : 'no audio track';
    throw new MediaError('no-audio', `${path} has ${what}`, path);
  }
  const streamIndex = audio.index ?? 0;
  const codec = audio.codec_name;
  if (!codec || codec === 'none' || codec === 'unknown') {
    throw new MediaError('unsupported-codec', `${path}: the audio codec is unknown to ffmpeg`, path);
  }
  const sampleRate = parseNumber(audio.sample_rate);
  const channels = audio.channels ?? 0;
  if (!sampleRate || channels < 1) {
    throw new MediaError('unreadable', `${path}: the audio track has no sample rate or channel count`, path);
  }
  if (sampleRate < MIN_INPUT_SAMPLE_RATE) {
    throw new MediaError(
      'unsupported-rate',
      `${path}: ${sampleRate} Hz is below the ${MIN_INPUT_SAMPLE_RATE} Hz the models need`,
      path,
    );
  }

  let durationSeconds: number;
  let fingerprint: string;
  try {
    [durationSeconds, fingerprint] = await Promise.all([
      decodedDurationSeconds(path, streamIndex, signal),
      options.fingerprint ?? fileFingerprint(path, signal),
    ]);
  } catch (err) {
    if (err instanceof FfmpegError) {
      const reason = reasonOf(err, path);
      const kind = /decoder .* not found/i.test(reason) ? 'unsupported-codec' : 'unreadable';
      throw new MediaError(kind, `${path}: cannot decode the ${codec} audio (${reason})`, path);
    }
    throw err;
  }
  if (!(durationSeconds > 0))
    throw new MediaError('zero-duration', `${path} holds no audio samples (zero duration)`, path);

  return {
    path,
    sizeBytes,
    fingerprint,
    container: probed.format?.format_name ?? 'unknown',
    codec,
    streamIndex,
    sampleRate,
    channels,
    durationSeconds,
    metadataDurationSeconds: parseNumber(probed.format?.duration),
    hasVideo,
  };
}
