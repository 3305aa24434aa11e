import { describe, expect, it } from 'vitest';
import { Segmenter } from '../../emulator/segments.ts';
import { phraseToneSeconds, synthesize } from '../helpers/dtmf-audio.ts';

function run(samples: Float32Array, rate: number, chunk: number) {
  const seg = new Segmenter(rate);
  const events = [];
  for (let i = 0; i < samples.length; i += chunk) events.push(...seg.push(samples.subarray(i, i + chunk)));
  events.push(...seg.flush());
  return events;
}

describe('Segmenter', () => {
  it('one segment per phrase, edges within 2 ms, whatever the chunk size', () => {
    const phrases = [
      { id: 7, start: 0.3 },
      { id: 160, start: 1.4 },
    ];
    const audio = synthesize({ rate: 8000, phrases, noiseDbfs: -60 });
    for (const chunk of [1920, 777, 80, 1]) {
      const ends = run(audio, 8000, chunk).filter((e) => e.kind === 'end');
      expect(ends).toHaveLength(2);
      ends.forEach((e, i) => {
        expect(Math.abs(e.start - phrases[i]!.start)).toBeLessThan(0.002);
        expect(Math.abs(e.end - (phrases[i]!.start + phraseToneSeconds(phrases[i]!.id)))).toBeLessThan(0.002);
        expect(e.symbols.map((s) => s.symbol).join('')).toBe(`*${phrases[i]!.id}#`);
      });
    }
  });

  it('speech end is known a hangover (0.2 s) after the last tone; start when the first tone is heard', () => {
    const audio = synthesize({ rate: 8000, phrases: [{ id: 3, start: 0.5 }], duration: 2 });
    const events = run(audio, 8000, 1920);
    const start = events.find((e) => e.kind === 'start')!;
    const end = events.find((e) => e.kind === 'end')!;
    expect(start.knownAt).toBeGreaterThanOrEqual(0.5);
    expect(start.knownAt).toBeLessThan(0.52);
    expect(end.knownAt - end.end).toBeGreaterThanOrEqual(0.19);
    expect(end.knownAt - end.end).toBeLessThan(0.22);
  });

  it('silence and low noise make no segment; an open segment is closed by flush', () => {
    expect(run(synthesize({ rate: 8000, phrases: [], duration: 3, noiseDbfs: -60 }), 8000, 1920)).toEqual([]);
    const cut = synthesize({ rate: 8000, phrases: [{ id: 1, start: 0.2 }], duration: 0.45 });
    const events = run(cut, 8000, 1920);
    expect(events.filter((e) => e.kind === 'end')).toHaveLength(1);
  });
});
