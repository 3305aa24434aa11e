import { describe, expect, it } from 'vitest';
import { decodeMulaw, decodeMulawInto } from '../../schemas/g711.ts';

describe('G.711 mu-law', () => {
  it('decodes silence, both extremes and their signs', () => {
    // 0xff and 0x7f are the two zeros; 0x80 and 0x00 the loudest of each sign.
    expect(Array.from(decodeMulaw(Uint8Array.from([0xff, 0x7f, 0x80, 0x00])), (x) => x + 0)).toEqual([
      0,
      0,
      32124 / 32768,
      -32124 / 32768,
    ]);
  });

  it('decodes a range of the bytes into a range of the output, touching nothing else', () => {
    const bytes = Uint8Array.from({ length: 64 }, (_, i) => (i * 37) & 0xff);
    const whole = decodeMulaw(bytes);
    const out = new Float32Array(40).fill(7);
    decodeMulawInto(bytes, 10, 30, out, 5);
    expect(Array.from(out.subarray(0, 5))).toEqual([7, 7, 7, 7, 7]);
    expect(Array.from(out.subarray(5, 25))).toEqual(Array.from(whole.subarray(10, 30)));
    expect(Array.from(out.subarray(25))).toEqual(Array(15).fill(7));
  });
});
