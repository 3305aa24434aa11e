/**
 * The real FFT of the voice features (voice-features.ts). Power spectra go to PFFFT (simd-fft.ts) when it
 * can do n (a multiple of 32: the 256-point frames); the pitch's real part (an inverse transform of a power
 * spectrum, in double precision) and any other n use the transform here: n real points as a complex FFT
 * of n/2 (even samples as real parts, odd as imaginary) and a split step, with every table built once.
 * Pure; each transform writes into the RealFft's own buffers.
 */
import { makeSimdRealFft, simdHeap, simdInputPower, type SimdRealFft } from './simd-fft.ts';

const TINY = 1e-10;
/**
 * A real FFT of n points as a complex FFT of n/2 (even samples as real parts, odd as imaginary) and a
 * split step. Every table is built once: the bit-reversal order, each stage's twiddles laid out one after
 * the other (so a stage reads them in sequence), and the split's twiddles.
 */
export interface RealFft {
  n: number;
  half: number;
  bitReverse: Uint32Array;
  /** Twiddles e^{-2πik/size} of the stage of `size`, at index size/2 + k (k < size/2). */
  twiddleCos: Float64Array;
  twiddleSin: Float64Array;
  /** Twiddles of the real-split step, e^{-2πik/n}. */
  splitCos: Float64Array;
  splitSin: Float64Array;
  zr: Float64Array;
  zi: Float64Array;
  /** A windowed frame, when there is no PFFFT transform to load it into. */
  frame: Float64Array;
  /** PFFFT's transform of n points (simd-fft.ts), which the power spectra use when there is one. */
  simd: SimdRealFft | null;
}

export function makeRealFft(n: number): RealFft {
  const half = n / 2;
  const bits = Math.log2(half);
  const bitReverse = new Uint32Array(half);
  for (let i = 0; i < half; i++) {
    let r = 0;
    for (let b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
    bitReverse[i] = r;
  }
  const twiddleCos = new Float64Array(half);
  const twiddleSin = new Float64Array(half);
  for (let size = 2; size <= half; size *= 2) {
    const h = size / 2;
    for (let k = 0; k < h; k++) {
      twiddleCos[h + k] = Math.cos((2 * Math.PI * k) / size);
      twiddleSin[h + k] = -Math.sin((2 * Math.PI * k) / size);
    }
  }
  const splitCos = new Float64Array(half + 1);
  const splitSin = new Float64Array(half + 1);
  for (let k = 0; k <= half; k++) {
    splitCos[k] = 0.5 * Math.cos((2 * Math.PI * k) / n);
    splitSin[k] = -0.5 * Math.sin((2 * Math.PI * k) / n);
  }
  return {
    n,
    half,
    bitReverse,
    twiddleCos,
    twiddleSin,
    splitCos,
    splitSin,
    zr: new Float64Array(half),
    zi: new Float64Array(half),
    frame: new Float64Array(n),
    simd: makeSimdRealFft(n),
  };
}

/** The complex FFT of n/2 points of the real `x` (length n) into f.zr / f.zi, its even samples as real parts. */
function halfTransform(f: RealFft, x: Float64Array): void {
  const { half, bitReverse, zr, zi } = f;
  // Bit-reversed load fused with the first two stages (sizes 2 and 4), whose twiddles are 1 and -i.
  for (let i = 0; i < half; i += 4) {
    const p0 = 2 * bitReverse[i]!;
    const p1 = 2 * bitReverse[i + 1]!;
    const p2 = 2 * bitReverse[i + 2]!;
    const p3 = 2 * bitReverse[i + 3]!;
    firstStages(zr, zi, i, x[p0]!, x[p0 + 1]!, x[p1]!, x[p1 + 1]!, x[p2]!, x[p2 + 1]!, x[p3]!, x[p3 + 1]!);
  }
  laterStages(f);
}

/** The first two stages (sizes 2 and 4, twiddles 1 and -i) of four loaded points, into `i`..`i + 3`. */
function firstStages(
  zr: Float64Array,
  zi: Float64Array,
  i: number,
  x0r: number,
  x0i: number,
  x1r: number,
  x1i: number,
  x2r: number,
  x2i: number,
  x3r: number,
  x3i: number,
): void {
  const r0 = x0r + x1r;
  const i0 = x0i + x1i;
  const r1 = x0r - x1r;
  const i1 = x0i - x1i;
  const r2 = x2r + x3r;
  const i2 = x2i + x3i;
  const r3 = x2r - x3r;
  const i3 = x2i - x3i;
  zr[i] = r0 + r2;
  zi[i] = i0 + i2;
  zr[i + 2] = r0 - r2;
  zi[i + 2] = i0 - i2;
  zr[i + 1] = r1 + i3;
  zi[i + 1] = i1 - r3;
  zr[i + 3] = r1 - i3;
  zi[i + 3] = i1 + r3;
}

/** The stages of sizes 8 to n/2 of halfTransform, in place in f.zr / f.zi. */
function laterStages(f: RealFft): void {
  const { half, twiddleCos, twiddleSin, zr, zi } = f;
  // Two stages at a time (sizes s and 2s, "radix 2²"): each element is loaded and stored once per pair.
  let size = 8;
  for (; 2 * size <= half; size *= 4) {
    const h = size / 2;
    for (let block = 0; block < half; block += 2 * size) {
      for (let k = 0; k < h; k++) {
        const w1r = twiddleCos[h + k]!;
        const w1i = twiddleSin[h + k]!;
        const w2r = twiddleCos[size + k]!;
        const w2i = twiddleSin[size + k]!;
        const p0 = block + k;
        const p1 = p0 + h;
        const p2 = p0 + size;
        const p3 = p2 + h;
        // Stage of `size`: (p0, p1) and (p2, p3), twiddle w1.
        let tr = zr[p1]! * w1r - zi[p1]! * w1i;
        let ti = zr[p1]! * w1i + zi[p1]! * w1r;
        const a0r = zr[p0]! + tr;
        const a0i = zi[p0]! + ti;
        const a1r = zr[p0]! - tr;
        const a1i = zi[p0]! - ti;
        tr = zr[p3]! * w1r - zi[p3]! * w1i;
        ti = zr[p3]! * w1i + zi[p3]! * w1r;
        const a2r = zr[p2]! + tr;
        const a2i = zi[p2]! + ti;
        const a3r = zr[p2]! - tr;
        const a3i = zi[p2]! - ti;
        // Stage of 2·size: (p0, p2) with w2, (p1, p3) with w2·(-i).
        tr = a2r * w2r - a2i * w2i;
        ti = a2r * w2i + a2i * w2r;
        zr[p0] = a0r + tr;
        zi[p0] = a0i + ti;
        zr[p2] = a0r - tr;
        zi[p2] = a0i - ti;
        tr = a3r * w2i + a3i * w2r;
        ti = a3i * w2i - a3r * w2r;
        zr[p1] = a1r + tr;
        zi[p1] = a1i + ti;
        zr[p3] = a1r - tr;
        zi[p3] = a1i - ti;
      }
    }
  }
  // A last single stage when the stages are odd in number.
  for (; size <= half; size *= 2) {
    const h = size / 2;
    for (let block = 0; block < half; block += size) {
      for (let k = 0; k < h; k++) {
        const wr = twiddleCos[h + k]!;
        const wi = twiddleSin[h + k]!;
        const a = block + k;
        const b = a + h;
        const xr = zr[b]!;
        const xi = zi[b]!;
        const br = xr * wr - xi * wi;
        const bi = xr * wi + xi * wr;
        const ar = zr[a]!;
        const ai = zi[a]!;
        zr[b] = ar - br;
        zi[b] = ai - bi;
        zr[a] = ar + br;
        zi[a] = ai + bi;
      }
    }
  }
}

/** The power spectrum, bins 0..n/2, of the real `x` (length n) into `power` (length n/2 + 1). */
export function powerSpectrum(f: RealFft, x: Float64Array, power: Float64Array): void {
  if (f.simd) {
    const heap = simdHeap();
    heap.set(x.subarray(0, f.n), f.simd.input);
    return simdInputPower(f.simd, heap, power);
  }
  halfTransform(f, x);
  splitPower(f, power);
}

/**
 * The power spectrum of n samples of `pool` from `base`, less `mean`, times `window` (see powerSpectrum):
 * with PFFFT, loaded straight into its input.
 */
export function windowedPowerSpectrum(
  f: RealFft,
  pool: Float32Array,
  base: number,
  mean: number,
  window: Float64Array,
  power: Float64Array,
): void {
  const { n } = f;
  if (f.simd) {
    const heap = simdHeap();
    const at = f.simd.input;
    for (let i = 0; i < n; i++) heap[at + i] = (pool[base + i]! - mean) * window[i]!;
    return simdInputPower(f.simd, heap, power);
  }
  const { frame } = f;
  for (let i = 0; i < n; i++) frame[i] = (pool[base + i]! - mean) * window[i]!;
  powerSpectrum(f, frame, power);
}

/**
 * windowedPowerSpectrum of the n mu-law codes from `from`, each read through `samples` (mulawSamples
 * widened to doubles: no widening per sample) as it is loaded: the same values as decoding the codes
 * first, with no pass that writes them out.
 */
export function windowedMulawPowerSpectrum(
  f: RealFft,
  codes: Uint8Array,
  from: number,
  samples: Float64Array,
  mean: number,
  window: Float64Array,
  power: Float64Array,
): void {
  const { n } = f;
  if (f.simd) {
    const heap = simdHeap();
    const at = f.simd.input;
    for (let i = 0; i < n; i++) heap[at + i] = (samples[codes[from + i]!]! - mean) * window[i]!;
    return simdInputPower(f.simd, heap, power);
  }
  const { frame } = f;
  for (let i = 0; i < n; i++) frame[i] = (samples[codes[from + i]!]! - mean) * window[i]!;
  powerSpectrum(f, frame, power);
}

/**
 * Bin k of the power spectrum from the half-length transform's bins k (r1, i1) and n/2 − k (r2, i2): the
 * spectra of the even and odd samples (twice over), combined; the split twiddles carry the halves.
 */
function splitBin(
  f: RealFft,
  power: Float64Array,
  k: number,
  r1: number,
  i1: number,
  r2: number,
  i2: number,
): void {
  const er = r1 + r2;
  const ei = i1 - i2;
  const or = i1 + i2;
  const oi = r2 - r1;
  const wr = f.splitCos[k]!;
  const wi = f.splitSin[k]!;
  const re = 0.5 * er + or * wr - oi * wi;
  const im = 0.5 * ei + or * wi + oi * wr;
  power[k] = re * re + im * im + TINY;
}

/** The power spectrum, bins 0..n/2, from the half-length transform in f.zr / f.zi into `power`. */
function splitPower(f: RealFft, power: Float64Array): void {
  const { half, zr, zi } = f;
  const dc = zr[0]! + zi[0]!;
  const nyquist = zr[0]! - zi[0]!;
  power[0] = dc * dc + TINY;
  power[half] = nyquist * nyquist + TINY;
  for (let k = 1; k < half; k++) splitBin(f, power, k, zr[k]!, zi[k]!, zr[half - k]!, zi[half - k]!);
}

/**
 * The real part of the spectrum, bins 0..n/2, of the real `x` (length n) into `out`: for an even `x` (a
 * power spectrum laid out around the circle) that is its inverse transform, n times over.
 */
export function realPart(f: RealFft, x: Float64Array, out: Float64Array): void {
  halfTransform(f, x);
  const { half, zr, zi, splitCos, splitSin } = f;
  out[0] = zr[0]! + zi[0]!;
  out[half] = zr[0]! - zi[0]!;
  for (let k = 1; k < half; k++) {
    const k2 = half - k;
    out[k] = 0.5 * (zr[k]! + zr[k2]!) + (zi[k]! + zi[k2]!) * splitCos[k]! - (zr[k2]! - zr[k]!) * splitSin[k]!;
  }
}
