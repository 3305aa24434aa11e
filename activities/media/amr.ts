/**
 * AMR (as phones and mobile call recorders write it) with discontinuous transmission (DTX): during
 * silences the encoder sends comfort-noise (SID) frames and NO_DATA frames instead of speech. Debian's
 * ffmpeg decodes AMR with its built-in decoder only, which refuses those frames ("Not yet implemented",
 * "Corrupt bitstream"), drops them and still exits 0: a 75-s call decodes to 22 s, every phrase after
 * the first silence early. No DTX-aware decoder is available from our registries as an ffmpeg decoder
 * (ffmpeg's libopencore_amrnb is not enabled in Debian's build; sox with libopencore-amrnb would be a
 * second media tool on every worker), so the frames are repaired instead: each SID or NO_DATA frame
 * becomes a speech frame that decodes to silence, and ffmpeg then decodes every frame. Comfort noise
 * is, by definition, no speech, so nothing the recognizer needs is lost, and the timeline stays whole.
 *
 * The storage format (RFC 4867 section 5, 3GPP TS 26.101): a magic line (`#!AMR\n` or `#!AMR-WB\n`)
 * then 20-ms frames, each a header byte (`P FT(4) Q P P`) and a payload whose size the frame type
 * gives. So the stream's true length is countable: frames × 20 ms. AMR in 3GP/MP4 is the same frames
 * in packets; ffmpeg copies them out to this format (`-c copy -f amr`) before the repair.
 */
import { Transform, type TransformCallback } from 'node:stream';
import type { AmrFrames } from '../../schemas/media-probe.ts';
import { roundSecondsToMs } from '../../schemas/units.ts';

const AMR_NB_MAGIC = '#!AMR\n';
const AMR_WB_MAGIC = '#!AMR-WB\n';
/** Every AMR frame is 20 ms (160 samples at 8 kHz, 320 at 16 kHz). */
const AMR_FRAME_SECONDS = 0.02;

interface Variant {
  magic: string;
  /** Payload bytes after the header byte, per frame type 0–15 (ffmpeg's amr demuxer's sizes less one). */
  payload: readonly number[];
  /** Frame types that are speech and decode as they are. */
  speechTypes: number;
  /** The comfort-noise (SID) frame type. */
  sid: number;
  /** The frame every SID or NO_DATA frame becomes: a speech frame that decodes to (near) silence. */
  silentFrame: Buffer;
}

/**
 * The silent frames were measured with ffmpeg 5.1's decoders: an all-zero AMR-NB 4.75 kbit/s frame
 * decodes to digital silence, an all-zero AMR-WB 12.65 kbit/s frame to about -78 dBFS (lower modes of
 * AMR-WB decode louder). Header byte: frame type << 3, quality bit set.
 */
const VARIANTS: Record<'nb' | 'wb', Variant> = {
  nb: {
    magic: AMR_NB_MAGIC,
    payload: [12, 13, 15, 17, 19, 20, 26, 31, 5, 0, 0, 0, 0, 0, 0, 0],
    speechTypes: 8,
    sid: 8,
    silentFrame: Buffer.concat([Buffer.from([(0 << 3) | 0x04]), Buffer.alloc(12)]),
  },
  wb: {
    magic: AMR_WB_MAGIC,
    payload: [17, 23, 32, 36, 40, 46, 50, 58, 60, 5, 0, 0, 0, 0, 0, 0],
    speechTypes: 9,
    sid: 9,
    silentFrame: Buffer.concat([Buffer.from([(2 << 3) | 0x04]), Buffer.alloc(32)]),
  },
};

/** The AMR variant of a file starting with `head`, or undefined when it is not single-channel AMR. */
function amrVariantOf(head: Buffer): 'nb' | 'wb' | undefined {
  const text = head.toString('latin1', 0, 9);
  if (text.startsWith(AMR_WB_MAGIC)) return 'wb';
  if (text.startsWith(AMR_NB_MAGIC)) return 'nb';
  return undefined;
}

/** A stream that is not AMR storage format, or one we cannot repair: the recording is refused with it. */
export class AmrFormatError extends Error {
  override name = 'AmrFormatError';
}

/**
 * Rewrites an AMR storage-format stream frame by frame: speech frames pass unchanged, SID, NO_DATA and
 * reserved or lost frame types become the variant's silent frame, an incomplete last frame is dropped.
 * `frames` counts them on the way; read it after the stream has ended.
 */
export class AmrRepairStream extends Transform {
  readonly frames: AmrFrames = { variant: 'nb', frames: 0, speech: 0, sid: 0, noData: 0, truncatedBytes: 0 };
  private variant: Variant | undefined;
  private rest: Buffer = Buffer.alloc(0);

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let buf: Buffer = this.rest.length ? Buffer.concat([this.rest, chunk]) : chunk;
    if (!this.variant) {
      if (buf.length < AMR_WB_MAGIC.length) {
        this.rest = buf;
        return callback();
      }
      const variant = amrVariantOf(buf);
      if (!variant) return callback(new AmrFormatError('not an AMR storage-format stream (no #!AMR header)'));
      this.variant = VARIANTS[variant];
      this.frames.variant = variant;
      this.push(buf.subarray(0, this.variant.magic.length));
      buf = buf.subarray(this.variant.magic.length);
    }
    const { payload, speechTypes, sid, silentFrame } = this.variant;
    const out: Buffer[] = [];
    let at = 0;
    while (at < buf.length) {
      const type = (buf[at]! >> 3) & 0x0f;
      const size = 1 + payload[type]!;
      if (at + size > buf.length) break;
      this.frames.frames += 1;
      if (type < speechTypes) {
        this.frames.speech += 1;
        out.push(buf.subarray(at, at + size));
      } else {
        if (type === sid) this.frames.sid += 1;
        else this.frames.noData += 1;
        out.push(silentFrame);
      }
      at += size;
    }
    this.rest = Buffer.from(buf.subarray(at));
    if (out.length) this.push(Buffer.concat(out));
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (!this.variant) return callback(new AmrFormatError('not an AMR storage-format stream (too short)'));
    this.frames.truncatedBytes = this.rest.length;
    callback();
  }
}

/** The true length of an AMR stream of `frames` frames. */
export function amrSeconds(frames: number): number {
  return roundSecondsToMs(frames * AMR_FRAME_SECONDS);
}
