/**
 * A small seeded pseudo-random generator (mulberry32): the same seed gives the same sequence, so a
 * generated call script, a rendered fixture or an injected fault can be reproduced from its seed. Fast,
 * and ample for choosing phrases, noise and faults; not for anything secret. Imports nothing, so the
 * emulator, the media fixtures, tests and benchmarks all share it.
 */

/** Numbers uniform in [0, 1). */
export type Random = () => number;

export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
