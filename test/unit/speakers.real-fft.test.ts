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
  // 256 and 64 points leave an odd last stage for the split step to do (the voice features' two sizes);
  // 128 and 512 do not.
  for (const n of [64, 128, 256, 512]) {
    it(`gives the power spectrum and the real part of ${n} points as a direct DFT does`, () => {
      const f = makeRealFft(n);
      const x = noise(n, n);
      const power = new Float64Array(n / 2 + 1);
      powerSpectrum(f, x, power);
      const real = new Float64Array(n / 2 + 1);
      realPart(f, x, real);
      for (let k = 0; k <= n / 2; k++) {
        const { re, im } = dft(x, k);
        expect(power[k]).toBeCloseTo(re * re + im * im, 6);
        expect(real[k]).toBeCloseTo(re, 9);
      }
    });
  }

  it('reads a frame windowed, less its mean, straight from the samples as the windowed copy gives', () => {
    const n = 256;
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
  });
});
