import { describe, expect, it } from 'vitest';
import { callMetrics, type MetricsUtterance } from '../../activities/insights/call-metrics.ts';
import { normalizeForMatch, PhraseMatcher, spokenCharacters } from '../../activities/insights/text-match.ts';
import type { MetricsSettings } from '../../schemas/rules.ts';

let next = 0;
function u(
  speaker: string,
  start: number,
  end: number,
  text = 'はい',
  extra: Partial<MetricsUtterance> = {},
) {
  return { index: next++, speaker, start, end, text, fillers: [], cleanedText: text, ...extra };
}

const HOLD = {
  startPhrases: ['保留', '少々お待ち'],
  returnPhrases: ['お待たせいたしました'],
  minSeconds: 3,
  maxSeconds: 600,
};
const settings: MetricsSettings = { silenceSeconds: 3, overlapSeconds: 1, hold: HOLD };
const SPEAKERS = ['agent', 'customer'];

describe('text-match', () => {
  it('folds width, kana, case, spaces and punctuation', () => {
    expect(normalizeForMatch('ｵﾏﾁ ｸﾀﾞｻｲ。')).toBe(normalizeForMatch('おまちください'));
    expect(normalizeForMatch('アリガトウ')).toBe('ありがとう');
    expect(normalizeForMatch('ＡＢＣ－１')).toBe('abc1');
    expect(new PhraseMatcher(['少々お待ち']).matches('確認いたしますので、少々 お待ちいただけますか')).toBe(
      true,
    );
    expect(new PhraseMatcher(['お待ち']).matches('お待たせいたしました')).toBe(false);
    expect(spokenCharacters('はい、 わかりました。')).toBe(8);
  });
});

describe('callMetrics: silences and overlaps', () => {
  it('finds silences of at least the threshold between talk, not before the first or after the last', () => {
    const m = callMetrics(
      [u('agent', 5, 8), u('customer', 10, 12), u('agent', 16.5, 18)],
      30,
      SPEAKERS,
      settings,
    );
    expect(m.silences).toEqual([{ start: 12, end: 16.5, seconds: 4.5, hold: false }]);
    expect(m.silenceSeconds).toBe(4.5);
    expect(m.timeToFirstAgentSeconds).toBe(5);
  });

  it('finds overlaps of at least 1 s and who started talking over whom', () => {
    const m = callMetrics(
      [u('customer', 0, 6), u('agent', 4.5, 8), u('agent', 10, 11), u('customer', 10.6, 12)],
      20,
      SPEAKERS,
      settings,
    );
    // 4.5–6 (1.5 s, the agent started over the customer); 10.6–11 is 0.4 s, under the threshold.
    expect(m.overlaps).toEqual([
      { start: 4.5, end: 6, seconds: 1.5, speakers: ['agent', 'customer'], interrupter: 'agent' },
    ]);
    expect(m.bySpeaker.find((s) => s.speaker === 'agent')!.interruptions).toBe(1);
    expect(m.bySpeaker.find((s) => s.speaker === 'customer')!.interruptions).toBe(0);
  });
});

describe('callMetrics: holds', () => {
  it('measures a hold from the hold phrase to the return phrase, over silence and low-confidence noise', () => {
    const m = callMetrics(
      [
        u('agent', 1, 3, '確認いたしますので、少々お待ちください。'),
        u('customer', 3.5, 4, 'はい'),
        u('agent', 10, 11, '〈不明〉', { confidence: 0.1 }),
        u('agent', 33, 35, '大変お待たせいたしました。'),
      ],
      40,
      SPEAKERS,
      settings,
    );
    expect(m.holds).toEqual([
      {
        start: 3,
        end: 33,
        seconds: 30,
        speaker: 'agent',
        startUtterance: next - 4,
        returnUtterance: next - 1,
      },
    ]);
    expect(m.holdSeconds).toBe(30);
    expect(m.silences.every((s) => s.hold)).toBe(true);
  });

  it('on one track, lets the customer’s acknowledgement come between the hold and return phrases', () => {
    const m = callMetrics(
      [
        u('mixed', 1, 3, '少々お待ちください。'),
        u('mixed', 4, 5, 'はい、わかりました。'),
        u('mixed', 65, 66, 'お待たせいたしました。'),
      ],
      70,
      ['mixed'],
      settings,
    );
    expect(m.holds.map((h) => [h.start, h.end, h.seconds])).toEqual([[3, 65, 62]]);
    // Three utterances between them is talk, not a hold.
    const talk = callMetrics(
      [
        u('mixed', 1, 3, '少々お待ちください。'),
        u('mixed', 4, 5, 'はい'),
        u('mixed', 6, 7, 'えっと'),
        u('mixed', 8, 9, 'それで'),
        u('mixed', 65, 66, 'お待たせいたしました。'),
      ],
      70,
      ['mixed'],
      settings,
    );
    expect(talk.holds).toEqual([]);
  });

  it('finds no hold when the agent says something else after the hold phrase, or without hold phrases', () => {
    const utterances = [
      u('agent', 1, 3, '少々お待ちください'),
      u('agent', 10, 12, 'ご住所をお願いします'),
      u('agent', 20, 22, 'お待たせいたしました'),
    ];
    expect(callMetrics(utterances, 30, SPEAKERS, settings).holds).toEqual([]);
    const { hold: _, ...noHold } = settings;
    expect(
      callMetrics(
        [u('agent', 1, 3, '保留'), u('agent', 20, 22, 'お待たせいたしました')],
        30,
        SPEAKERS,
        noHold,
      ).holds,
    ).toEqual([]);
  });
});

describe('callMetrics: per-speaker figures', () => {
  it('gives talk-to-listen, speech rate, fillers per minute and the longest monologue per speaker', () => {
    const fillers = [{ text: 'えー', begin: 0, end: 2 }];
    const m = callMetrics(
      [
        u('agent', 0, 10, 'あいうえおかきくけこ', { fillers }),
        u('agent', 11, 21, 'あいうえおかきくけこ'),
        u('customer', 22, 27, 'さしすせそ', { fillers: [...fillers, ...fillers] }),
        u('agent', 35, 40, 'たちつてと'),
      ],
      60,
      SPEAKERS,
      settings,
    );
    const agent = m.bySpeaker.find((s) => s.speaker === 'agent')!;
    const customer = m.bySpeaker.find((s) => s.speaker === 'customer')!;
    expect(agent).toMatchObject({
      talkSeconds: 25,
      talkToListen: 5,
      characters: 25,
      speechRate: 1,
      fillers: 1,
    });
    expect(agent.fillersPerMinute).toBeCloseTo(2.4, 6);
    expect(customer).toMatchObject({
      talkSeconds: 5,
      talkToListen: 0.2,
      speechRate: 1,
      fillers: 2,
      fillersPerMinute: 24,
    });
    // 0–21 is one monologue (a 1-s gap); the silence before 35 breaks the agent's later run.
    expect(m.longestMonologue).toEqual({ speaker: 'agent', start: 0, end: 21, seconds: 21 });
    expect(agent.longestMonologueSeconds).toBe(21);
  });

  it('says null where a figure does not exist: no fillers step, no agent track, one speaker', () => {
    const m = callMetrics([u('mixed', 1, 2, 'はい', { cleanedText: null })], 10, ['mixed'], settings);
    expect(m.bySpeaker[0]).toMatchObject({ fillers: null, fillersPerMinute: null, talkToListen: null });
    expect(m.timeToFirstAgentSeconds).toBeNull();
    expect(m.overlaps).toEqual([]);
    const empty = callMetrics([], 10, SPEAKERS, settings);
    expect(empty.longestMonologue).toBeNull();
    expect(empty.bySpeaker.map((s) => s.speechRate)).toEqual([null, null]);
  });
});
