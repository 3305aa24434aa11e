/**
 * The personal data of the phrasebook's exchanges (PERSONAL_DATA_EXCHANGES), as tests look for it in
 * what callpipe stores, logs and sends to Temporal: each value as said, and numbers as digits too (the
 * recognizer writes no spaces between Japanese words, and a step might normalize).
 */
import {
  PERSONAL_DATA_EXCHANGES,
  phraseDurationSeconds,
  type FixtureScript,
} from '../../schemas/synthetic-recording.ts';
import { roundSecondsToMs } from '../../schemas/units.ts';

/** Every value the exchanges give, as said. */
export const PERSONAL_VALUES_SAID = [
  '鈴木花子',
  '千九百八十五年四月十日',
  '090-1234-5678',
  '八七六五の四三二一',
  '〇九〇の',
  'ゼロサン、イチニーサンヨン',
  '4111 1111 1111 1111',
  '1234 5678 9018',
  '一五〇の〇〇四一',
  '東京都渋谷区',
  '神南一丁目二番三号',
  'hanako.suzuki@example.co.jp',
  '七六五四三二一',
] as const;

/** …and the numbers as digits. */
export const PERSONAL_VALUES: readonly string[] = [
  ...PERSONAL_VALUES_SAID,
  '09012345678',
  '4111111111111111',
  '123456789018',
];

/** Which of `values` occur in `text` (UTF-8 bytes or a string). */
export function personalDataIn(text: Buffer | string, values: readonly string[] = PERSONAL_VALUES): string[] {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  return values.filter((v) => bytes.includes(Buffer.from(v, 'utf8')));
}

/** Lines with no personal data around the exchanges: they must come out word for word. */
export const ORDINARY_IDS = [4, 102, 112, 13, 14, 15, 139, 171];

/**
 * A stereo call: an ordinary opening (4, 102), the exchanges (questions on the agent, answers on the
 * customer), an ordinary close; with the phrase id of each utterance in time order.
 */
export function personalDataCall(): { script: FixtureScript; ids: number[] } {
  const lines: [0 | 1, number][] = [
    [0, 4],
    [1, 102],
  ];
  for (const e of PERSONAL_DATA_EXCHANGES) {
    lines.push([0, e.ask], ...e.answer.map((id) => [1, id] as [1, number]));
    if (e.reply) lines.push([0, e.reply]);
  }
  lines.push([1, 112], [0, 13], [0, 14], [0, 15], [1, 139], [0, 171]);
  const channels: FixtureScript['channels'] = [{ phrases: [] }, { phrases: [] }];
  let t = 0.5;
  for (const [speaker, id] of lines) {
    channels[speaker]!.phrases.push({ id, start: roundSecondsToMs(t) });
    t += phraseDurationSeconds(id) + 0.8;
  }
  return {
    script: { durationSeconds: Math.ceil(t + 1), background: 'silence', channels },
    ids: lines.map(([, id]) => id),
  };
}
