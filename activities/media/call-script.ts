/**
 * Realistic call scripts for tests, benchmarks and the demo: an agent and a customer taking turns, a
 * phrase every few seconds, now and then a hold. Seeded and deterministic, so a failing test names a
 * script that can be rendered again.
 */
import {
  AGENT_PHRASE_IDS,
  CUSTOMER_PHRASE_IDS,
  PERSONAL_DATA_EXCHANGES,
  phraseDurationSeconds,
  type FixtureScript,
} from '../../schemas/synthetic-recording.ts';
import { seededRandom } from '../../schemas/seeded-random.ts';

export interface CallScriptOptions {
  /** Length of the call in seconds (1 minute to several hours are typical). */
  durationSeconds: number;
  /** Seed of the pseudo-random choices; the same seed gives the same script. Default 1. */
  seed?: number;
  /** Stereo (default): agent on channel 0, customer on channel 1. Mono: both on channel 0, never overlapping. */
  stereo?: boolean;
  /** Background of the rendered recording. Default 'silence'. */
  background?: 'silence' | 'noise';
  /** Sample rate written into the script (the renderer's default rate). */
  sampleRate?: number;
  /**
   * Open with the exchanges in which the customer gives personal data (PERSONAL_DATA_EXCHANGES: a
   * name, a birth date, phone, card, My Number, address, e-mail, bank account), then talk as usual.
   */
  personalData?: boolean;
}

/** Pause between two phrases of one speaker's turn, seconds. */
const PHRASE_GAP_SECONDS = { min: 0.6, max: 2.5 } as const;
/** Pause before the other speaker answers, seconds. */
const TURN_GAP_SECONDS = { min: 0.8, max: 3 } as const;
/** Phrases per turn. */
const PHRASES_PER_TURN = { min: 1, max: 3 } as const;
/** Chance that a turn is followed by a hold (the agent checks something), and its length. */
const HOLD_PROBABILITY = 0.04;
const HOLD_SECONDS = { min: 8, max: 40 } as const;
/** Silence at the start and end of the call. */
const LEAD_IN_SECONDS = 0.5;
const TAIL_SECONDS = 0.5;

const roundMs = (seconds: number) => Math.round(seconds * 1000) / 1000;

/** Generates a call script; see {@link CallScriptOptions}. */
export function generateCallScript(options: CallScriptOptions): FixtureScript {
  const {
    durationSeconds,
    seed = 1,
    stereo = true,
    background = 'silence',
    sampleRate,
    personalData,
  } = options;
  if (!(durationSeconds > LEAD_IN_SECONDS + TAIL_SECONDS)) {
    throw new RangeError(`call length must be more than ${LEAD_IN_SECONDS + TAIL_SECONDS} s`);
  }
  const random = seededRandom(seed);
  const between = (range: { min: number; max: number }) => range.min + random() * (range.max - range.min);
  const intBetween = (range: { from: number; to: number } | { min: number; max: number }) => {
    const [lo, hi] = 'from' in range ? [range.from, range.to] : [range.min, range.max];
    return lo + Math.floor(random() * (hi - lo + 1));
  };

  const channels: FixtureScript['channels'] = stereo ? [{ phrases: [] }, { phrases: [] }] : [{ phrases: [] }];
  const end = durationSeconds - TAIL_SECONDS;
  let t = LEAD_IN_SECONDS;
  let speaker: 0 | 1 = 0; // the agent answers the call
  /** One phrase of `who` at the current time, then the pause before the next; false when the call is over. */
  const say = (who: 0 | 1, id: number, gap: number): boolean => {
    const length = phraseDurationSeconds(id);
    if (t + length > end) return false;
    channels[stereo ? who : 0]!.phrases.push({ id, start: roundMs(t) });
    t += length + gap;
    return true;
  };
  if (personalData) {
    for (const { ask, answer, reply } of PERSONAL_DATA_EXCHANGES) {
      say(0, ask, between(TURN_GAP_SECONDS));
      // A number read in two goes: the second part follows after a short pause.
      answer.forEach((id, i) =>
        say(1, id, i < answer.length - 1 ? PHRASE_GAP_SECONDS.min : between(TURN_GAP_SECONDS)),
      );
      if (reply !== undefined) say(0, reply, between(TURN_GAP_SECONDS));
    }
  }
  for (;;) {
    const turn = intBetween(PHRASES_PER_TURN);
    let said = 0;
    for (let i = 0; i < turn; i++) {
      const id = intBetween(speaker === 0 ? AGENT_PHRASE_IDS : CUSTOMER_PHRASE_IDS);
      const length = phraseDurationSeconds(id);
      if (t + length > end) break;
      channels[stereo ? speaker : 0]!.phrases.push({ id, start: roundMs(t) });
      said++;
      // Rounding to the millisecond may move a start by 0.5 ms: the gaps keep phrases well apart.
      t += length + (i < turn - 1 ? between(PHRASE_GAP_SECONDS) : 0);
    }
    if (said === 0) break;
    t += between(TURN_GAP_SECONDS);
    if (random() < HOLD_PROBABILITY) t += between(HOLD_SECONDS);
    speaker = speaker === 0 ? 1 : 0;
  }
  return {
    durationSeconds,
    ...(sampleRate ? { sampleRate } : {}),
    background,
    channels,
  };
}
