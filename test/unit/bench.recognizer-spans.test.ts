import { describe, expect, it } from 'vitest';
import { withRecognizerSpans } from '../../bench/lib/recognizer-spans.ts';
import type { CorpusCall } from '../../bench/lib/speaker-corpus.ts';
import { encodeMulaw } from '../../schemas/g711.ts';

const RATE = 8000;

/** A staged track of `parts`: [seconds, amplitude of full scale]; 0 is digital silence. */
function track(parts: [number, number][]): Uint8Array {
  const total = parts.reduce((n, [s]) => n + Math.round(s * RATE), 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const [seconds, amplitude] of parts) {
    const n = Math.round(seconds * RATE);
    for (let i = 0; i < n; i++)
      out[at + i] = encodeMulaw(
        Math.round(32767 * amplitude * Math.sin((2 * Math.PI * 200 * (at + i)) / RATE)),
      );
    at += n;
  }
  return out;
}

function call(reference: CorpusCall['reference']): CorpusCall {
  return {
    id: 'two-0',
    split: 'dev',
    kind: 'two-voice',
    voices: 2,
    path: '/nowhere.wav',
    durationSeconds: 5,
    segments: reference,
    reference,
    spans: reference.map((r) => ({ ...r, seconds: { [r.speaker]: r.end - r.start } })),
    description: 'test',
  };
}

describe('withRecognizerSpans', () => {
  it("cuts the track where the emulator's segmenter does and gives each segment the speaker holding most of it", () => {
    // A line of speaker 0 with a 0.5-s pause inside (two segments), then speaker 1 after a second.
    const staged = track([
      [0.5, 0],
      [1, 0.3],
      [0.5, 0],
      [0.6, 0.3],
      [1, 0],
      [0.8, 0.3],
      [0.6, 0],
    ]);
    const scripted = call([
      { speaker: 0, start: 0.5, end: 2.6 },
      { speaker: 1, start: 3.6, end: 4.4 },
    ]);
    const cut = withRecognizerSpans(scripted, staged);
    expect(cut.spans.map((s) => s.speaker)).toEqual([0, 0, 1]);
    expect(cut.spans[0]!.start).toBeCloseTo(0.5, 1);
    expect(cut.spans[1]!.start).toBeCloseTo(2, 1);
    expect(cut.spans[2]!.start).toBeCloseTo(3.6, 1);
    expect(cut.spans[2]!.seconds[1]).toBeCloseTo(cut.spans[2]!.end - cut.spans[2]!.start, 1);
    // The script and its reference are kept: only the spans change.
    expect(cut.segments).toBe(scripted.segments);
    expect(cut.reference).toBe(scripted.reference);
  });

  it('gives a segment over two speakers to the one holding most of it, with both speakers timed', () => {
    const staged = track([
      [0.5, 0],
      [2, 0.3],
      [0.5, 0],
    ]);
    const cut = withRecognizerSpans(
      call([
        { speaker: 0, start: 0.5, end: 1.9 },
        { speaker: 1, start: 1.7, end: 2.5 },
      ]),
      staged,
    );
    expect(cut.spans).toHaveLength(1);
    expect(cut.spans[0]!.speaker).toBe(0);
    expect(cut.spans[0]!.seconds[0]).toBeCloseTo(1.4, 1);
    expect(cut.spans[0]!.seconds[1]).toBeCloseTo(0.8, 1);
  });
});
