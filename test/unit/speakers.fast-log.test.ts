import { describe, expect, it } from 'vitest';
import { fastLog } from '../../activities/speakers/fast-log.ts';
import { seededRandom } from '../../schemas/seeded-random.ts';

describe('fastLog', () => {
  it('is within 3e-6 of Math.log over the mel energies range and beyond', () => {
    const random = seededRandom(36);
    let worst = 0;
    for (let i = 0; i < 200_000; i++) {
      // 1e-12 … 1e12: the mel energies' floor (1e-10) to far above any frame's energy.
      const x = Math.exp((random() - 0.5) * 2 * 12 * Math.LN10);
      worst = Math.max(worst, Math.abs(fastLog(x) - Math.log(x)));
    }
    expect(worst).toBeLessThan(3e-6);
    expect(worst).toBeGreaterThan(0);
  });

  it('is exact at powers of two and keeps the mantissa steps apart', () => {
    for (const e of [-40, -1, 0, 1, 33]) expect(fastLog(2 ** e)).toBeCloseTo(e * Math.LN2, 12);
    expect(Math.abs(fastLog(1e-10) - Math.log(1e-10))).toBeLessThan(3e-6);
    expect(Math.abs(fastLog(1.999999) - Math.log(1.999999))).toBeLessThan(3e-6);
    expect(Math.abs(fastLog(1.5) - Math.log(1.5))).toBeLessThan(3e-6);
  });
});
