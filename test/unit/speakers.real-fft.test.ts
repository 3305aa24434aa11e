import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../schemas/seeded-random.ts';
import {
  makeRealFft,
  powerSpectrum,
  realPart,
  windowedPowerSpectrum,
} from '../../activities/speakers/real-fft.ts';

/** The DFT of the real `x` at bin k, summed directly. */
function dft(x: Float64Array, k: number): { re: number; im: number } {
  let re = 0;
  let im = 0;
  for (let t = 0; t < x.length; t++) {
    const angle = (-2 * Math.PI * k * t) / x.length;
    re += x[t]! * Math.cos(angle);
    im += x[t]! * Math.sin(angle);
  }
  return { re, im };
}

function noise(n: number, seed: number): Float64Array {
  const random = seededRandom(seed);
  return Float64Array.from({ length: n }, () => 2 * random() - 1);
}

describe('the real FFT of the voice features', () => {
  // 16 points: our own transform (PFFFT needs a multiple of 32), an odd number of stages; 64 and 256 (the
  // voice features' two sizes) odd too, 128 and 512 even. The real part is always our own, in double
  // precision; power spectra from 32 points on are PFFFT's, in single precision.
  for (const n of [16, 64, 128, 256, 512]) {
    it(`gives the power spectrum and the real part of ${n} points as a direct DFT does`, () => {
      const f = makeRealFft(n);
      expect(f.simd === null).toBe(n < 32);
      const x = noise(n, n);
      const power = new Float64Array(n / 2 + 1);
      powerSpectrum(f, x, power);
      const real = new Float64Array(n / 2 + 1);
      realPart(f, x, real);
      const expected = Array.from({ length: n / 2 + 1 }, (_, k) => dft(x, k));
      const strongest = Math.max(...expected.map(({ re, im }) => re * re + im * im));
      // Single precision: a bin good to a few parts in 10⁷ of the strongest bin.
      const tolerance = f.simd ? 1e-6 * strongest : 1e-9;
      expected.forEach(({ re, im }, k) => {
        expect(Math.abs(power[k]! - (re * re + im * im))).toBeLessThan(tolerance);
        expect(real[k]).toBeCloseTo(re, 9);
      });
    });
  }

  it.each([16, 256])(
    'reads a frame of %i points windowed, less its mean, as the windowed copy gives',
    (n) => {
      const f = makeRealFft(n);
      const samples = Float32Array.from(noise(n + 40, 7));
      const window = Float64Array.from(
        { length: n },
        (_, i) => 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (n - 1)),
      );
      const mean = 0.125;
      const copied = Float64Array.from({ length: n }, (_, i) => (samples[i + 40]! - mean) * window[i]!);
      const expected = new Float64Array(n / 2 + 1);
      powerSpectrum(f, copied, expected);
      const read = new Float64Array(n / 2 + 1);
      windowedPowerSpectrum(f, samples, 40, mean, window, read);
      expect(Array.from(read)).toEqual(Array.from(expected));
    },
  );
});
