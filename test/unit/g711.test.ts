import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runFfmpeg } from '../../activities/media/ffmpeg.ts';
import { decodeMulaw, decodeMulawInto, encodeMulaw } from '../../schemas/g711.ts';
import { makeTempDir } from '../helpers/media-fixtures.ts';

const tmp = makeTempDir();
afterAll(() => tmp.cleanup());

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

  it("encodes every 16-bit sample to the code ffmpeg's pcm_mulaw encoder gives", async () => {
    const ramp = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
    const [raw, coded] = [join(tmp.dir, 'ramp.s16'), join(tmp.dir, 'ramp.mulaw')];
    await writeFile(raw, Buffer.from(ramp.buffer));
    await runFfmpeg([
      ...['-v', 'error', '-f', 's16le', '-ar', '8000', '-ac', '1', '-i', raw],
      ...['-c:a', 'pcm_mulaw', '-f', 'mulaw', '-y', coded],
    ]);
    const byFfmpeg = await readFile(coded);
    expect(byFfmpeg.length).toBe(65536);
    expect(Array.from(ramp, encodeMulaw)).toEqual(Array.from(byFfmpeg));
  });

  it('decodes an encoded sample to within half a step of it', () => {
    for (const sample of [-32768, -8000, -100, -1, 0, 1, 100, 8000, 32767]) {
      const back = decodeMulaw(Uint8Array.of(encodeMulaw(sample)))[0]! * 32768;
      // Mu-law's step grows with the level: 2 near zero, 1,024 at the top.
      expect(Math.abs(back - sample)).toBeLessThanOrEqual(Math.max(8, Math.abs(sample) / 16));
    }
  });
});
