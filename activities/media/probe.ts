/**
 * Probe: what a recording is, and whether we can process it, in work that does not grow with the
 * recording's length beyond reading it once. The reader comes first (input-format.ts: a headerless
 * format is read as its extension names it), then ffprobe reads the container's claims (numbers as
 * strings; a duration that may be estimated or `N/A`), then, in parallel, the container's own timeline
 * (the demuxed packets, or the AMR frames, read without decoding), a decode of the first
 * {@link HEAD_DECODE_SECONDS} (a file ffmpeg opens but cannot decode is refused here), and the
 * fingerprint. Packets whose timestamps jump over a gap are refused here too (length-check.ts).
 *
 * The whole decode is not the probe's: the probe slot is kept short so that one long recording does not
 * hold other calls' probes. The plan's channel analysis decodes every sample anyway; it counts them, and
 * the plan checks that decoded length against the timeline measured here (plan.ts). Bad inputs become
 * {@link MediaError}s with a reason a user can act on.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { AmrFrames, InputReader, ProbeResult } from '../../schemas/media-probe.ts';
import { amrSeconds } from './amr.ts';
import { FfmpegError, MediaError } from './errors.ts';
import { runFfprobe } from './ffmpeg.ts';
import { readerOf } from './input-format.ts';
import { refusedContent, refusedDemuxerOf } from './input-policy.ts';
import { checkPacketGap, framecrcSeconds, packetSeconds } from './length-check.ts';
import { inputArgs, openInput, plainInput, type MediaInput } from './media-input.ts';
import { readHead } from './sniff.ts';
import { PROBE_MAX_BOUND_MS } from '../../schemas/media-time-bounds.ts';
import { timeBoundMs, withinTimeBound, type MediaTimeBounds } from './time-bound.ts';

/** Lowest input rate we accept: the 8 kHz models need at least 8 kHz (spec 02, Audio formats). */
const MIN_INPUT_SAMPLE_RATE = 8000;
/**
 * How much audio the probe decodes: enough that a file whose codec ffmpeg cannot decode is refused at
 * probe, little enough that the probe's work does not depend on the recording's length.
 */
export const HEAD_DECODE_SECONDS = 5;

export interface ProbeOptions {
  signal?: AbortSignal;
  /** A fingerprint the caller already knows (e.g. from the S3 object); default: SHA-256 of the content. */
  fingerprint?: string;
  /**
   * The recording's own name (an object key), whose extension names a headerless format; default: the
   * path. A worker's local copy keeps the extension too, but the object's name is the one to trust.
   */
  name?: string;
  /** Wall-clock bounds of its tool runs (time-bound.ts); default: the product's. */
  timeBounds?: MediaTimeBounds;
}

/** Codecs whose frames are repaired before decoding (amr.ts). */
const AMR_CODECS = new Set(['amr_nb', 'amr_wb']);

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

/** The refusal of a demuxer that would open other resources (input-policy.ts), if that is what failed. */
function refusedReference(err: FfmpegError, path: string): MediaError | undefined {
  const refused = refusedDemuxerOf(err.stderrTail);
  return refused ? new MediaError('refused-reference', `${path}: ${refused}`, path) : undefined;
}

/** SHA-256 of the file's content, streamed. */
async function fileFingerprint(path: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash, { signal });
  return `sha256:${hash.digest('hex')}`;
}

/**
 * Decodes the audio track, or its first `limitSeconds`, and counts the samples (the framecrc muxer
 * prints one line per decoded frame with its duration in 1/sample-rate units). Returns seconds.
 */
export async function decodedDurationSeconds(
  input: MediaInput,
  signal?: AbortSignal,
  limitSeconds?: number,
): Promise<number> {
  return (await framecrcSeconds(input, { copy: false, signal, limitSeconds })).total;
}

/**
 * The file's size; a missing, non-regular (a FIFO, a device, a directory) or empty path is refused:
 * reading a FIFO or a device never ends.
 */
async function fileSize(path: string): Promise<number> {
  let sizeBytes: number;
  try {
    const info = await stat(path);
    if (!info.isFile())
      throw new MediaError(
        'refused-reference',
        `${path} is not a regular file (a pipe, device or folder)`,
        path,
      );
    sizeBytes = info.size;
  } catch (err) {
    if (err instanceof MediaError) throw err;
    throw new MediaError('not-found', `${path}: no such file`, path);
  }
  if (sizeBytes === 0) throw new MediaError('empty', `${path} is empty (0 bytes)`, path);
  return sizeBytes;
}

/** The container's claims, as ffprobe reads them with the chosen reader. */
async function readContainer(
  path: string,
  reader: InputReader,
  signal?: AbortSignal,
): Promise<FfprobeOutput> {
  try {
    const json = await runFfprobe(
      [
        '-v',
        'error',
        '-show_entries',
        'format=format_name,duration:stream=index,codec_type,codec_name,sample_rate,channels',
        '-of',
        'json',
        ...inputArgs(plainInput(path, reader)),
      ],
      { signal },
    );
    return JSON.parse(json) as FfprobeOutput;
  } catch (err) {
    if (err instanceof FfmpegError) {
      throw (
        refusedReference(err, path) ??
        new MediaError('unreadable', `${path} is not a readable audio file (${reasonOf(err, path)})`, path)
      );
    }
    throw err;
  }
}

/** The first audio track, if it is one we can process. */
interface AudioTrack {
  streamIndex: number;
  codec: string;
  sampleRate: number;
  channels: number;
  hasVideo: boolean;
}

function audioTrackOf(path: string, probed: FfprobeOutput): AudioTrack {
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
  return { streamIndex, codec, sampleRate, channels, hasVideo };
}

/** The container's own timeline, what its head decodes to, and the content's fingerprint. */
interface MeasuredTimeline {
  /** What the packets (or AMR frames) hold, read without decoding. */
  containerSeconds: number;
  /** Decoded audio of the first {@link HEAD_DECODE_SECONDS} (less for a shorter recording). */
  headSeconds: number;
  fingerprint: string;
  amr?: AmrFrames;
}

/** The head decode, the container's own timeline and the fingerprint, in parallel. */
async function measureTimeline(
  path: string,
  reader: InputReader,
  track: AudioTrack,
  options: ProbeOptions,
): Promise<MeasuredTimeline> {
  const { signal } = options;
  const { streamIndex, codec } = track;
  try {
    const input = await openInput(path, reader, streamIndex, { signal, remake: true });
    const amr = input.frames;
    const [headSeconds, containerSeconds, fingerprint] = await Promise.all([
      decodedDurationSeconds(input, signal, HEAD_DECODE_SECONDS),
      amr
        ? amrSeconds(amr.frames)
        : packetSeconds(plainInput(path, reader, streamIndex), signal).then((packets) => {
            checkPacketGap(path, packets);
            return packets.seconds;
          }),
      options.fingerprint ?? fileFingerprint(path, signal),
    ]);
    return { containerSeconds, headSeconds, fingerprint, amr };
  } catch (err) {
    if (err instanceof FfmpegError) {
      const refused = refusedReference(err, path);
      if (refused) throw refused;
      const reason = reasonOf(err, path);
      const kind = /decoder .* not found/i.test(reason) ? 'unsupported-codec' : 'unreadable';
      throw new MediaError(kind, `${path}: cannot decode the ${codec} audio (${reason})`, path);
    }
    throw err;
  }
}

/**
 * Probes a local file; throws {@link MediaError} for anything we cannot process. Each tool run is
 * bounded in wall-clock time (time-bound.ts): reading the container by the file's size, the timeline
 * (which reads the whole file, without decoding it) by its size and the length the container claims,
 * each at most {@link PROBE_MAX_BOUND_MS}, under the probe activity's own timeout.
 */
export async function probeRecording(path: string, options: ProbeOptions = {}): Promise<ProbeResult> {
  const sizeBytes = await fileSize(path);
  const name = options.name ?? path;
  const head = await readHead(path);
  let reader: InputReader = readerOf(name, head);
  const refused = reader.format ? undefined : refusedContent(head);
  if (refused) throw new MediaError('refused-reference', `${path} is ${refused}`, path);
  const bounds = options.timeBounds;
  const boundMs = (what: { sizeBytes: number; audioSeconds?: number }) =>
    Math.min(timeBoundMs(what, bounds), PROBE_MAX_BOUND_MS);
  const probed = await withinTimeBound('ffprobe', path, boundMs({ sizeBytes }), options.signal, (signal) =>
    readContainer(path, reader, signal),
  );
  const track = audioTrackOf(path, probed);
  if (AMR_CODECS.has(track.codec)) reader = { ...reader, repair: 'amr' };
  const claimedSeconds = parseNumber(probed.format?.duration) ?? undefined;
  const { containerSeconds, headSeconds, fingerprint, amr } = await withinTimeBound(
    'reading its packets',
    path,
    boundMs({ sizeBytes, audioSeconds: claimedSeconds }),
    options.signal,
    (signal) => measureTimeline(path, reader, track, { ...options, signal }),
  );
  if (!(headSeconds > 0))
    throw new MediaError('zero-duration', `${path} holds no audio samples (zero duration)`, path);
  // What the packets hold is the length until the plan has decoded it all; a container whose packets
  // carry no durations leaves the header's claim, or at least the head that decoded.
  const durationSeconds =
    containerSeconds > 0 ? containerSeconds : Math.max(claimedSeconds ?? 0, headSeconds);

  return {
    path,
    sizeBytes,
    fingerprint,
    container: probed.format?.format_name ?? 'unknown',
    codec: track.codec,
    streamIndex: track.streamIndex,
    sampleRate: track.sampleRate,
    channels: track.channels,
    durationSeconds,
    containerSeconds,
    metadataDurationSeconds: parseNumber(probed.format?.duration),
    hasVideo: track.hasVideo,
    reader,
    ...(amr ? { amr } : {}),
  };
}
