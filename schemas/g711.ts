/**
 * G.711 mu-law (ITU-T G.711), the 8-kHz codec of recognition audio (spec 02, "Audio formats"): decoded to
 * float samples in [-1, 1]. One table for the emulator, which hears it, and the speakers stage, which reads
 * the staged sessions to tell voices apart.
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
