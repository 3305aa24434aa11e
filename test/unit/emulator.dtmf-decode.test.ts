import { describe, expect, it } from 'vitest';
import { decodeSymbol, parsePhrases } from '../../emulator/dtmf-decode.ts';
import { DTMF_FREQUENCIES } from '../../schemas/synthetic-recording.ts';

function tone(symbol: string, rate: number, seconds = 0.06, level = 0.25) {
  const [low, high] = DTMF_FREQUENCIES[symbol]!;
  const out = new Float32Array(Math.round(rate * seconds));
  for (let i = 0; i < out.length; i++)
    out[i] = level * (Math.sin((2 * Math.PI * low * i) / rate) + Math.sin((2 * Math.PI * high * i) / rate));
  return out;
}

describe('decodeSymbol', () => {
  for (const rate of [8000, 16000, 44100, 48000]) {
    it(`decodes all 12 symbols at ${rate} Hz`, () => {
      for (const symbol of Object.keys(DTMF_FREQUENCIES)) {
        const s = tone(symbol, rate);
        expect(decodeSymbol(s, 0, s.length, rate)).toBe(symbol);
      }
    });
  }

  it('refuses noise, a single sine and windows too short to separate the low group', () => {
    const noise = new Float32Array(480).map((_, i) => Math.sin(i * 12.9898) * 0.3);
    expect(decodeSymbol(noise, 0, noise.length, 8000)).toBeUndefined();
    const sine = new Float32Array(480).map((_, i) => 0.3 * Math.sin((2 * Math.PI * 697 * i) / 8000));
    expect(decodeSymbol(sine, 0, sine.length, 8000)).toBeUndefined();
    const short = tone('5', 8000, 0.01);
    expect(decodeSymbol(short, 0, short.length, 8000)).toBeUndefined();
  });
});

describe('parsePhrases', () => {
  const seq = (s: string) => [...s].map((symbol, i) => ({ symbol, start: i * 0.12, end: i * 0.12 + 0.08 }));
  it('finds *id# groups with their times', () => {
    expect(parsePhrases(seq('*12#'))).toEqual([{ id: 12, start: 0, end: 0.44 }]);
    expect(parsePhrases(seq('*1#*105#')).map((p) => p.id)).toEqual([1, 105]);
  });
  it('ignores incomplete or malformed groups', () => {
    expect(parsePhrases(seq('*12'))).toEqual([]);
    expect(parsePhrases(seq('12#'))).toEqual([]);
    expect(parsePhrases(seq('*#'))).toEqual([]);
    expect(parsePhrases(seq('*1*23#')).map((p) => p.id)).toEqual([23]);
  });
});
