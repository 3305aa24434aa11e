import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../service/errors.ts';
import {
  buildStartMessage,
  startParamProblems,
  temporaryWordProblem,
  type StartParams,
} from '../../service/start-message.ts';

const base: StartParams = { model: 'ja-gen_tf-08', domainId: 'abcd1234', codec: 'mulaw', sampleRate: 8000 };

function problems(over: Partial<StartParams>): string[] {
  return startParamProblems({ ...base, ...over });
}

describe('buildStartMessage', () => {
  it('writes flat dotted keys inside param (spec 02)', () => {
    const msg = buildStartMessage({
      ...base,
      options: { punctuation: true, maxResults: 3, enableProgress: false },
      words: [{ surface: '東京', reading: 'トウキョウ', prob: 50 }],
    });
    expect(msg).toEqual({
      msg: { msgname: 'start' },
      param: {
        'baseParam.samplingRate': 8000,
        'recognizeParameter.domainId': 'abcd1234',
        'baseParam.audioCodec': 'mulaw',
        'baseParam.punctuation': true,
        'recognizeParameter.enableProgress': false,
        'recognizeParameter.maxResults': 3,
      },
      words: [{ surface: '東京', reading: 'トウキョウ', prob: 50 }],
    });
    expect(JSON.stringify(msg)).toContain('"baseParam.samplingRate":8000');
  });
  it('leaves unset options out and omits an empty dictionary', () => {
    const msg = buildStartMessage({ ...base, words: [] });
    expect(Object.keys(msg.param)).toEqual([
      'baseParam.samplingRate',
      'recognizeParameter.domainId',
      'baseParam.audioCodec',
    ]);
    expect(msg).not.toHaveProperty('words');
  });
  it('throws an invalid ServiceError listing every problem', () => {
    try {
      buildStartMessage({ ...base, domainId: 'short', sampleRate: 16000 });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ServiceError);
      expect((err as ServiceError).kind).toBe('invalid');
      expect((err as ServiceError).detail).toContain('domainId');
      expect((err as ServiceError).detail).toContain('8000 for mulaw');
    }
  });
  it('accepts 16 kHz PCM for a 16 kHz model', () => {
    expect(problems({ model: 'ja-gen_tf-16', codec: 'pcm', sampleRate: 16000 })).toEqual([]);
  });
});

describe('start parameter rules (spec 02, Start parameters)', () => {
  it('model must be a known model id', () => {
    expect(problems({ model: 'ja-unknown-08' })[0]).toMatch(/^model/);
  });
  it('domain id is 8 alphanumerics', () => {
    expect(problems({ domainId: 'abc-1234' })[0]).toMatch(/^domainId/);
    expect(problems({ domainId: 'abcd12345' })[0]).toMatch(/^domainId/);
    expect(problems({ domainId: 'ABCD1234' })).toEqual([]);
  });
  it('mulaw needs 8000 Hz', () => {
    expect(problems({ sampleRate: 16000 })).toContain('sampleRate: must be 8000 for mulaw');
  });
  it('mulaw needs an 8 kHz model', () => {
    expect(problems({ model: 'ja-gen_tf-16' })[0]).toMatch(/mulaw needs an 8 kHz model/);
  });
  it('pcm rate not lower than the model rate', () => {
    expect(problems({ model: 'ja-gen_sf-16', codec: 'pcm', sampleRate: 8000 })[0]).toMatch(
      /at least the model rate 16000/,
    );
  });
  it('pcm rate among the guaranteed rates', () => {
    expect(problems({ codec: 'pcm', sampleRate: 12000 })[0]).toMatch(/not one of/);
    expect(problems({ codec: 'pcm', sampleRate: 44100 })).toEqual([]);
  });
  it('codec is pcm or mulaw', () => {
    expect(problems({ codec: 'opus' as never })[0]).toMatch(/^codec/);
  });
  it('maxResults is an integer from 1 to 30', () => {
    expect(problems({ options: { maxResults: 0 } })[0]).toMatch(/maxResults/);
    expect(problems({ options: { maxResults: 31 } })[0]).toMatch(/maxResults/);
    expect(problems({ options: { maxResults: 1.5 } })[0]).toMatch(/maxResults/);
    expect(problems({ options: { maxResults: 30 } })).toEqual([]);
  });
  it('enableContinuous can only be true', () => {
    expect(problems({ options: { enableContinuous: false } })[0]).toMatch(/enableContinuous/);
    expect(problems({ options: { enableContinuous: true } })).toEqual([]);
  });
  it('filler, punctuation and reading only for the models that support them', () => {
    const en = { model: 'en_en-gen_sf-16', codec: 'pcm' as const, sampleRate: 16000 };
    expect(problems({ ...en, options: { filler: true } })[0]).toMatch(/filler/);
    expect(problems({ ...en, options: { reading: true } })[0]).toMatch(/reading/);
    expect(
      problems({ model: 'ja-gen_sf-16', codec: 'pcm', sampleRate: 16000, options: { punctuation: true } })[0],
    ).toMatch(/punctuation/);
    expect(
      problems({
        model: 'ja-gen_sf-16',
        codec: 'pcm',
        sampleRate: 16000,
        options: { filler: true, reading: true },
      }),
    ).toEqual([]);
    expect(problems({ ...en, options: { filler: false, punctuation: false } })).toEqual([]);
  });
  it('at most 1000 temporary dictionary entries', () => {
    const words = Array.from({ length: 1001 }, () => ({ surface: '語', reading: 'ゴ' }));
    expect(problems({ words })[0]).toMatch(/1001 entries/);
    expect(problems({ words: words.slice(0, 1000) })).toEqual([]);
  });
});

describe('temporary dictionary entry rules', () => {
  it.each([
    [{ surface: '', reading: 'ア' }, /surface: must not be empty/],
    [{ surface: 'a|b', reading: 'ア' }, /must not contain/],
    [{ surface: 'a/b', reading: 'ア' }, /must not contain/],
    [{ surface: 'a:b', reading: 'ア' }, /must not contain/],
    [{ surface: 'a;b', reading: 'ア' }, /must not contain/],
    [{ surface: '[a]', reading: 'ア' }, /must not contain/],
    [{ surface: 'a\tb', reading: 'ア' }, /must not contain/],
    [{ surface: 'a"b', reading: 'ア' }, /must not contain/],
    [{ surface: 'a', reading: '' }, /reading: must not be empty/],
    [{ surface: 'a', reading: 'あいう' }, /full-width katakana/],
    [{ surface: 'a', reading: 'ｱｲｳ' }, /full-width katakana/],
    [{ surface: 'a', reading: 'ア', prob: 0 }, /prob/],
    [{ surface: 'a', reading: 'ア', prob: 101 }, /prob/],
    [{ surface: 'a', reading: 'ア', prob: 30.5 }, /prob/],
    [{ surface: '長'.repeat(60), reading: 'ア'.repeat(24) }, /252 bytes, at most 251/],
  ])('%j is rejected', (word, reason) => {
    expect(temporaryWordProblem(word, 0)).toMatch(reason);
  });
  it('accepts a valid entry, with the prolonged sound mark, at exactly 251 bytes', () => {
    expect(temporaryWordProblem({ surface: 'コーヒー', reading: 'コーヒー', prob: 100 }, 0)).toBeUndefined();
    expect(temporaryWordProblem({ surface: 'a'.repeat(248), reading: 'ア' }, 0)).toBeUndefined();
  });
});
