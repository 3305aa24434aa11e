/**
 * The emulator's learners (emulator/nlp/text-classifier.ts): each separates two reasons by what is said,
 * scores every class in [0, 1] summing to 1 and best first, and is deterministic.
 */
import { describe, expect, it } from 'vitest';
import { crossValidatedReport, LEARNERS } from '../../emulator/nlp/text-classifier.ts';

const rows = [
  ...[
    '請求額がおかしい',
    '請求書の金額が違う',
    '二重に請求されている',
    '先月の請求が高すぎる',
    '料金の請求が間違っている',
    '請求の内訳を知りたい',
  ].map((text) => ({ class: 'billing', text })),
  ...[
    'ネットがつながらない',
    '回線が切れる',
    '通信が遅くてつながらない',
    '昨日から回線が不通です',
    'インターネットが切れた',
    'つながらなくて困っている',
  ].map((text) => ({ class: 'outage', text })),
];

describe.each(Object.entries(LEARNERS))('%s', (_, learner) => {
  it('classifies unseen sentences by their words, scores best first summing to 1', () => {
    const model = learner.train(rows);
    for (const [text, expected] of [
      ['請求が二重になっています', 'billing'],
      ['回線がずっとつながりません', 'outage'],
    ] as const) {
      const scores = learner.classify(model, text);
      expect(scores[0]!.class, text).toBe(expected);
      expect(scores[0]!.score).toBeGreaterThan(scores[1]!.score);
      expect(scores.reduce((s, c) => s + c.score, 0)).toBeCloseTo(1, 4);
      for (const c of scores) expect(c.score).toBeGreaterThanOrEqual(0);
    }
  });

  it('is deterministic: the same rows give the same scores and report', () => {
    const text = '請求がつながらない';
    expect(learner.classify(learner.train(rows), text)).toEqual(learner.classify(learner.train(rows), text));
    expect(crossValidatedReport(learner, rows)).toEqual(crossValidatedReport(learner, rows));
    expect(crossValidatedReport(learner, rows).billing).toMatchObject({ support: 6 });
  });
});
