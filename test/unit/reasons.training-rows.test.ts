/**
 * The two forms of a reasons training file (activities/reasons/training-rows.ts): `class,text` lines
 * checked against spec 03's limits with the line named; `callId,class` lines built from stored, redacted
 * results (the customer's words or the summary), a call without a result named by its line.
 */
import { describe, expect, it } from 'vitest';
import { reasonText } from '../../activities/reasons/reason-text.ts';
import { trainingSet } from '../../activities/reasons/training-rows.ts';
import { callOutputKeys } from '../../schemas/call-keys.ts';
import { trainingCsv } from '../../schemas/classifier-dataset.ts';
import type { ReasonText } from '../../schemas/reasons.ts';
import { resultFixture } from '../helpers/result-fixture.ts';
import { MemoryStore } from './nlp.helpers.ts';

const output = { bucket: 'out', prefix: 'results/' };
const rows = ['billing', 'outage'].flatMap((c) =>
  Array.from({ length: 6 }, (_, i) => ({ class: c, text: `${c} ${i}` })),
);
const noResults = () => {
  throw new Error('class,text lines read no result');
};

describe('class,text lines', () => {
  it('are taken as they are when within the limits', async () => {
    const set = await trainingSet(trainingCsv(rows), noResults);
    expect(set.problems).toEqual([]);
    expect(set.rows).toHaveLength(12);
    expect(set.rows[7]).toEqual({ line: 8, class: 'outage', text: 'outage 1' });
  });

  it('name the line of each problem (a quoted text over lines counts from where it begins)', async () => {
    const csv = `${trainingCsv(rows.slice(0, 3))}billing,"two\nlines"\n${'c'.repeat(129)},text\nbilling,${'あ'.repeat(3001)}\n`;
    const set = await trainingSet(csv, noResults);
    expect(set.problems.map((p) => [p.line, p.message])).toEqual([
      [6, 'class : must be less than 128 character'],
      [7, 'text : must be less than 3000 character'],
    ]);
  });

  it('need two classes of six examples each', async () => {
    const set = await trainingSet(trainingCsv(rows.slice(0, 11)), noResults);
    expect(set.problems).toEqual([
      { line: 7, message: 'class : outage must be greater than or equal to 6 items (has 5)' },
    ]);
    const one = await trainingSet(trainingCsv(rows.slice(0, 6)), noResults);
    expect(one.problems[0]!.message).toMatch(/^class : size must be between 2/);
  });
});

describe('a line model for classifier rules (class,text lines of single lines)', () => {
  const ng = [
    'それは私の担当じゃないので。',
    '普通は皆さんわかりますよ。',
    'はあ、またですか。',
    '無理です、できません。',
    '知りませんよ、そんなこと。',
    '面倒なので、書類で送ってください。',
  ];
  const ok = [
    '確認いたしますので少々お待ちください。',
    '承知いたしました。',
    'ご不便をおかけして申し訳ございません。',
    '担当部署におつなぎいたします。',
    '恐れ入りますが、もう一度お願いできますか。',
    'かしこまりました、すぐにお調べします。',
  ];
  const lines = [...ng.map((text) => ({ class: 'ng', text })), ...ok.map((text) => ({ class: 'ok', text }))];

  it('are read back line for line, commas and quotes kept, with no result read', async () => {
    const quoted = [...lines, { class: 'ok', text: '「はい」と、おっしゃいましたね。' }];
    const set = await trainingSet(trainingCsv(quoted), noResults);
    expect(set).toMatchObject({ problems: [], text: null });
    expect(set.rows.map((r) => [r.class, r.text])).toEqual(quoted.map((r) => [r.class, r.text]));
  });

  it('refuse a class of too few lines, or a line with a third field, naming the line', async () => {
    const few = await trainingSet(trainingCsv(lines.slice(1)), noResults);
    expect(few.problems).toEqual([
      { line: 1, message: 'class : ng must be greater than or equal to 6 items (has 5)' },
    ]);
    const third = await trainingSet(`${trainingCsv(lines)}ng,知りません,よ\n`, noResults);
    expect(third.problems).toEqual([
      { line: 13, message: 'dataset : invalid format (3 fields, expected class,text)' },
    ]);
  });
});

describe('callId,class lines', () => {
  async function storeWith(callIds: string[]) {
    const store = new MemoryStore('out');
    for (const callId of callIds) {
      const doc = resultFixture({ callId });
      await store.put(callOutputKeys(output, callId).result, JSON.stringify(doc));
    }
    return store;
  }

  it("build each example from the call's stored result: the customer's words or the summary", async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `call-${i}-0000abcd`);
    const results = await storeWith(ids);
    const csv = `callId,class\n${ids.map((id, i) => `${id},${i < 6 ? 'billing' : 'outage'}`).join('\n')}\n`;
    for (const text of ['customer', 'summary'] as ReasonText[]) {
      const choice = { text, chars: 600 };
      const set = await trainingSet(csv, () => ({ results, output, text: choice }));
      expect(set.problems).toEqual([]);
      expect(set.text).toEqual(choice);
      const doc = resultFixture({ callId: ids[0]! });
      expect(set.rows[0]).toEqual({ line: 2, class: 'billing', text: reasonText(doc, choice) });
    }
    const customer = reasonText(resultFixture(), { text: 'customer', chars: 600 });
    expect(customer).toContain('請求書の件で電話しました');
    expect(customer).not.toContain('カスタマーセンターの佐藤');
  });

  it('a call without a stored result, or an unsafe id, is named by its line; nothing is sent', async () => {
    const results = await storeWith(['call-1-0000abcd']);
    const csv = 'callId,class\ncall-1-0000abcd,billing\ncall-2-0000abcd,billing\n../etc,billing\n';
    const set = await trainingSet(csv, () => ({ results, output, text: { text: 'customer', chars: 600 } }));
    expect(set.problems.map((p) => p.line)).toEqual([3, 4]);
    expect(set.problems[0]!.message).toMatch(/no result\.json/);
  });
});
