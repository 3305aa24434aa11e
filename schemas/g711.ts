/**
 * G.711 mu-law (ITU-T G.711), the 8-kHz codec of recognition audio (spec 02, "Audio formats"): decoded to
 * float samples in [-1, 1]. One table for the emulator, which hears it, and the speakers stage, which reads
 * the staged sessions to tell voices apart; and encoded from 16-bit samples for the plan's staged tracks
 * (channel-analysis.ts writes them), the codes ffmpeg's `pcm_mulaw` gives.
 */
const MULAW_TABLE = (() => {
  const table = new Float32Array(256);
  for (let i = 0; i < 256; i++) {
    const u = ~i & 0xff;
    const sign = u & 0x80;
    const exponent = (u >> 4) & 0x07;
    const mantissa = u & 0x0f;
    const magnitude = (((mantissa << 3) + 0x84) << exponent) - 0x84;
    table[i] = (sign ? -magnitude : magnitude) / 32768;
  }
  return table;
})();

/**
 * The sample of each mu-law code (index: the code), for loops that read codes where they would read
 * decoded samples: the same Float32 values decodeMulawInto writes. Not to be written to.
 */
export const mulawSamples: Readonly<Float32Array> = MULAW_TABLE;

/** Samples of mu-law bytes, one per byte. */
export function decodeMulaw(bytes: Uint8Array): Float32Array {
  const out = new Float32Array(bytes.length);
  decodeMulawInto(bytes, 0, bytes.length, out, 0);
  return out;
}

/**
 * Decodes `bytes` from index `from` to `to` into `out` from index `at`: no allocation (not even a view of
 * the bytes), for readers of many short frames.
 */
export function decodeMulawInto(
  bytes: Uint8Array,
  from: number,
  to: number,
  out: Float32Array,
  at: number,
): void {
  const table = MULAW_TABLE;
  for (let i = from, j = at; i < to; i++, j++) out[j] = table[bytes[i]!]!;
}

/** Linear value of a mu-law code, in 16-bit units before the final scaling (G.711's expansion). */
function mulawToLinear16(code: number): number {
  return Math.round(MULAW_TABLE[code]! * 32768);
}

/**
 * The encoder's table over 14-bit linear values (a 16-bit sample shifted right by 2): each value gets the
 * code whose decoded level is nearest, the decision levels halfway between neighbouring codes: the codes
 * ffmpeg's pcm_mulaw encoder gives for every 16-bit sample (test/unit/g711.test.ts compares all 65,536).
 */
const LINEAR_TO_MULAW = (() => {
  const table = new Uint8Array(16384);
  let j = 1;
  table[8192] = 0xff;
  for (let i = 0; i < 127; i++) {
    const level = (mulawToLinear16(i ^ 0xff) + mulawToLinear16((i + 1) ^ 0xff) + 4) >> 3;
    for (; j < level; j++) {
      table[8192 - j] = i ^ 0x7f;
      table[8192 + j] = i ^ 0xff;
    }
  }
  for (; j < 8192; j++) {
    table[8192 - j] = 127 ^ 0x7f;
    table[8192 + j] = 127 ^ 0xff;
  }
  table[0] = table[1]!;
  return table;
})();

/** The mu-law code of a 16-bit sample (an integer in [-32768, 32767]). */
export function encodeMulaw(sample: number): number {
  return LINEAR_TO_MULAW[(sample + 32768) >> 2]!;
}
