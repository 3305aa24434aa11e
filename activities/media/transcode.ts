/**
 * Transcode one planned session to the recognizer's format, streamed from ffmpeg's stdout into staging
 * storage. Cut exactly: input seek to the session's start, the track's channel(s) panned to mono,
 * resampled, conditioned (DC and hum removed: conditioning.ts), padded, then trimmed to the exact sample count (`atrim=end_sample`), so a session of N s
 * is N × 8,000 bytes of mu-law whatever the source's packet boundaries; a counting stream checks it
 * on the way to storage and fails the upload when it does not hold.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { InputReader } from '../../schemas/media-probe.ts';
import type { SessionAudioFormat, StagedSession } from '../../schemas/media-transcode.ts';
import { panFilter } from './channels.ts';
import { conditioningFilters } from './conditioning.ts';
import { MediaLengthError } from './errors.ts';
import { spawnFfmpeg, type ToolProcess } from './ffmpeg.ts';
import { inputArgs, openInput, type MediaInput } from './media-input.ts';
import { stagingKey, type StagingStore } from './staging.ts';
import { timeBoundMs, withinTimeBound, type MediaTimeBounds } from './time-bound.ts';
import { secondsText } from '../../schemas/units.ts';

/** ffmpeg parameters of each session format (spec 02, Audio formats). */
const FORMATS: Record<
  SessionAudioFormat,
  { sampleRate: number; bytesPerSample: number; codec: string; muxer: string }
> = {
  mulaw: { sampleRate: 8000, bytesPerSample: 1, codec: 'pcm_mulaw', muxer: 'mulaw' },
  pcm16k: { sampleRate: 16000, bytesPerSample: 2, codec: 'pcm_s16le', muxer: 's16le' },
};
/** Extra input read past the session's end, so the resampler's tail is real audio rather than padding. */
const READ_PAST_END_SECONDS = 0.5;

/** Exact byte length of `seconds` of audio in `format` (plan times are on a millisecond grid). */
export function expectedBytes(seconds: number, format: SessionAudioFormat): number {
  const f = FORMATS[format];
  return Math.round(seconds * f.sampleRate) * f.bytesPerSample;
}

export interface TranscodeRange {
  /** What ffmpeg reads: the local source file (or its repaired copy) and its audio stream. */
  input: MediaInput;
  /** Source channels of the track (one, or several mixed at equal gain). */
  sourceChannels: number[];
  start: number;
  end: number;
  format: SessionAudioFormat;
  /** DC and hum removal (conditioning.ts); default on. Off only to measure what it costs (bench/media). */
  conditioning?: boolean;
}

/**
 * The filters that make a track of the source: its channel(s) panned to mono, resampled, conditioned.
 * Shared by a session's transcode and a track transcoded whole (staged-tracks.ts), so both give the
 * recognizer the same audio.
 */
function trackFilters(sourceChannels: number[], sampleRate = 8000, conditioning = true): string[] {
  return [
    panFilter({ sourceChannels }),
    `aresample=${sampleRate}`,
    ...(conditioning ? conditioningFilters() : []),
  ];
}

/**
 * The same track from a stream already resampled to the track's rate (the channel analysis resamples
 * every channel once and splits it): panned, then conditioned. The resampler works on each channel on
 * its own, so picking a channel after it gives the very samples {@link trackFilters} gives; a mix of
 * channels may differ in its last bit (the gains applied after resampling instead of before).
 */
export function trackFiltersAtRate(sourceChannels: number[]): string[] {
  return [panFilter({ sourceChannels }), ...conditioningFilters()];
}

/** ffmpeg's arguments for one exact range: exposed for the benchmark and tests. */
export function transcodeArgs(range: TranscodeRange): string[] {
  const f = FORMATS[range.format];
  const samples = Math.round((range.end - range.start) * f.sampleRate);
  const filters = [
    ...trackFilters(range.sourceChannels, f.sampleRate, range.conditioning !== false),
    'apad',
    `atrim=end_sample=${samples}`,
  ].join(',');
  return [
    '-v',
    'error',
    // One thread each: a worker runs about one ffmpeg per core already, and a mono 8-kHz graph gains
    // nothing from more.
    '-threads',
    '1',
    '-filter_threads',
    '1',
    ...(range.start > 0 ? ['-ss', secondsText(range.start)] : []),
    '-t',
    secondsText(range.end - range.start + READ_PAST_END_SECONDS),
    ...inputArgs(range.input),
    '-map',
    `0:${range.input.streamIndex}`,
    '-af',
    filters,
    '-c:a',
    f.codec,
    '-f',
    f.muxer,
    // Full 32-KiB writes, not one per packet: to a pipe, ffmpeg flushes every packet by default, which
    // is a write of about 1.3 KB each and as many reads, stream callbacks and file writes in the worker.
    '-flush_packets',
    '0',
    'pipe:1',
  ];
}

/** Starts the transcode of a range; read `stdout` (raw audio), await `done`. */
export function transcodeStream(range: TranscodeRange, signal?: AbortSignal): ToolProcess {
  return spawnFfmpeg(transcodeArgs(range), { signal });
}

/** Passes bytes through and fails the stream unless exactly `expected` bytes went by. */
export class ExactLengthStream extends Transform {
  bytes = 0;
  readonly expected: number;
  readonly what: string;
  constructor(expected: number, what: string) {
    super();
    this.expected = expected;
    this.what = what;
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.expected) callback(new MediaLengthError(this.expected, this.bytes, this.what));
    else callback(null, chunk);
  }
  override _flush(callback: TransformCallback): void {
    callback(
      this.bytes === this.expected ? null : new MediaLengthError(this.expected, this.bytes, this.what),
    );
  }
}

export interface TranscodeSessionInput extends Omit<TranscodeRange, 'input'> {
  /** Local source file. */
  path: string;
  /** Audio stream index in the file (ProbeResult.streamIndex). */
  streamIndex: number;
  /** How ffmpeg reads it (ProbeResult.reader); default: by its content. */
  reader?: InputReader | undefined;
  /** Source fingerprint (ProbeResult.fingerprint): part of the key and checked on reuse. */
  fingerprint: string;
  track: number;
}

export interface TranscodeSessionOptions {
  store: StagingStore;
  /** Key prefix (the configured staging prefix). */
  keyPrefix?: string;
  signal?: AbortSignal;
  /** Wall-clock bounds of the ffmpeg run (time-bound.ts); default: the product's. */
  timeBounds?: MediaTimeBounds;
  /**
   * Whether an earlier output may be in the store (default true): a retried attempt's, or an earlier
   * run's of the same call. False skips the look (a HEAD) and transcodes again.
   */
  mayExist?: boolean;
}

/**
 * Transcodes one session into staging, unless it may be there already (`mayExist`) and is, for the same
 * fingerprint with the right length.
 */
export async function transcodeSession(
  input: TranscodeSessionInput,
  options: TranscodeSessionOptions,
): Promise<StagedSession> {
  const { store, signal } = options;
  const key = stagingKey({ ...input, prefix: options.keyPrefix });
  const bytes = expectedBytes(input.end - input.start, input.format);
  const staged = { key, format: input.format, bytes, start: input.start, end: input.end };

  const existing = options.mayExist === false ? undefined : await store.head(key);
  if (existing && existing.size === bytes && existing.meta.fingerprint === input.fingerprint) {
    return { ...staged, reused: true };
  }
  // Bounded by the session's length: an input that stalls ffmpeg ends the run rather than the slot.
  const ms = timeBoundMs({ audioSeconds: input.end - input.start }, options.timeBounds);
  await withinTimeBound('the transcode', input.path, ms, signal, (bounded) =>
    transcodeToStore(input, { ...options, signal: bounded }, key, bytes),
  );
  return { ...staged, reused: false };
}

async function transcodeToStore(
  input: TranscodeSessionInput,
  options: TranscodeSessionOptions,
  key: string,
  bytes: number,
): Promise<void> {
  const { store, signal } = options;
  const media = await openInput(input.path, input.reader, input.streamIndex, { signal });
  const proc = transcodeStream({ ...input, input: media }, signal);
  const counter = new ExactLengthStream(bytes, `session ${input.start}-${input.end} s of ${input.path}`);
  const meta = {
    fingerprint: input.fingerprint,
    format: input.format,
    bytes: String(bytes),
    start: String(input.start),
    end: String(input.end),
    track: String(input.track),
  };
  // Whichever side fails first stops the other: a failed upload must not leave ffmpeg blocked on a
  // full pipe, a failed ffmpeg or length check must not leave a half object.
  let lengthFailed = false;
  let storeFailure: unknown;
  counter.once('error', () => (lengthFailed = true));
  const feeding = pipeline(proc.stdout, counter).catch((err: unknown) => {
    proc.kill();
    throw err;
  });
  const putting = store.put(key, counter, meta).catch((err: unknown) => {
    // The store failing on its own (not because the body failed) is the cause of everything after.
    if (!lengthFailed) storeFailure = err;
    proc.kill();
    counter.destroy(err as Error);
    throw err;
  });
  const [ffmpeg, ...rest] = await Promise.allSettled([proc.done, feeding, putting]);
  if (storeFailure !== undefined) throw storeFailure;
  // ffmpeg's own failure explains a short output better than the length check does.
  if (ffmpeg.status === 'rejected') throw ffmpeg.reason;
  const failed = rest.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
