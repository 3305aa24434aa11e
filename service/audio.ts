/**
 * Audio arithmetic of stream recognition (spec 02, Audio formats and Limits): bytes per 240 ms request,
 * byte ↔ second offsets for resuming, and re-chunking of whatever the source yields into request-sized
 * pieces.
 */
import type { Readable } from 'node:stream';
import { SERVICE_MAX_SESSION_SECONDS } from '../schemas/limits.ts';
import type { AudioCodec } from './start-message.ts';

/** Audio per send request (spec 02, Limits): 240 ms. */
export const CHUNK_MS = 240;
/** Longest stream per session (spec 02, Limits): 3,000 s. */
export const MAX_SESSION_SECONDS = SERVICE_MAX_SESSION_SECONDS;

/** Bytes of one sample frame: mu-law is 8-bit, PCM 16-bit little-endian mono (spec 02, Audio formats). */
export function bytesPerSample(codec: AudioCodec): number {
  return codec === 'mulaw' ? 1 : 2;
}

export function bytesPerSecond(codec: AudioCodec, sampleRate: number): number {
  return sampleRate * bytesPerSample(codec);
}

/** Bytes of one 240 ms request: 1,920 for 8 kHz mu-law, 3,840 for 8 kHz PCM, 7,680 for 16 kHz PCM. */
export function chunkBytes(codec: AudioCodec, sampleRate: number): number {
  return Math.round((sampleRate * CHUNK_MS) / 1000) * bytesPerSample(codec);
}

export interface AudioOffset {
  /** Bytes to skip from the beginning of the session's audio (whole samples). */
  bytes: number;
  /** The exact time those bytes last, to pass as `startOffsetSeconds`. */
  seconds: number;
}

/**
 * The byte offset of `seconds` into raw audio, rounded down to a whole sample, and the exact time of
 * that offset. Use both together when resuming: skip `bytes` of the source, pass `seconds` as the
 * session's `startOffsetSeconds`, and the times the service reports land on the original timeline.
 */
export function audioOffset(seconds: number, codec: AudioCodec, sampleRate: number): AudioOffset {
  const frames = Math.floor(Math.max(0, seconds) * sampleRate + 1e-6);
  return { bytes: frames * bytesPerSample(codec), seconds: frames / sampleRate };
}

/** Anything the session can read audio from: a Node Readable of raw bytes, or any (async) iterable of byte chunks. */
export type AudioSource = Readable | AsyncIterable<Uint8Array | string> | Iterable<Uint8Array>;

/**
 * Re-cuts a byte stream into pieces of exactly `size` bytes (the last one may be shorter, spec 02),
 * never splitting a sample frame of `frameBytes`.
 */
export async function* rechunk(source: AudioSource, size: number, frameBytes = 1): AsyncGenerator<Buffer> {
  // Each piece is copied once, straight into the request it belongs to (the source may reuse its
  // buffers after we yield): no joined copy of every piece first.
  let chunk = Buffer.allocUnsafe(size);
  let filled = 0;
  for await (const piece of source as AsyncIterable<Uint8Array | string>) {
    const buf = typeof piece === 'string' ? Buffer.from(piece, 'binary') : piece;
    for (let at = 0; at < buf.byteLength;) {
      const n = Math.min(size - filled, buf.byteLength - at);
      chunk.set(buf.subarray(at, at + n), filled);
      filled += n;
      at += n;
      if (filled === size) {
        yield chunk;
        chunk = Buffer.allocUnsafe(size);
        filled = 0;
      }
    }
  }
  const rest = filled - (filled % frameBytes);
  if (rest > 0) yield chunk.subarray(0, rest);
}
