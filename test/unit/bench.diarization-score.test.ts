import { describe, expect, it } from 'vitest';
import {
  derOf,
  diarizationError,
  dtmfPhraseSpan,
  onsetOffsets,
  speakerHolding,
  totalDer,
  truthLabelledError,
} from '../../bench/lib/diarization-score.ts';

describe('dtmfPhraseSpan', () => {
  it('ends with the last tone, one 40-ms gap before the slot', () => {
    // `*12#`: four symbols of 80 ms tone + 40 ms gap = 0.48 s of slot, 0.44 s of tones.
    const span = dtmfPhraseSpan(1, 12);
    expect(span.start).toBe(1);
    expect(span.end).toBeCloseTo(1.44, 9);
    // `*101#`: five symbols.
    expect(dtmfPhraseSpan(0, 101).end).toBeCloseTo(0.56, 9);
  });

  it('scores a segment ending with the last tone as no missed speech, where the slot counted its gap missed', () => {
    const hyp = [{ start: 1, end: 1.44, who: 0 }];
    const tones = diarizationError([{ ...dtmfPhraseSpan(1, 12), who: 0 }], hyp, 0);
    const slot = diarizationError([{ start: 1, end: 1.48, who: 0 }], hyp, 0);
    expect(tones.missed).toBeCloseTo(0, 9);
    expect(derOf(tones)).toBeCloseTo(0, 9);
    expect(slot.missed).toBeCloseTo(0.04, 9);
    expect(derOf(slot)).toBeCloseTo(0.04 / 0.48, 2);
  });
});

describe('speakerHolding', () => {
  const reference = [
    { start: 0, end: 2, who: 0 },
    { start: 1.5, end: 4, who: 1 },
  ];
  it('names the speaker holding most of the span', () => {
    expect(speakerHolding({ start: 0, end: 1.8 }, reference, 2)).toBe(0);
    expect(speakerHolding({ start: 1.6, end: 3 }, reference, 2)).toBe(1);
  });
  it('falls back to speaker 0 when nobody speaks there', () => {
    expect(speakerHolding({ start: 5, end: 6 }, reference, 3)).toBe(0);
  });
});

describe('truthLabelledError', () => {
  it('leaves only what the spans miss or add, no confusion, whoever the labels were', () => {
    const reference = [
      { start: 0, end: 4, who: 0 },
      { start: 5, end: 9, who: 1 },
    ];
    // The recognizer cut the first segment at a 1-s pause and opened the second 0.5 s late.
    const spans = [
      { start: 0, end: 1.5 },
      { start: 2.5, end: 4 },
      { start: 5.5, end: 9 },
    ];
    const parts = truthLabelledError(reference, spans, 2, 0);
    expect(parts.confusion).toBeCloseTo(0, 9);
    expect(parts.falseAlarm).toBeCloseTo(0, 9);
    expect(parts.missed).toBeCloseTo(1.5, 9);
    expect(parts.scored).toBeCloseTo(8, 9);
    // The same spans labelled all one voice: it maps to the second speaker (3.5 s), the first's 3 s confused.
    const oneVoice = diarizationError(
      reference,
      spans.map((s) => ({ ...s, who: 0 })),
      0,
    );
    expect(oneVoice.confusion).toBeCloseTo(3, 9);
  });
});

describe('onsetOffsets', () => {
  it('measures where spans open against segments opening in the clear, and skips crowded ones', () => {
    const reference = [
      { start: 1, end: 3 },
      // Opens 0.1 s after the first ends: not in the clear.
      { start: 3.1, end: 4 },
      { start: 6, end: 8 },
      // Nothing opens in it.
      { start: 10, end: 11 },
    ];
    const spans = [
      { start: 1, end: 2.5 },
      { start: 6.62, end: 8 },
    ];
    const offsets = onsetOffsets(reference, spans);
    expect(offsets).toHaveLength(2);
    expect(offsets[0]).toBeCloseTo(0, 9);
    expect(offsets[1]).toBeCloseTo(0.62, 9);
  });
});

describe('totalDer', () => {
  it('adds calls up by their seconds, so a long call weighs more than a short one', () => {
    const long = { scored: 90, missed: 9, falseAlarm: 0, confusion: 0 };
    const short = { scored: 10, missed: 0, falseAlarm: 1, confusion: 4 };
    expect(totalDer([long, short])).toEqual({ scored: 100, missed: 9, falseAlarm: 1, confusion: 4 });
    expect(derOf(totalDer([long, short]))).toBeCloseTo(0.14, 9);
    expect(totalDer([])).toEqual({ scored: 0, missed: 0, falseAlarm: 0, confusion: 0 });
  });
});
