import { describe, expect, it } from 'vitest';
import {
  kanjiValue,
  numeralTokens,
  originalSpan,
  textView,
} from '../../activities/nlp/redaction/numerals.ts';
import { digitRuns, digitsOf, followedByUnit } from '../../activities/nlp/redaction/digit-runs.ts';
import {
  isCardNumber,
  isMyNumber,
  isPhoneNumber,
  luhnValid,
  myNumberCheckDigit,
} from '../../activities/nlp/redaction/number-checks.ts';

const digits = (text: string) => numeralTokens(text).map((t) => t.digits);
const runs = (text: string) => digitRuns(text).map((r) => digitsOf(r.groups));

describe('numeralTokens', () => {
  it('reads ASCII and full-width digits, keeping their place', () => {
    expect(numeralTokens('電話は090と０３')).toEqual([
      { begin: 3, end: 6, digits: '090', positional: false },
      { begin: 7, end: 9, digits: '03', positional: false },
    ]);
  });

  it('reads kanji digit by digit, and as a quantity when units are in it', () => {
    expect(digits('〇九〇')).toEqual(['090']);
    expect(digits('零一二')).toEqual(['012']);
    expect(numeralTokens('千九百八十五年')[0]).toMatchObject({ digits: '1985', positional: true, end: 6 });
    expect(kanjiValue('二万三千')).toBe(23000);
    expect(kanjiValue('十')).toBe(10);
    expect(kanjiValue('三十')).toBe(30);
    expect(kanjiValue('二千二十四')).toBe(2024);
  });

  it('reads katakana words that spell digits entirely, lengthened or not, and no other word', () => {
    expect(digits('ゼロキューゼロ')).toEqual(['090']);
    expect(digits('イチニーサンヨン')).toEqual(['1234']);
    expect(digits('ゴーロクナナハチ')).toEqual(['5678']);
    expect(digits('ゼロキューゼロノイチニサンヨン')).toEqual(['090', '1234']);
    expect(digits('ゴルフ')).toEqual([]);
    expect(digits('カスタマーセンター')).toEqual([]);
  });

  it('reads hiragana digits only three or more in a row', () => {
    expect(digits('ぜろきゅうぜろ')).toEqual(['090']);
    expect(digits('しごとです')).toEqual([]);
    expect(digits('にさんにち')).toEqual([]);
  });

  it('a text view writes numbers as digits and maps back to the words', () => {
    const view = textView('生年月日は千九百八十五年四月十日です');
    expect(view.text).toBe('生年月日は1985年4月10日です');
    const at = view.text.indexOf('1985年4月10日');
    expect(originalSpan(view, at, at + '1985年4月10日'.length)).toEqual({ begin: 5, end: 16 });
    expect(
      textView('ｙａｍａｄａ アットマーク ｅｘａｍｐｌｅ ドット ｃｏｍ', { spokenSymbols: true }).text,
    ).toBe('yamada@example.com');
  });
});

describe('digitRuns', () => {
  it('joins groups across hyphens, spaces, の, 、, ハイフン and fillers', () => {
    expect(runs('090-1234-5678')).toEqual(['09012345678']);
    expect(runs('０９０ー１２３４ー５６７８')).toEqual(['09012345678']);
    expect(runs('〇九〇の一二三四の五六七八です')).toEqual(['09012345678']);
    expect(runs('ゼロ九ゼロの、えー、一二三四の五六七八')).toEqual(['09012345678']);
    expect(runs('090 ハイフン 1234 ハイフン 5678')).toEqual(['09012345678']);
    expect(runs('4111 1111 1111 1111')).toEqual(['4111111111111111']);
  });

  it('does not join across words, dates or decimals', () => {
    expect(runs('三時と五分')).toEqual(['3', '5']);
    expect(runs('1985/4/10')).toEqual(['1985', '4', '10']);
    expect(runs('3.5')).toEqual(['3', '5']);
  });

  it('knows a quantity by its unit', () => {
    expect(followedByUnit('三千円です', 2)).toBe(true);
    expect(followedByUnit('1234 ポイント', 4)).toBe(true);
    expect(followedByUnit('1234の', 4)).toBe(false);
  });
});

describe('number checks', () => {
  it('Luhn, card numbers', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(isCardNumber('378282246310005')).toBe(true); // 15 digits (Amex test number)
    expect(isCardNumber('5555555555554444')).toBe(true);
    expect(isCardNumber('0000000000000000')).toBe(false);
    expect(isCardNumber('411111111111')).toBe(false); // 12 digits
  });

  it('My Number check digit', () => {
    expect(myNumberCheckDigit('12345678901')).toBe(8);
    expect(myNumberCheckDigit('31415926535')).toBe(2);
    expect(isMyNumber('123456789018')).toBe(true);
    expect(isMyNumber('123456789017')).toBe(false);
  });

  it('Japanese phone numbers: mobile, landline, toll-free, navigation dial, +81', () => {
    for (const n of [
      '09012345678',
      '08012345678',
      '07012345678',
      '05012345678',
      '0312345678',
      '0661234567',
    ]) {
      expect(isPhoneNumber(n), n).toBe(true);
    }
    expect(isPhoneNumber('0120123456')).toBe(true);
    expect(isPhoneNumber('08001234567')).toBe(true);
    expect(isPhoneNumber('0570123456')).toBe(true);
    expect(isPhoneNumber('819012345678', true)).toBe(true);
    expect(isPhoneNumber('819012345678')).toBe(false);
    expect(isPhoneNumber('9012345678')).toBe(false);
    expect(isPhoneNumber('012345')).toBe(false);
  });
});
