import { describe, expect, it } from 'vitest';
import { bridgePauses, voicedReference, voicedStretches } from '../../bench/lib/voiced-reference.ts';

const RATE = 16000;

/** A line of `parts`: [seconds, voiced]; voiced parts a vowel-like tone, pauses a faint hiss about 60 dB down. */
function line(parts: [number, boolean][]): Float32Array {
  const total = parts.reduce((n, [s]) => n + Math.round(s * RATE), 0);
  const out = new Float32Array(total);
  let at = 0;
  let noise = 1;
  for (const [seconds, voiced] of parts) {
    const n = Math.round(seconds * RATE);
    for (let i = 0; i < n; i++) {
      noise = (noise * 16807) % 2147483647;
      const hiss = (noise / 2147483647 - 0.5) * 0.0006;
      const t = (at + i) / RATE;
      out[at + i] = voiced
        ? 0.3 * Math.sin(2 * Math.PI * 180 * t) + 0.1 * Math.sin(2 * Math.PI * 900 * t)
        : hiss;
    }
    at += n;
  }
  return out;
}

describe('voicedStretches', () => {
  it('finds the voiced parts of a clean line to the frame', () => {
    const found = voicedStretches(
      line([
        [0.8, true],
        [0.5, false],
        [1, true],
      ]),
      RATE,
    );
    expect(found).toHaveLength(2);
    expect(found[0]!.start).toBeCloseTo(0, 2);
    expect(found[0]!.end).toBeCloseTo(0.8, 2);
    expect(found[1]!.start).toBeCloseTo(1.3, 2);
    expect(found[1]!.end).toBeCloseTo(2.3, 2);
  });

  it('finds nothing in a silent line', () => {
    expect(voicedStretches(new Float32Array(RATE), RATE)).toEqual([]);
  });
});

describe('voicedReference', () => {
  it('leaves a 0.5-s pause inside a line out of the reference and keeps a 0.2-s one as speech', () => {
    const audio = line([
      [1, true],
      [0.5, false],
      [0.7, true],
      [0.2, false],
      [0.6, true],
    ]);
    const reference = voicedReference([{ speaker: 0, start: 10, speech: voicedStretches(audio, RATE) }]);
    expect(reference).toHaveLength(2);
    expect(reference[0]).toMatchObject({ speaker: 0 });
    expect(reference[0]!.start).toBeCloseTo(10, 2);
    expect(reference[0]!.end).toBeCloseTo(11, 2);
    // The 0.2-s pause stays inside the second stretch.
    expect(reference[1]!.start).toBeCloseTo(11.5, 2);
    expect(reference[1]!.end).toBeCloseTo(13, 2);
    const speech = reference.reduce((n, r) => n + r.end - r.start, 0);
    expect(speech).toBeCloseTo(2.5, 1);
  });

  it("closes one speaker's short gaps between lines, never another speaker's, and orders by start", () => {
    const reference = voicedReference([
      { speaker: 1, start: 0, speech: [{ start: 0, end: 1 }] },
      { speaker: 1, start: 1.2, speech: [{ start: 0, end: 1 }] },
      { speaker: 0, start: 2.25, speech: [{ start: 0, end: 1 }] },
      { speaker: 1, start: 2.6, speech: [{ start: 0, end: 0.5 }] },
    ]);
    expect(reference).toEqual([
      { speaker: 1, start: 0, end: 2.2 },
      { speaker: 0, start: 2.25, end: 3.25 },
      { speaker: 1, start: 2.6, end: 3.1 },
    ]);
  });
});

describe('bridgePauses', () => {
  it('closes gaps shorter than 0.3 s, keeps a gap of 0.3 s', () => {
    expect(
      bridgePauses([
        { start: 2, end: 3 },
        { start: 0, end: 1 },
        { start: 1.29, end: 1.5 },
        { start: 1.8, end: 1.9 },
      ]),
    ).toEqual([
      { start: 0, end: 1.5 },
      { start: 1.8, end: 3 },
    ]);
  });
});
