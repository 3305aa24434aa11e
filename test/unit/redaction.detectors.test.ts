/**
 * The local detectors of personal data on tricky forms: spaces, hyphens, full-width, kanji and kana
 * numerals, numbers split over utterances, and what must stay (times, prices, dates that are not birth
 * dates, counts).
 */
import { describe, expect, it } from 'vitest';
import {
  compileRules,
  localSpans,
  redactLocally,
  type DetectionUtterance,
} from '../../activities/nlp/redaction/redact-call.ts';
import { maskPersonalData } from '../../activities/nlp/redaction/free-text.ts';
import type { RedactionRules } from '../../schemas/redaction.ts';

let clock = 0;
/** Utterances in time order, a few seconds apart; `[speaker, text]` pairs. */
function call(...lines: [string, string][]): DetectionUtterance[] {
  clock = 0;
  return lines.map(([speaker, text], index) => {
    const start = clock;
    clock += 3;
    return { index, speaker, start, end: start + 2.5, text };
  });
}

function redact(lines: [string, string][], rules: Partial<RedactionRules> = {}) {
  return redactLocally(call(...lines), compileRules(rules));
}

/** The redacted texts, and `kind:value` of every redaction (values from the originals, for the test only). */
function found(lines: [string, string][], rules: Partial<RedactionRules> = {}) {
  const out = redact(lines, rules);
  return {
    texts: out.map((u) => u.text),
    hits: out.flatMap((u, i) =>
      u.redactions.map((r) => `${r.kind}:${lines[i]![1].slice(r.originalBegin, r.originalEnd)}`),
    ),
  };
}

const customer = (text: string): [string, string] => ['customer', text];
const agent = (text: string): [string, string] => ['agent', text];

describe('phone numbers', () => {
  it.each([
    ['090-1234-5678', '090-1234-5678'],
    ['電話番号は09012345678です', '09012345678'],
    ['０９０－１２３４－５６７８でお願いします', '０９０－１２３４－５６７８'],
    ['電話番号は、えー、ゼロ九ゼロの一二三四の五六七八です。', 'ゼロ九ゼロの一二三四の五六七八'],
    ['〇九〇 一二三四 五六七八', '〇九〇 一二三四 五六七八'],
    [
      'ゼロキューゼロ、イチニーサンヨン、ゴーロクナナハチです',
      'ゼロキューゼロ、イチニーサンヨン、ゴーロクナナハチ',
    ],
    ['自宅は03-1234-5678です', '03-1234-5678'],
    ['フリーダイヤル0120-123-456まで', '0120-123-456'],
    ['+81 90 1234 5678', '81 90 1234 5678'],
    ['〇九〇の、えーっと、一二三四の五六七八', '〇九〇の、えーっと、一二三四の五六七八'],
  ])('%s', (text, value) => {
    const { hits, texts } = found([customer(text)]);
    expect(hits).toEqual([`phone:${value}`]);
    expect(texts[0]).toContain('[電話番号]');
  });

  it('split over two utterances of the customer, with the agent in between, is one number', () => {
    const lines = [
      agent('ご登録のお電話番号をお願いします。'),
      customer('ゼロ九ゼロの、'),
      agent('はい。'),
      customer('一二三四の五六七八です。'),
    ];
    const { texts, hits } = found(lines);
    expect(hits).toEqual(['phone:ゼロ九ゼロ', 'phone:一二三四の五六七八']);
    expect(texts).toEqual([
      'ご登録のお電話番号をお願いします。',
      '[電話番号]の、',
      'はい。',
      '[電話番号]です。',
    ]);
  });

  it('utterances far apart are not one number (eight digits said one by one are still an identifier)', () => {
    const u = call(customer('〇九〇です'), customer('一二三四の五六七八です'));
    u[1] = { ...u[1]!, start: 60, end: 62 };
    expect(localSpans(u, compileRules()).map((s) => [s.utterance, s.kind])).toEqual([[1, 'idNumber']]);
  });
});

describe('cards, My Number, postal codes, accounts, identifiers', () => {
  it('a card number passing Luhn, in groups, digits or kanji', () => {
    expect(found([customer('カードは4111 1111 1111 1111です')]).hits).toEqual([
      'cardNumber:4111 1111 1111 1111',
    ]);
    expect(found([customer('五五五五 五五五五 五五五五 四四四四')]).hits).toEqual([
      'cardNumber:五五五五 五五五五 五五五五 四四四四',
    ]);
  });

  it('sixteen digits failing Luhn are still an identifier', () => {
    expect(found([customer('4111-1111-1111-1112')]).hits).toEqual(['idNumber:4111-1111-1111-1112']);
  });

  it('My Number by its check digit', () => {
    expect(found([customer('マイナンバーは1234 5678 9018です')]).hits).toEqual(['myNumber:1234 5678 9018']);
    expect(found([customer('一二三四 五六七八 九〇一七')]).hits).toEqual([
      'idNumber:一二三四 五六七八 九〇一七',
    ]);
  });

  it('postal codes: after 〒, written 123-4567, or when asked for', () => {
    expect(found([customer('〒150-0041 東京都')]).hits).toEqual(['postalCode:150-0041']);
    expect(found([customer('150-0041です')]).hits).toEqual(['postalCode:150-0041']);
    expect(
      found([agent('ご住所を郵便番号からお願いいたします。'), customer('一五〇の〇〇四一です。')]).hits,
    ).toEqual(['postalCode:一五〇の〇〇四一']);
  });

  it('bank accounts and contract numbers when the conversation asks for them', () => {
    expect(found([agent('口座番号をお願いします。'), customer('一二三四五六七です')]).hits).toEqual([
      'bankAccount:一二三四五六七',
    ]);
    expect(found([customer('支店番号は〇一二で、口座番号は七六五四三二一です')]).hits).toEqual([
      'bankAccount:〇一二',
      'bankAccount:七六五四三二一',
    ]);
    expect(
      found([agent('念のため契約番号の下四桁をお願いできますか。'), customer('下四桁は四三二一です。')]).hits,
    ).toEqual(['idNumber:四三二一']);
  });
});

describe('e-mail addresses', () => {
  it.each([
    ['メールはyamada.taro@example.co.jpです', 'yamada.taro@example.co.jp'],
    ['ｙａｍａｄａ＠ｅｘａｍｐｌｅ．ｃｏｍ', 'ｙａｍａｄａ＠ｅｘａｍｐｌｅ．ｃｏｍ'],
    ['yamada アットマーク example ドット com です', 'yamada アットマーク example ドット com'],
    ['ヤマダ アットマーク エグザンプル ドット コム', 'ヤマダ アットマーク エグザンプル ドット コム'],
  ])('%s', (text, value) => {
    expect(found([customer(text)]).hits).toEqual([`email:${value}`]);
  });
});

describe('birth dates', () => {
  it('a date where a birth date was asked for', () => {
    expect(found([customer('えーと、生年月日は千九百八十五年四月十日です。')]).hits).toEqual([
      'birthDate:千九百八十五年四月十日',
    ]);
    expect(found([agent('生年月日をお願いいたします。'), customer('昭和六十年四月十日です。')]).hits).toEqual(
      ['birthDate:昭和六十年四月十日'],
    );
    expect(found([agent('お誕生日はいつですか。'), customer('1985/4/10です')]).hits).toEqual([
      'birthDate:1985/4/10',
    ]);
    expect(found([customer('平成元年生まれです')]).hits).toEqual(['birthDate:平成元年']);
  });

  it('other dates, and a year alone, stay', () => {
    expect(found([customer('配送は四月十日の予定ですか')]).hits).toEqual([]);
    expect(found([agent('2024年4月10日にご請求いたします。')]).hits).toEqual([]);
    expect(found([agent('生年月日をお願いします。'), customer('2024年です')]).hits).toEqual([]);
  });
});

describe('addresses', () => {
  it('block and lot numbers, with the town before them', () => {
    expect(found([customer('住所は東京都渋谷区の、えーっと、神南一丁目です。')]).hits).toEqual([
      'address:神南一丁目',
    ]);
    expect(found([customer('三番地の五です')]).hits).toEqual(['address:三番地の五']);
    expect(found([customer('二番五号です')]).hits).toEqual(['address:二番五号']);
  });
});

describe('what stays', () => {
  it.each([
    '午後三時以降なら、電話に出られます。',
    'まあ、そちらのプランですと、月額料金は三千円でございます。',
    '二、三日でお届けできる見込みでございます。',
    '10時30分に伺います。',
    '料金は1,234,567円です。',
    'ルーターの電源を一度抜いて、三十秒ほどお待ちいただけますか。',
    'エラーコードは、えーっと、E五〇二って出てます。',
    '返品をご希望の場合は、到着から八日以内にご連絡ください。',
    'お問い合わせ件数は二〇二四件でした。',
    '一週間前に注文したんですが、配送はどうなってますか。',
  ])('%s', (text) => {
    expect(found([agent(text)]).hits).toEqual([]);
  });
});

describe("the deployment's terms and patterns", () => {
  it('match literally or by pattern, with numbers read as digits, under their own labels', () => {
    const rules: Partial<RedactionRules> = {
      terms: [{ kind: 'vip', text: 'ゴールド会員' }],
      patterns: [{ kind: 'contract', regex: 'C-?\\d{6}', label: '[契約番号]' }],
    };
    const { texts, hits } = found([customer('ゴールド会員で、契約はＣ－一二三四五六です')], rules);
    expect(hits).toEqual(['vip:ゴールド会員', 'contract:Ｃ－一二三四五六']);
    expect(texts[0]).toBe('[vip]で、契約は[契約番号]です');
  });
});

describe('maskPersonalData (free text: reasons of failures)', () => {
  it('masks numbers that prove themselves and e-mail addresses', () => {
    expect(maskPersonalData('service said: invalid sentence 090-1234-5678 (user a.b@example.jp)')).toBe(
      'service said: invalid sentence [電話番号] (user [メールアドレス])',
    );
    expect(maskPersonalData('card 4111 1111 1111 1111 refused')).toBe('card [カード番号] refused');
  });

  it('leaves keys, ids, timestamps, hashes and counts alone', () => {
    for (const text of [
      'cannot decode s3://calls/2024/11/22/probe-3f9a0c1e.wav: moov atom not found',
      'staging/calls/x-1/process-x-redo-1732312345678/sessions/0001.json: NoSuchKey',
      'fingerprint sha256:0312345678abcdef0123456789abcdef',
      'run 550e8400-e29b-41d4-a716-446655440000 failed after 1234567 ms',
      'session 1: 3 restarts used up (last: 550 No Resource at 41.2 s)',
    ]) {
      expect(maskPersonalData(text)).toBe(text);
    }
  });
});
