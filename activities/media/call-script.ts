/**
 * Realistic call scripts for tests, benchmarks and the demo: an agent and a customer taking turns, a
 * phrase every few seconds, now and then a hold. Seeded and deterministic, so a failing test names a
 * script that can be rendered again.
 */
import {
  AGENT_PHRASE_IDS,
  CUSTOMER_PHRASE_IDS,
  MISHEARD_PHRASE_IDS,
  PERSONAL_DATA_EXCHANGES,
  phraseDurationSeconds,
  type FixtureScript,
  type TelephonePathName,
} from '../../schemas/synthetic-recording.ts';
import { seededRandom } from '../../schemas/seeded-random.ts';
import { roundSecondsToMs } from '../../schemas/units.ts';

export interface CallScriptOptions {
  /** Length of the call in seconds (1 minute to several hours are typical). */
  durationSeconds: number;
  /** Seed of the pseudo-random choices; the same seed gives the same script. Default 1. */
  seed?: number;
  /**
   * Stereo (default): agent on channel 0, customer on channel 1. Mono: both on channel 0, never
   * overlapping; with `legs`, each phrase names its speaker's leg (0 agent, 1 customer).
   */
  stereo?: boolean;
  /**
   * Mono only: the telephone paths (TELEPHONE_PATHS presets) of the agent's leg and the customer's, so
   * the rendered channel is the sum of two differently sounding legs, as a PBX records a call in mono.
   * Default {@link DEFAULT_MONO_LEGS}; `null` or `false` for plain mono, both speakers alike.
   */
  legs?: readonly [TelephonePathName, TelephonePathName] | null | false;
  /** Background of the rendered recording. Default 'silence'. */
  background?: 'silence' | 'noise';
  /** Sample rate written into the script (the renderer's default rate). */
  sampleRate?: number;
  /**
   * Open with the exchanges in which the customer gives personal data (PERSONAL_DATA_EXCHANGES: a
   * name, a birth date, phone, card, My Number, address, e-mail, bank account), then talk as usual.
   */
  personalData?: boolean;
  /**
   * Share (0–1) of the customer's lines that come out garbled, as on a bad line: half of them misheard
   * (MISHEARD_PHRASE_IDS, recognized at a low confidence), half an id the phrasebook lacks (the
   * emulator's unknown placeholder). Default 0: the script is the same as without the option.
   */
  garbled?: number;
}

/** An id no phrasebook line has: decoded, it is the emulator's unknown placeholder. */
const UNKNOWN_PHRASE_ID = 999;

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
/** Telephone paths of a mono call's legs unless told otherwise: the agent's headset, a mobile caller. */
export const DEFAULT_MONO_LEGS: readonly [TelephonePathName, TelephonePathName] = ['headset', 'mobile-gsm'];

/** Where a script is being written: the time, who talks next, and the channels so far. */
interface ScriptState {
  t: number;
  speaker: 0 | 1;
  channels: FixtureScript['channels'];
  stereo: boolean;
  /** Mono with a leg per speaker: each phrase records its speaker as its leg. */
  legs: boolean;
  random: () => number;
  /** Share of the customer's lines garbled (CallScriptOptions.garbled). */
  garbled: number;
}

/** A phrase of `speaker` (0 agent, 1 customer) at `start`: on the speaker's channel, or leg of mono. */
function place(state: ScriptState, speaker: 0 | 1, id: number, start: number): void {
  if (state.stereo) state.channels[speaker]!.phrases.push({ id, start: roundSecondsToMs(start) });
  else {
    state.channels[0]!.phrases.push({
      id,
      start: roundSecondsToMs(start),
      ...(state.legs ? { leg: speaker } : {}),
    });
  }
}

const between = (random: () => number, range: { min: number; max: number }) =>
  range.min + random() * (range.max - range.min);
const intBetween = (random: () => number, lo: number, hi: number) =>
  lo + Math.floor(random() * (hi - lo + 1));

/** Random turns of agent and customer lines, now and then a hold (unless `holds` is false), until `end`. */
function randomTurns(state: ScriptState, end: number, holds = true): void {
  const { random } = state;
  for (;;) {
    const turn = intBetween(random, PHRASES_PER_TURN.min, PHRASES_PER_TURN.max);
    let said = 0;
    for (let i = 0; i < turn; i++) {
      const range = state.speaker === 0 ? AGENT_PHRASE_IDS : CUSTOMER_PHRASE_IDS;
      let id = intBetween(random, range.from, range.to);
      // Drawn only when asked, so a script without garbling is the one it always was.
      if (state.speaker === 1 && state.garbled > 0 && random() < state.garbled)
        id =
          random() < 0.5
            ? intBetween(random, MISHEARD_PHRASE_IDS.from, MISHEARD_PHRASE_IDS.to)
            : UNKNOWN_PHRASE_ID;
      const length = phraseDurationSeconds(id);
      if (state.t + length > end) break;
      place(state, state.speaker, id, state.t);
      said++;
      // Rounding to the millisecond may move a start by 0.5 ms: the gaps keep phrases well apart.
      state.t += length + (i < turn - 1 ? between(random, PHRASE_GAP_SECONDS) : 0);
    }
    if (said === 0) return;
    state.t += between(random, TURN_GAP_SECONDS);
    if (holds && random() < HOLD_PROBABILITY) state.t += between(random, HOLD_SECONDS);
    state.speaker = state.speaker === 0 ? 1 : 0;
  }
}

function emptyScript(options: CallScriptOptions): { state: ScriptState; end: number } {
  const { durationSeconds, seed = 1, stereo = true } = options;
  if (!(durationSeconds > LEAD_IN_SECONDS + TAIL_SECONDS)) {
    throw new RangeError(`call length must be more than ${LEAD_IN_SECONDS + TAIL_SECONDS} s`);
  }
  const legs = stereo
    ? undefined
    : options.legs === undefined
      ? DEFAULT_MONO_LEGS
      : options.legs || undefined;
  const channels: FixtureScript['channels'] = stereo
    ? [{ phrases: [] }, { phrases: [] }]
    : [{ phrases: [], ...(legs ? { legs: [...legs] } : {}) }];
  // The agent answers the call.
  return {
    state: {
      t: LEAD_IN_SECONDS,
      speaker: 0,
      channels,
      stereo,
      legs: !!legs,
      random: seededRandom(seed),
      garbled: options.garbled ?? 0,
    },
    end: durationSeconds - TAIL_SECONDS,
  };
}

function finish(options: CallScriptOptions, state: ScriptState): FixtureScript {
  return {
    durationSeconds: options.durationSeconds,
    ...(options.sampleRate ? { sampleRate: options.sampleRate } : {}),
    background: options.background ?? 'silence',
    channels: state.channels,
  };
}

/** The exchanges in which the customer gives personal data (PERSONAL_DATA_EXCHANGES), from `state.t`. */
function personalDataExchanges(state: ScriptState, end: number): void {
  const { random } = state;
  /** One phrase of `who` at the current time, then the pause before the next. */
  const say = (who: 0 | 1, id: number, gap: number): void => {
    const length = phraseDurationSeconds(id);
    if (state.t + length > end) return;
    place(state, who, id, state.t);
    state.t += length + gap;
  };
  for (const { ask, answer, reply } of PERSONAL_DATA_EXCHANGES) {
    say(0, ask, between(random, TURN_GAP_SECONDS));
    // A number read in two goes: the second part follows after a short pause.
    answer.forEach((id, i) =>
      say(1, id, i < answer.length - 1 ? PHRASE_GAP_SECONDS.min : between(random, TURN_GAP_SECONDS)),
    );
    if (reply !== undefined) say(0, reply, between(random, TURN_GAP_SECONDS));
  }
}

/** Generates a call script; see {@link CallScriptOptions}. */
export function generateCallScript(options: CallScriptOptions): FixtureScript {
  const { state, end } = emptyScript(options);
  if (options.personalData) personalDataExchanges(state, end);
  randomTurns(state, end);
  return finish(options, state);
}

// --- scripted calls: what call insights look for, at known times ----------------------------------------

/** Lines of the default phrasebook (emulator/phrasebook.ja.json) that scripted calls use. */
const SCRIPT_LINES = {
  greeting: 1, // お電話ありがとうございます。カスタマーセンターの佐藤でございます。
  noGreeting: 4, // 本日はどのようなご用件でしょうか。
  reason: 102, // えーっと、請求書のことで電話したんですが。
  askName: 6, // 恐れ入りますが、お名前をフルネームでお伺いできますか。
  name: 106, // 山田太郎です。
  askBirthDate: 7, // ご本人確認のため、生年月日をお願いいたします。
  birthDate: 107, // えーと、生年月日は千九百八十五年四月十日です。
  verified: 11, // ありがとうございます。ご本人様と確認が取れました。
  complaint: [118, 121, 122], // もう何回も電話してるんですけど… 本当に腹が立ちます。いい加減にしてください。
  apology: 16, // ご迷惑をおかけして大変申し訳ございません。
  holdStart: 13, // 確認いたしますので、少々お待ちいただけますでしょうか。
  holdAck: 139, // はい、わかりました。
  holdReturn: 14, // 大変お待たせいたしました。
  talkedOver: [119, 120, 123], // 正直、すごく困ってるんです。仕事で使うので… 前にも同じことを言われましたよ。
  talkingOver: [55, 17, 41], // お客様のおっしゃることはごもっともでございます。…
  anythingElse: 64, // ほかにご不明な点はございますでしょうか。
  nothing: 140, // いえ、特にありません。
  closing: 67, // お電話ありがとうございました。失礼いたします。
  bye: 172, // お世話になりました。失礼します。
} as const;

/**
 * Why a scripted customer calls (call reasons, docs/insights.md): the line they open with, then two more
 * on the same topic once their identity is checked (phrasebook lines).
 */
export const REASON_LINES = {
  billing: [102, 112, 113], // 請求書のことで… 先月の請求が二回… 料金が高すぎる…
  outage: [103, 104, 125], // インターネットがつながらない… 回線が切れたまま… ランプが赤く点滅…
  cancellation: [116, 117, 157], // 解約したい… 違約金は… 割引があるなら…
  delivery: [141, 142, 143], // 商品がまだ届かない… 配送は… 届いた商品が壊れていた
} as const;
export type ScriptedReason = keyof typeof REASON_LINES;

/** A call with the moments call insights score, at known places; everything else random turns. */
export interface CallScenario extends CallScriptOptions {
  /** Why the customer calls (default: the billing opening line alone, as before reasons existed). */
  reason?: ScriptedReason;
  /** The agent opens with a greeting (default) or straight with a question. */
  greeting?: boolean;
  /** The agent verifies who is calling (default true). */
  identity?: boolean;
  /** The customer complains (three lines) and the agent apologizes. */
  complaint?: boolean;
  /** One hold of this many seconds, about half way: a hold line, silence, a return line. */
  holdSeconds?: number;
  /** The agent talks over the customer for about 1.5 s, about a third of the way (stereo only). */
  overlap?: boolean;
  /** The agent closes the call in its last minute (default true). */
  closing?: boolean;
}

/** What a scripted call holds, as the script placed it (seconds from the start of the recording). */
export interface ScriptedMoments {
  greeting: boolean;
  hold?: { start: number; end: number; seconds: number };
  overlap?: { start: number; end: number; seconds: number };
  complaint: boolean;
  identity: boolean;
  closing: boolean;
}

/** Phrases said one after another with `gap` seconds between them: one utterance when the gap is short. */
function say(
  state: ScriptState,
  speaker: 0 | 1,
  ids: readonly number[],
  gap = 0.1,
): { start: number; end: number } {
  const start = state.t;
  for (const [i, id] of ids.entries()) {
    place(state, speaker, id, state.t);
    state.t += phraseDurationSeconds(id) + (i < ids.length - 1 ? gap : 0);
  }
  const end = state.t;
  state.t += between(state.random, TURN_GAP_SECONDS);
  state.speaker = speaker === 0 ? 1 : 0;
  return { start, end };
}

/**
 * A call script from a scenario, and the moments it holds (for tests that check call insights against
 * the script, and for the demo). Seeded like {@link generateCallScript}.
 */
export function scriptedCall(scenario: CallScenario): { script: FixtureScript; moments: ScriptedMoments } {
  const { greeting = true, identity = true, complaint = false, closing = true } = scenario;
  const stereo = scenario.stereo ?? true;
  if (scenario.overlap && !stereo)
    throw new RangeError('an overlap needs a stereo call (one channel per speaker)');
  const { state, end } = emptyScript(scenario);
  const L = SCRIPT_LINES;
  const closingSeconds = 30;
  const moments: ScriptedMoments = { greeting, complaint, identity, closing };
  const until = (fraction: number) =>
    randomTurns(state, Math.min(end - closingSeconds, scenario.durationSeconds * fraction), false);

  say(state, 0, [greeting ? L.greeting : L.noGreeting]);
  const reason = scenario.reason ? REASON_LINES[scenario.reason] : undefined;
  say(state, 1, [reason ? reason[0] : L.reason]);
  if (identity) {
    for (const [speaker, id] of [
      [0, L.askName],
      [1, L.name],
      [0, L.askBirthDate],
      [1, L.birthDate],
      [0, L.verified],
    ] as const)
      say(state, speaker, [id]);
  }
  if (reason) say(state, 1, reason.slice(1), 0.6);
  if (scenario.personalData) {
    personalDataExchanges(state, end);
    state.speaker = 0;
  }
  if (complaint) {
    say(state, 1, L.complaint, 0.8);
    say(state, 0, [L.apology]);
  }
  if (scenario.overlap) {
    until(0.33);
    // The customer's three lines as one utterance; the agent starts 0.5 s in and talks 1.6 s.
    const customer = say(state, 1, L.talkedOver);
    state.t = customer.start + 0.5;
    const agent = say(state, 0, L.talkingOver);
    const start = agent.start;
    const stop = Math.min(agent.end, customer.end);
    moments.overlap = {
      start: roundSecondsToMs(start),
      end: roundSecondsToMs(stop),
      seconds: roundSecondsToMs(stop - start),
    };
    state.t = Math.max(state.t, customer.end + between(state.random, TURN_GAP_SECONDS));
  }
  if (scenario.holdSeconds !== undefined) {
    until(0.5);
    const asked = say(state, 0, [L.holdStart]);
    state.t = asked.end + 1;
    const ack = say(state, 1, [L.holdAck]);
    state.t = Math.max(ack.end + 0.5, asked.end + scenario.holdSeconds);
    const back = say(state, 0, [L.holdReturn]);
    moments.hold = {
      start: roundSecondsToMs(asked.end),
      end: roundSecondsToMs(back.start),
      seconds: roundSecondsToMs(back.start - asked.end),
    };
  }
  until(1);
  if (closing) {
    state.t = Math.max(state.t, end - closingSeconds + 5);
    say(state, 0, [L.anythingElse]);
    say(state, 1, [L.nothing]);
    say(state, 0, [L.closing]);
    say(state, 1, [L.bye]);
  }
  if (state.t - TURN_GAP_SECONDS.max > end)
    throw new RangeError(`the scenario does not fit in ${scenario.durationSeconds} s`);
  return { script: finish(scenario, state), moments };
}
