import { describe, expect, it } from 'vitest';
import { formatSurface } from '../../emulator/asr-text.ts';
import { findFillers, normalizeLengthening } from '../../emulator/nlp/fillers.ts';
import { removeFillerFrom } from '../../emulator/nlp/remove-filler.ts';
import { splitWords } from '../../emulator/text-words.ts';

describe('filler lexicon', () => {
  it('normalizes lengthened sounds', () => {
    expect(normalizeLengthening('えーーーっと')).toBe('えーっと');
    expect(normalizeLengthening('すごい〜〜')).toBe('すごいー');
    expect(normalizeLengthening('あっっっ')).toBe('あっ');
  });

  it('finds fillers at word starts; ambiguous words only before a pause', () => {
    expect(findFillers('えーっと、あの、まあ、そうですね').map((f) => f.word)).toEqual([
      'えーっと',
      'あの',
      'まあ',
    ]);
    expect(findFillers('あの件について').map((f) => f.word)).toEqual([]);
    expect(findFillers('その日はまあまあでした').map((f) => f.word)).toEqual([]);
    expect(findFillers('昨日から、えー、ずっと').map((f) => f.word)).toEqual(['えー']);
    expect(findFillers('ええと、うーん').map((f) => f.word)).toEqual(['ええと', 'うーん']);
  });

  it('reproduces the recorded remove_filler example', () => {
    expect(removeFillerFrom('えーーっと、あの、何時に待ち合わせですっけ。')).toEqual({
      fillers: [
        { begin_pos: 0, end_pos: 5, form: 'えーっと、' },
        { begin_pos: 5, end_pos: 7, form: 'あの' },
      ],
      normalized_sentence: 'えーっと、あの、何時に待ち合わせですっけ。',
      fixed_sentence: '、何時に待ち合わせですっけ。',
    });
  });
});

describe('recognition surface', () => {
  it('splits words at script changes, keeping okurigana with kanji and ー with katakana', () => {
    expect(splitWords('インターネットがつながらない')).toEqual(['インターネット', 'がつながらない']);
    expect(splitWords('お電話ありがとうございます。')).toEqual(['お', '電話ありがとうございます', '。']);
  });

  it('formats fillers, punctuation and delimiter by the options', () => {
    const t = 'えーっと、お電話ありがとうございます。';
    expect(formatSurface(t, { filler: false, punctuation: false, delimiter: false })).toBe(
      'お電話ありがとうございます',
    );
    expect(formatSurface(t, { filler: true, punctuation: true, delimiter: false })).toBe(
      '[えーっと]、お電話ありがとうございます。',
    );
    expect(formatSurface(t, { filler: true, punctuation: false, delimiter: true })).toBe(
      '[えーっと] お 電話ありがとうございます',
    );
  });
});
