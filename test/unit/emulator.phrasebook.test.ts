import { describe, expect, it } from 'vitest';
import { findFillers } from '../../emulator/nlp/fillers.ts';
import { analyzeSentiment } from '../../emulator/nlp/sentiment.ts';
import { loadPhrasebook } from '../../emulator/phrasebook.ts';
import {
  AGENT_PHRASE_IDS,
  CUSTOMER_PHRASE_IDS,
  PERSONAL_DATA_EXCHANGES,
  PERSONAL_DATA_PHRASE_IDS,
  VOCABULARY_PHRASE_IDS,
  MISHEARD_PHRASE_IDS,
} from '../../schemas/synthetic-recording.ts';

describe('the shipped phrasebook', () => {
  const book = loadPhrasebook();
  const ids = [...book.keys()];

  it('has every id of the generator ranges, so generated calls decode to known text', () => {
    for (const range of [AGENT_PHRASE_IDS, CUSTOMER_PHRASE_IDS, PERSONAL_DATA_PHRASE_IDS]) {
      for (let id = range.from; id <= range.to; id++) expect(book.has(id), `phrase ${id}`).toBe(true);
    }
  });

  it('has at least 150 phrases, agents in 1–89, customers in 101–175, personal data in 201–222, vocabulary in 301–305, misheard in 401–406', () => {
    expect(book.size).toBeGreaterThanOrEqual(150);
    const inRange = (id: number, r: { from: number; to: number }) => id >= r.from && id <= r.to;
    const ranges = [
      AGENT_PHRASE_IDS,
      CUSTOMER_PHRASE_IDS,
      PERSONAL_DATA_PHRASE_IDS,
      VOCABULARY_PHRASE_IDS,
      MISHEARD_PHRASE_IDS,
    ];
    // Dictionary words are marked 《表記|ヨミ》 in the vocabulary lines, and only there.
    for (const [id, text] of book)
      expect(/《[^|》]+\|[^》]+》/.test(text), `phrase ${id}`).toBe(inRange(id, VOCABULARY_PHRASE_IDS));
    expect(ids.every((id) => ranges.some((r) => inRange(id, r)))).toBe(true);
    expect(ids.filter((id) => inRange(id, AGENT_PHRASE_IDS)).length).toBeGreaterThanOrEqual(70);
    expect(ids.filter((id) => inRange(id, CUSTOMER_PHRASE_IDS)).length).toBeGreaterThanOrEqual(70);
  });

  it('gives filler removal, sentiment and keywords something to do', () => {
    const texts = [...book.values()];
    const withFillers = texts.filter((t) => findFillers(t).length > 0);
    expect(withFillers.length).toBeGreaterThanOrEqual(25);
    const sentiments = texts.map((t) => analyzeSentiment(t).sentiment);
    expect(sentiments.filter((s) => s === 'Positive').length).toBeGreaterThanOrEqual(10);
    expect(sentiments.filter((s) => s === 'Negative').length).toBeGreaterThanOrEqual(10);
    for (const word of ['請求', '解約', '回線', '修理', '返品', 'ルーター'])
      expect(texts.some((t) => t.includes(word))).toBe(true);
  });

  it('has exchanges in which a customer gives every kind of personal data the pipeline redacts', () => {
    const said = PERSONAL_DATA_EXCHANGES.flatMap((e) => [e.ask, ...e.answer, ...(e.reply ? [e.reply] : [])]);
    for (const id of said) expect(book.has(id), `phrase ${id}`).toBe(true);
    const answers = PERSONAL_DATA_EXCHANGES.flatMap((e) => e.answer.map((id) => book.get(id)!)).join('\n');
    for (const form of [
      '花子',
      '千九百八十五年',
      '090-',
      '〇九〇',
      'ゼロサン',
      '4111 ',
      '9018',
      '一五〇の',
      '@',
      '口座',
    ])
      expect(answers, form).toContain(form);
  });
});
