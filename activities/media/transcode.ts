/**
 * Transcode an exact range of a recording's track to the recognizer's format, streamed from ffmpeg's
 * stdout: input seek to the range's start, the track's channel(s) panned to mono, resampled,
 * conditioned (DC and hum removed: conditioning.ts), padded, then trimmed to the exact sample count
 * (`atrim=end_sample`), so N s is N × 8,000 bytes of mu-law whatever the source's packet boundaries.
 * A plan's tracks are staged whole (staged-tracks.ts) and its sessions read byte ranges of them.
 */
import type { SessionAudioFormat } from '../../schemas/media-transcode.ts';
import { panFilter } from './channels.ts';
import { conditioningFilters } from './conditioning.ts';
import { spawnFfmpeg, type ToolProcess } from './ffmpeg.ts';
import { inputArgs, type MediaInput } from './media-input.ts';
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
 * Every range transcode uses them (a track transcoded whole, staged-tracks.ts); the channel analysis
 * applies the same pan and conditioning in Node to the tracks it writes (track-writers.ts).
 */
function trackFilters(sourceChannels: number[], sampleRate = 8000, conditioning = true): string[] {
  return [
    panFilter({ sourceChannels }),
    `aresample=${sampleRate}`,
    ...(conditioning ? conditioningFilters() : []),
  ];
}

/** ffmpeg's arguments for one exact range. */
function transcodeArgs(range: TranscodeRange): string[] {
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
