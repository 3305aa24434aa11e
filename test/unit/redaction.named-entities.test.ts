/**
 * Named entities: the call in windows of whole turns, entity positions mapped back to utterances, and
 * which classes are personal (golden shape: begin_pos, end_pos one past the end, form, std_form, class,
 * extended_class, source).
 */
import { describe, expect, it } from 'vitest';
import {
  entityKind,
  entitySpans,
  locateEntity,
  neWindows,
} from '../../activities/nlp/redaction/named-entities.ts';
import type { DetectionUtterance } from '../../activities/nlp/redaction/call-streams.ts';
import type { NamedEntityResult } from '../../schemas/service-nlp.ts';

function utterances(...lines: [string, string][]): DetectionUtterance[] {
  return lines.map(([speaker, text], index) => ({
    index,
    speaker,
    start: index * 3,
    end: index * 3 + 2,
    text,
  }));
}

function entity(form: string, begin: number, cls: string, extended = ''): NamedEntityResult[number] {
  return {
    begin_pos: begin,
    end_pos: begin + form.length,
    form,
    std_form: form,
    class: cls,
    extended_class: extended,
    source: 'basic',
  };
}

describe('neWindows', () => {
  it('packs whole turns, one utterance a line, and maps each utterance to its place', () => {
    const u = utterances(
      ['agent', 'お名前をお願いします。'],
      ['customer', '山田です。'],
      ['customer', '  '],
      ['customer', '太郎です。'],
      ['agent', 'ありがとうございます。'],
    );
    const windows = neWindows(u, 1500);
    expect(windows).toHaveLength(1);
    expect(windows[0]!.text).toBe('お名前をお願いします。\n山田です。\n太郎です。\nありがとうございます。');
    expect(windows[0]!.pieces.map((p) => [p.position, p.offset])).toEqual([
      [0, 0],
      [1, 12],
      [3, 18],
      [4, 24],
    ]);
  });

  it('starts a new window before a turn that does not fit, and splits a turn longer than a window', () => {
    const long = 'あ'.repeat(30);
    const u = utterances(['agent', long], ['customer', long], ['customer', long], ['customer', long]);
    const windows = neWindows(u, 70);
    expect(windows.map((w) => w.pieces.map((p) => p.position))).toEqual([[0], [1, 2], [3]]);
    for (const w of windows) expect(w.text.length).toBeLessThanOrEqual(70);
  });
});

describe('entityKind', () => {
  it.each([
    [entity('山田太郎', 0, 'PSN', 'Person'), 'name'],
    [entity('山田', 0, 'PSN'), 'name'],
    [entity('渋谷区', 0, 'LOC', 'City'), 'address'],
    [entity('代々木公園', 0, 'LOC'), 'address'],
    [entity('東京都渋谷区神南1-2-3', 0, 'LOC', 'Address'), 'address'],
    [entity('09012345678', 0, 'NUM', 'Phone_Number'), 'phone'],
    [entity('A1234567', 0, 'ART', 'ID_Number'), 'idNumber'],
    [entity('35歳', 0, 'NUM', 'Age'), 'age'],
    [entity('4月10日', 0, 'DAT', 'Date'), 'date'],
    [entity('日本', 0, 'LOC', 'Country'), undefined],
    [entity('関東', 0, 'LOC', 'Domestic_Region'), undefined],
    [entity('カスタマーセンター', 0, 'ORG', 'Organization'), undefined],
    [entity('三千円', 0, 'MNY', 'Money'), undefined],
    [entity('午後三時', 0, 'TIM', 'Time'), undefined],
    [entity('好きだ', 0, 'ART', 'Movie'), undefined],
  ])('%o → %s', (e, kind) => {
    expect(entityKind(e)).toBe(kind);
  });
});

describe('locateEntity', () => {
  it('reads positions as UTF-16 units, then as code points, then finds the nearest form', () => {
    const text = '𠮷田です。山田です。山田さん';
    expect(locateEntity(text, entity('山田', 6, 'PSN'))).toEqual({ begin: 6, end: 8 });
    // Code points: 𠮷 is one character there, two UTF-16 units here.
    expect(locateEntity(text, { ...entity('山田', 5, 'PSN') })).toEqual({ begin: 6, end: 8 });
    expect(locateEntity(text, { ...entity('山田', 12, 'PSN'), end_pos: 14 })).toEqual({ begin: 11, end: 13 });
    // A form found nowhere: the given positions, clipped.
    expect(locateEntity('山田です', { ...entity('鈴木', 0, 'PSN'), end_pos: 99 })).toEqual({
      begin: 0,
      end: 4,
    });
  });
});

describe('entitySpans', () => {
  it('maps entities to utterances, cut at line ends; dates only where a birth date was asked for', () => {
    const u = utterances(
      ['agent', '生年月日をお願いします。'],
      ['customer', '四月十日です。'],
      ['agent', 'お届けは四月十日です。'],
    );
    const [window] = neWindows(u, 1500);
    const text = window!.text;
    const at = (form: string, from = 0) => text.indexOf(form, from);
    const spans = entitySpans(u, window!, [
      entity('四月十日', at('四月十日'), 'DAT', 'Date'),
      entity('四月十日', at('四月十日', at('四月十日') + 1), 'DAT', 'Date'),
      // An entity across a line break (a bad window) is cut at it.
      { ...entity('す。\n四', at('す。\n四'), 'PSN') },
    ]);
    expect(spans).toEqual([
      { utterance: 1, begin: 0, end: 4, kind: 'birthDate', source: 'ne' },
      { utterance: 0, begin: 10, end: 12, kind: 'name', source: 'ne' },
      { utterance: 1, begin: 0, end: 1, kind: 'name', source: 'ne' },
    ]);
  });
});
