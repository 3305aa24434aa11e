/**
 * The decoded length against the container's own timeline. A decoder that drops what it cannot decode
 * (ffmpeg's AMR decoder and DTX frames, a corrupt MP3 frame) still exits 0 with a shorter output, and
 * every time after the first gap is then early: a timeline silently wrong. The container's timeline is
 * what its packets hold (their durations and timestamps, read without decoding) or, for AMR, its frame
 * count; the decoded length must not fall short of it by more than {@link LENGTH_TOLERANCE_SECONDS}, or
 * the recording is refused with both lengths named. The probe reads the timeline (and refuses packets
 * whose timestamps jump over a gap); the plan, whose channel analysis decodes every sample, checks the
 * decoded length against it.
 *
 * Not the header's claim: a WAV's data size or an MP3's Xing frame count can say anything (the
 * lying-duration cases of the corpus), and what the file holds is what counts.
 */
import type { LengthCheck } from '../../schemas/media-probe.ts';
import { MediaError } from './errors.ts';
import { runFfmpeg } from './ffmpeg.ts';
import { inputArgs, type MediaInput } from './media-input.ts';
import { roundSecondsToMs } from '../../schemas/units.ts';

/**
 * How far the decoded length may be from the container's: codecs trim their priming and padding (an
 * 8-kHz MP3 loses up to about 0.2 s of encoder delay and padding, AAC 1,024 samples, Opus 312) and
 * none of that shifts the timeline. A gap any longer would move later phrases by close to the 0.3 s
 * that a transcript's times are held to.
 */
const LENGTH_TOLERANCE_SECONDS = 0.25;

/**
 * Reads `input`'s audio stream through ffmpeg's framecrc muxer (one line per packet or decoded frame:
 * stream, dts, pts, duration, size, crc, in the stream's time base): `copy` demuxes only, otherwise
 * every frame is decoded; `limitSeconds` stops after that much output (a head read). Returns, in
 * seconds, the sum of the durations and the span from the first timestamp to the last one's end.
 */
export async function framecrcSeconds(
  input: MediaInput,
  options: { copy: boolean; signal?: AbortSignal; limitSeconds?: number },
): Promise<{ total: number; span: number }> {
  let timeBase = 0;
  let total = 0;
  let first: number | undefined;
  let end = 0;
  const codec = options.copy ? ['-c', 'copy'] : [];
  const limit = options.limitSeconds === undefined ? [] : ['-t', String(options.limitSeconds)];
  await runFfmpeg(
    [
      '-v',
      'error',
      ...inputArgs(input),
      '-map',
      `0:${input.streamIndex}`,
      ...codec,
      ...limit,
      '-f',
      'framecrc',
      '-',
    ],
    {
      signal: options.signal,
      onStdoutLine(line) {
        if (line.startsWith('#tb 0:')) {
          const [num, den] = line.slice(6).trim().split('/').map(Number);
          timeBase = num! / den!;
        } else if (!line.startsWith('#')) {
          const [, , pts, duration] = line.split(',').map(Number);
          if (!Number.isFinite(duration)) return;
          total += duration!;
          if (!Number.isFinite(pts)) return;
          first ??= pts!;
          end = Math.max(end, pts! + duration!);
        }
      },
    },
  );
  return { total: total * timeBase, span: first === undefined ? 0 : (end - first) * timeBase };
}

/**
 * The length the audio packets of `input` hold, seconds, read without decoding: the sum of their
 * durations or the span of their timestamps, whichever is longer. Joined files overlap their parts'
 * codec priming in time (a 10-part M4A: the sum is 0.58 s longer than the span) and decode to the sum;
 * a packet without a duration still counts in the span.
 */
export async function packetSeconds(input: MediaInput, signal?: AbortSignal): Promise<PacketLength> {
  const { total, span } = await framecrcSeconds(input, { copy: true, signal });
  return { seconds: Math.max(total, span), gapSeconds: Math.max(0, span - total) };
}

export interface PacketLength {
  /** What the packets hold: the longer of their durations' sum and their timestamps' span. */
  seconds: number;
  /**
   * How much longer the span is than the packets' durations: time the timestamps jump over with no
   * packet in it (a recorder that lost packets on the network, or paused without saying so).
   */
  gapSeconds: number;
}

/**
 * Refuses packets whose timestamps jump over a gap (see {@link PacketLength.gapSeconds}): audio the
 * file never had, not audio a decoder dropped, and found without decoding (the probe's check). The
 * reason names what the packets hold, the span of their timestamps and the gap.
 */
export function checkPacketGap(path: string, packets: PacketLength): void {
  if (packets.gapSeconds <= LENGTH_TOLERANCE_SECONDS) return;
  const held = roundSecondsToMs(packets.seconds - packets.gapSeconds);
  throw new MediaError(
    'length-mismatch',
    `${path}: its packets hold ${held} s of audio over ${roundSecondsToMs(packets.seconds)} s of ` +
      `timestamps (its timestamps jump over ${roundSecondsToMs(packets.gapSeconds)} s with no audio in ` +
      `them, a gap in the recording, which would shift every later time)`,
    path,
  );
}

/** The check's facts, or a {@link MediaError} `length-mismatch` that names both lengths. */
export function checkLength(
  path: string,
  lengths: Pick<LengthCheck, 'decodedSeconds' | 'containerSeconds' | 'measuredBy'>,
): LengthCheck {
  const check: LengthCheck = {
    decodedSeconds: roundSecondsToMs(lengths.decodedSeconds),
    containerSeconds: roundSecondsToMs(lengths.containerSeconds),
    measuredBy: lengths.measuredBy,
    toleranceSeconds: LENGTH_TOLERANCE_SECONDS,
  };
  // Decoding more than the packets hold is not lost audio: a file joined from parts decodes each part's
  // codec priming (an M4A of 10 parts: 0.9 s more). It is recorded here, not refused.
  const gap = check.containerSeconds - check.decodedSeconds;
  if (gap <= LENGTH_TOLERANCE_SECONDS) return check;
  const what = lengths.measuredBy === 'amr-frames' ? 'its AMR frames hold' : 'its packets hold';
  throw new MediaError(
    'length-mismatch',
    `${path}: decodes to ${check.decodedSeconds} s but ${what} ${check.containerSeconds} s ` +
      `(${roundSecondsToMs(gap)} s of it did not decode, which would shift every later time)`,
    path,
  );
}
