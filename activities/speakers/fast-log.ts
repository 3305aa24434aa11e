/**
 * Natural logarithm of a positive, finite, normal double, to within 3e-6 (absolute): the exponent and the
 * mantissa's top 20 bits are read from the number's bits, ln of the mantissa interpolated linearly in a
 * 256-entry table. The mel energies' logarithms use it: their noise is orders of magnitude above its error,
 * and it takes about a third of Math.log's time (bench/README.md, the sixteenth round).
 */
const bits = new Float64Array(1);
const words = new Uint32Array(bits.buffer);
/** The index of the word holding the sign, the exponent and the mantissa's top 20 bits. */
const HIGH = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;
const STEPS = 256;
const STEP_BITS = 8;
const FRACTION_BITS = 20 - STEP_BITS;
/** Per step i: ln(1 + i/STEPS) and the rise to the next step, side by side (one cache line). */
const TABLE = new Float64Array(2 * STEPS);
for (let i = 0; i < STEPS; i++) {
  TABLE[2 * i] = Math.log(1 + i / STEPS);
  TABLE[2 * i + 1] = Math.log(1 + (i + 1) / STEPS) - TABLE[2 * i]!;
}

/** ln(x) for a positive, finite, normal x (unchecked: the callers add a positive floor). */
export function fastLog(x: number): number {
  bits[0] = x;
  const high = words[HIGH]!;
  const i = 2 * ((high >>> FRACTION_BITS) & (STEPS - 1));
  const fraction = (high & ((1 << FRACTION_BITS) - 1)) * (1 / (1 << FRACTION_BITS));
  return ((high >>> 20) - 1023) * Math.LN2 + TABLE[i]! + fraction * TABLE[i + 1]!;
}
