import { describe, expect, it } from 'vitest';
import {
  dictionaryLines,
  DictionaryFileError,
  parseDictionary,
  temporaryWords,
} from '../../service/dictionary.ts';
import { parseDictionaryLines, parseStatusPart } from '../../service/user-dictionary.ts';
import { buildMultipart, parseMultipart } from '../../schemas/multipart.ts';
import { resolveVocabulary } from '../../emulator/vocabulary.ts';

const parse = (text: string, maxEntries?: number) =>
  parseDictionary(text, { name: 'words.tsv', ...(maxEntries ? { maxEntries } : {}) });

describe('dictionary files (spec 02 dictionary lines)', () => {
  it('reads notation, reading and an optional weight per line; comments, blank lines, a BOM and CRLF are fine', () => {
    const entries = parse(
      '\uFEFF# products\r\nギガ光プラス\tギガヒカリプラス\t70\r\n\r\nスマホ安心パック\tスマホアンシンパック\n',
    );
    expect(entries).toEqual([
      { surface: 'ギガ光プラス', reading: 'ギガヒカリプラス', prob: 70, line: 2 },
      { surface: 'スマホ安心パック', reading: 'スマホアンシンパック', line: 4 },
    ]);
    expect(temporaryWords(entries)[0]).toEqual({
      surface: 'ギガ光プラス',
      reading: 'ギガヒカリプラス',
      prob: 70,
    });
    expect(dictionaryLines(entries)).toBe(
      'ギガ光プラス\tギガヒカリプラス\t70\nスマホ安心パック\tスマホアンシンパック\n',
    );
  });

  it('refuses a bad entry with its line and the spec’s reason', () => {
    const cases: [string, RegExp][] = [
      [
        'a/b\tエービー',
        /line 1: Surface illegal \(surface: must not contain \| \/ : ; \[ \] tab or double quote\)/,
      ],
      ['光\tひかり', /line 1: Reading illegal \(reading: must be full-width katakana\)/],
      ['光\tヒカリ\t0', /line 1: Prob illegal \(prob: must be an integer from 1 to 100\)/],
      ['光\tヒカリ\t3.5', /Prob illegal/],
      [
        `${'あ'.repeat(80)}\t${'ア'.repeat(4)}`,
        /line 1: Surface too long \(surface plus reading is 252 bytes, at most 251\)/,
      ],
      ['\tヒカリ', /line 1: Surface empty/],
      ['光\t', /line 1: Reading empty/],
      ['光', /line 1: Invalid Parameter -> List is null/],
      ['# nothing\n', /no entries/],
    ];
    for (const [text, reason] of cases) {
      expect(() => parse(text), text).toThrow(DictionaryFileError);
      expect(() => parse(text), text).toThrow(reason);
    }
    // Every bad line is named (up to five), after the file's name.
    expect(() => parse('ok\tオーケー\nx/y\tエックス\nz\tぜっと\n')).toThrow(
      /^words\.tsv: line 2: Surface illegal .*; line 3: Reading illegal/,
    );
  });

  it('refuses more entries than a temporary dictionary (1,000) or an upload (5,000) takes', () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `w${i}\tダブリュー`).join('\n');
    expect(parse(lines(1000))).toHaveLength(1000);
    expect(() => parse(lines(1001))).toThrow(/Cascade words exceeded 1000 \(1001 entries\)/);
    expect(parse(lines(1001), 5000)).toHaveLength(1001);
    expect(() => parse(lines(5001), 5000)).toThrow(/List Exceed 5000 lines/);
  });
});

describe('user dictionary answers', () => {
  it('reads the status part as three lines or as key: value lines, and echoed entries', () => {
    expect(parseStatusPart('200\nOK\nsuccess\n')).toEqual({ code: 200, message: 'OK', detail: 'success' });
    expect(parseStatusPart('detail: Prob illegal\ncode: 410\nmessage: Invalid Parameter')).toEqual({
      code: 410,
      message: 'Invalid Parameter',
      detail: 'Prob illegal',
    });
    expect(parseDictionaryLines('光\tヒカリ\tM\t30\n安心\tアンシン\t80\n')).toEqual([
      { surface: '光', reading: 'ヒカリ', prob: 30 },
      { surface: '安心', reading: 'アンシン', prob: 80 },
    ]);
  });

  it('multipart bodies read back part by part', () => {
    const { body, contentType } = buildMultipart([
      { name: 'status', contentType: 'text/plain', data: '200\nOK\nsuccess' },
      { name: 'cascadeword', contentType: 'text/plain; charset=UTF-8', data: '光\tヒカリ\n' },
    ]);
    const boundary = /boundary=(.+)$/.exec(contentType)![1]!;
    const parts = parseMultipart(body, boundary)!;
    expect(parts.map((p) => [p.name, p.data.toString('utf8')])).toEqual([
      ['status', '200\nOK\nsuccess'],
      ['cascadeword', '光\tヒカリ\n'],
    ]);
  });
});

describe('the emulator’s vocabulary', () => {
  const line = '《ギガ光プラス|ギガヒカリプラス》へのお切り替えですね。';
  it('prints a dictionary-only word as heard, or with the surface of the entry that has its reading', () => {
    expect(resolveVocabulary(line, [])).toBe('ギガヒカリプラスへのお切り替えですね。');
    expect(resolveVocabulary(line, [{ surface: 'GIGA光+', reading: 'ギガヒカリプラス', prob: 30 }])).toBe(
      'GIGA光+へのお切り替えですね。',
    );
    // The higher weight wins; on a tie, the first (temporary words come first).
    const entries = [
      { surface: 'A', reading: 'ギガヒカリプラス', prob: 30 },
      { surface: 'B', reading: 'ギガヒカリプラス', prob: 30 },
      { surface: 'C', reading: 'ギガヒカリプラス', prob: 20 },
    ];
    expect(resolveVocabulary(line, entries)).toBe('Aへのお切り替えですね。');
    expect(
      resolveVocabulary(line, [...entries, { surface: 'D', reading: 'ギガヒカリプラス', prob: 90 }]),
    ).toBe('Dへのお切り替えですね。');
    expect(resolveVocabulary('ふつうの文です。', entries)).toBe('ふつうの文です。');
  });
});
