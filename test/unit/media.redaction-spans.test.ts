import { describe, expect, it } from 'vitest';
import {
  clipSpans,
  mapRedactionSpans,
  spansBeyondAudio,
  walkSpans,
  type FrameSpan,
} from '../../activities/media/redaction-spans.ts';
import { REDACTED_AUDIO_END_TOLERANCE_SECONDS, REDACTED_AUDIO_PAD_SECONDS } from '../../schemas/limits.ts';

const RATE = 8000;
const spansOf = (m: ReturnType<typeof mapRedactionSpans>) => {
  if (!m.ok) throw new Error(m.reason);
  return m.spans;
};

describe('mapRedactionSpans', () => {
  it('masks each utterance’s whole recognized range, padded each side, rounded outwards to frames', () => {
    const spans = spansOf(mapRedactionSpans([{ index: 3, start: 10.00005, end: 12.5 }], RATE));
    expect(spans).toEqual([
      {
        from: Math.floor((10.00005 - REDACTED_AUDIO_PAD_SECONDS) * RATE),
        to: Math.ceil((12.5 + REDACTED_AUDIO_PAD_SECONDS) * RATE),
        spokenEnd: 12.5,
      },
    ]);
    // The padded range holds the unpadded one, at any rate.
    const at44 = spansOf(mapRedactionSpans([{ index: 0, start: 1.23456, end: 1.5 }], 44100, 0))[0]!;
    expect(at44.from / 44100).toBeLessThanOrEqual(1.23456);
    expect(at44.to / 44100).toBeGreaterThanOrEqual(1.5);
  });

  it('cuts padding at the start, sorts, and merges ranges that overlap or touch', () => {
    const spans = spansOf(
      mapRedactionSpans(
        [
          { index: 7, start: 20, end: 21 },
          { index: 0, start: 0.02, end: 1 },
          { index: 8, start: 21.1, end: 22 }, // overlaps 7 once padded
          { index: 2, start: 5, end: 6 },
        ],
        RATE,
      ),
    );
    expect(spans.map((s) => [s.from / RATE, s.to / RATE, s.spokenEnd])).toEqual([
      [0, 1.1, 1],
      [4.9, 6.1, 6],
      [19.9, 22.1, 22],
    ]);
  });

  it('refuses an utterance with no time range: nothing is mapped at all', () => {
    for (const [start, end] of [
      [5, 5],
      [6, 5],
      [-1, 2],
      [Number.NaN, 2],
      [1, Number.POSITIVE_INFINITY],
    ]) {
      const m = mapRedactionSpans(
        [
          { index: 1, start: 1, end: 2 },
          { index: 4, start: start!, end: end! },
        ],
        RATE,
      );
      expect(m.ok).toBe(false);
      if (!m.ok) expect(m.reason).toMatch(/^utterance 4 has no time range in the recording/);
    }
  });

  it('no records, no spans', () => {
    expect(mapRedactionSpans([], RATE)).toEqual({ ok: true, spans: [] });
  });
});

describe('spansBeyondAudio and clipSpans', () => {
  const frames = 10 * RATE; // 10 s of audio
  const span = (from: number, to: number, spokenEnd: number): FrameSpan => ({
    from: from * RATE,
    to: to * RATE,
    spokenEnd,
  });

  it('accepts spans inside the audio, and padding or a recognizer’s overhang past its end', () => {
    const spans = [span(1, 2, 1.9), span(9.5, 10.1 + REDACTED_AUDIO_END_TOLERANCE_SECONDS, 10.2)];
    expect(spansBeyondAudio(spans, frames, RATE)).toBeUndefined();
    expect(clipSpans(spans, frames).map((s) => s.to)).toEqual([2 * RATE, frames]);
  });

  it('refuses a span that starts past the end, or speech that ends well past it', () => {
    expect(spansBeyondAudio([span(1, 2, 1.9), span(12, 13, 12.9)], frames, RATE)).toBe(
      'redacted span 2 (12.00 s–12.90 s) lies beyond the audio (10.00 s): the recognized times do not fit this recording',
    );
    expect(spansBeyondAudio([span(9, 11, 10.5)], frames, RATE)).toMatch(
      /^redacted span 1 .* beyond the audio/,
    );
  });
});

describe('walkSpans', () => {
  it('visits every frame once, inside or outside, however the buffers fall', () => {
    const spans: FrameSpan[] = [
      { from: 3, to: 7, spokenEnd: 0 },
      { from: 7, to: 9, spokenEnd: 0 },
      { from: 15, to: 30, spokenEnd: 0 },
    ];
    for (const chunk of [1, 2, 4, 5, 64]) {
      const seen: string[] = [];
      const cursor = { span: 0 };
      for (let position = 0; position < 20; position += chunk) {
        const count = Math.min(chunk, 20 - position);
        walkSpans(spans, cursor, position, count, {
          outside: (first, n) => {
            for (let i = 0; i < n; i++) seen.push(`${position + first + i}:-`);
          },
          inside: (s, first, n, offset) => {
            for (let i = 0; i < n; i++) seen.push(`${position + first + i}:${s}@${offset + i}`);
          },
        });
      }
      expect(seen, `chunks of ${chunk}`).toEqual([
        '0:-',
        '1:-',
        '2:-',
        '3:0@0',
        '4:0@1',
        '5:0@2',
        '6:0@3',
        '7:1@0',
        '8:1@1',
        '9:-',
        '10:-',
        '11:-',
        '12:-',
        '13:-',
        '14:-',
        '15:2@0',
        '16:2@1',
        '17:2@2',
        '18:2@3',
        '19:2@4',
      ]);
    }
  });
});
