/**
 * Audio decoding for recognition: the two codecs of spec 02 ("Audio formats"), to float samples in
 * [-1, 1]. Linear PCM is 16-bit little-endian mono; mu-law is G.711 at 8 kHz.
 */
import { decodeMulaw } from '../schemas/g711.ts';

export type AudioCodec = 'pcm' | 'mulaw';

/** Bytes per sample of a codec. */
export function bytesPerSample(codec: AudioCodec): number {
  return codec === 'pcm' ? 2 : 1;
}

/**
 * Streaming decoder: keeps an odd trailing byte of PCM for the next chunk, so a chunk boundary in the
 * middle of a sample loses nothing.
 */
export class AudioDecoder {
  private carry: number | undefined;

  readonly codec: AudioCodec;
  constructor(codec: AudioCodec) {
    this.codec = codec;
  }

  decode(bytes: Buffer): Float32Array {
    if (this.codec === 'mulaw') {
      return decodeMulaw(bytes);
    }
    let data = bytes;
    if (this.carry !== undefined) {
      data = Buffer.concat([Buffer.from([this.carry]), bytes]);
      this.carry = undefined;
    }
    const n = data.length >> 1;
    if (data.length & 1) this.carry = data[data.length - 1];
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) out[i] = data.readInt16LE(i * 2) / 32768;
    return out;
  }
}
