/**
 * The corpus of bench/speakers.ts: mono calls whose voices are known, in two splits built from different
 * seeds, voices, telephone lines and scripts. The development split is the one the separator may be tuned
 * on; the test split chooses no parameter and is what the benchmark reports and fails on. Built once and
 * cached under `.callpipe/bench-speakers/<split>-<hash of the generator's parameters>/`, each spoken line
 * under `speech/` by its voice and text (bench/lib/speech-synth.ts).
 *
 * Speech calls: Japanese kana lines (an agent in service keigo, a customer, backchannels) spoken by two
 * synthesizers. Open JTalk's HTS voice is made into people the way people differ: pitch (semitones),
 * vocal-tract length (formant factor) and rate; women and men, two men, two women, and close pairs (the
 * same sex, 2.5 semitones and 5 % of formants apart). espeak-ng speaks with its variants, pitch and speed.
 * Each utterance is pure speech, or a DTMF code then the speech (as the emulator needs for text). The
 * legs reach the recording through one shared line (a PBX's mix, then one telephone path) or each through
 * its own path (activities/media/telephone-path.ts), summed to 8-kHz mono. Backchannels fall in the
 * other's pauses or over their sentences, and some turns start before the other has finished. DTMF calls:
 * the pipeline's synthetic recordings (call-script.ts, fixture.ts), each leg rendered alone and mixed
 * through two different paths, so the legs differ by their path only.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { generateCallScript } from '../../activities/media/call-script.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { mixLegs, TELEPHONE_PATHS, type TelephonePath } from '../../activities/media/telephone-path.ts';
import { seededRandom, type Random } from '../../schemas/seeded-random.ts';
import {
  AGENT_PHRASE_IDS,
  CUSTOMER_PHRASE_IDS,
  DTMF_FREQUENCIES,
  DTMF_GAP_SECONDS,
  DTMF_LEVEL_DBFS,
  DTMF_TONE_SECONDS,
  phraseDurationSeconds,
  phraseSymbols,
} from '../../schemas/synthetic-recording.ts';
import { SPEECH_RATE, SpeechSynth, voiceText, type SynthVoice } from './speech-synth.ts';
import { voicedReference, voicedStretches, type Stretch } from './voiced-reference.ts';
import { wavFile } from '../../test/helpers/dtmf-audio.ts';
import { roundSecondsToMs } from '../../schemas/units.ts';

/** Bump when the generator changes in a way its parameters do not show. */
const GENERATOR_VERSION = 6;

export type Split = 'dev' | 'test';
export type CallKind = 'two-voice' | 'one-voice' | 'three-voice' | 'dtmf';
type Engine = 'openjtalk' | 'espeak';
/** Who the two voices of a call are. */
type Pairing = 'woman-man' | 'two-men' | 'two-women' | 'close' | 'espeak';
/** Each utterance pure speech, or a DTMF code then speech. */
type Style = 'pure' | 'dtmf+speech';
/** Both legs through one line (a PBX's mix), or each through its own. */
type Line = 'shared' | 'separate';

/** One speaker's stretch of speech, as the script placed it (trimmed to the audible sound). */
interface Segment {
  speaker: number;
  start: number;
  end: number;
}

/** What a recognizer reports: overlapping segments merged, the truth being who holds most of the span. */
interface TruthSpan {
  start: number;
  end: number;
  speaker: number;
  /** Seconds of each speaker inside the span. */
  seconds: Record<number, number>;
}

export interface CorpusCall {
  id: string;
  split: Split;
  kind: CallKind;
  /** Voices the call really holds. */
  voices: number;
  /** The mixed 8-kHz mono WAV. */
  path: string;
  durationSeconds: number;
  /** The script's lines (a DTMF + speech line from its code's start), pauses and all. */
  segments: Segment[];
  /**
   * Who speaks when as a diarization reference marks it (bench/lib/voiced-reference.ts): each line's
   * speech, a speaker's pauses under 0.3 s closed and longer ones left out; a DTMF code counts as its
   * speaker's, as in `segments`. DTMF-only calls: their phrases' slots, as `segments`.
   */
  reference: Segment[];
  spans: TruthSpan[];
  /** Who speaks through what, for the report. */
  description: string;
  /** Speech calls: the synthesizer, who the voices are, the utterances' style and the line. */
  engine?: Engine;
  pairing?: Pairing;
  style?: Style;
  line?: Line;
}

// The development split's script. Kana only: espeak-ng's Japanese voice reads no kanji.
const AGENT_LINES = [
  'おでんわ ありがとう ございます。 かすたまあ せんたあの やまだで ございます。',
  'ほんじつは どのような ごようけん でしょうか。',
  'おそれいりますが、 おなまえを ちょうだい できますでしょうか。',
  'ごけいやくの ばんごうを おしえて いただけますか。',
  'かくにん いたしますので、 しょうしょう おまち いただけますでしょうか。',
  'たいへん おまたせ いたしました。',
  'ごふべんを おかけして もうしわけ ございません。',
  'ただいまの ごじょうきょうを もうすこし くわしく おうかがい しても よろしいでしょうか。',
  'こちらで てつづきを すすめさせて いただきます。',
  'せいきゅうしょは らいげつの はじめに おとどけ いたします。',
  'ほかに ごふめいな てんは ございますでしょうか。',
  'おてすうですが、 ほんにん かくにんの ため、 せいねんがっぴを おねがい いたします。',
  'かしこまりました。 それでは へんこうの おてつづきを いたします。',
  'ごれんらく さきの でんわばんごうに おまちがいは ございませんか。',
  'きゃんぺえんの ごあんないも させて いただいて よろしいでしょうか。',
  'りょうきん ぷらんの へんこうは らいげつから てきよう されます。',
  'おしはらいの ほうほうを かくにん させて いただきます。',
  'ごようぼうは たんとう ぶしょに しっかりと おつたえ いたします。',
  'まことに おそれいりますが、 もういちど おねがい できますでしょうか。',
  'ほんじつは おでんわ いただき、 まことに ありがとう ございました。',
  'それでは しつれい いたします。',
  'ごいけん ありがとう ございます。 こんごの さあびすに いかして まいります。',
];
const CUSTOMER_LINES = [
  'あの、 せいきゅうしょの ことで ちょっと ききたいんですけど。',
  'けいやく ばんごうは ちょっと いま てもとに ないんです。',
  'さとう です。 さとう はなこ です。',
  'せんげつから りょうきんが たかく なってる みたいで。',
  'ああ、 そうなんですね。 わかりました。',
  'いや、 それは きいて ないですね。',
  'はい、 それで だいじょうぶです。',
  'いつごろ とどきますか。',
  'じゃあ、 その ぷらんに かえて ください。',
  'でんわばんごうは かわって ないです。',
  'ちょっと まって ください、 いま かくにん します。',
  'なんども でんわ してるんですけど、 つながらなくて。',
  'それって てすうりょう かかりますか。',
  'ええと、 たぶん きょねんの しがつ ごろ だったと おもいます。',
  'わかりました、 ありがとう ございます。',
  'ほかは とくに ないです。',
  'ああ、 はい、 おねがい します。',
  'すみません、 もう いちど いって もらえますか。',
];
const BACKCHANNELS = ['はい', 'ええ', 'はい はい', 'そうですね', 'ええ、 ええ', 'はい、 わかりました'];
const TRANSFER_LINE = 'それでは たんとうの ものに おつなぎ いたします。 しょうしょう おまち ください。';
const VOICEMAIL_LINES = [
  ...CUSTOMER_LINES.slice(0, 4),
  'また あとで かけなおします。 よろしく おねがい します。',
];

/** The test split's script: other lines, spoken by no voice of the development split. */
const TEST_AGENT_LINES = [
  'おまたせ いたしました。 さぽおと まどぐちの すずきが うけたまわります。',
  'ごちゅうもんの しょうひんに ついての おといあわせ ですね。',
  'ごちゅうもん ばんごうを おうかがい できますか。',
  'ただいま はいそうの じょうきょうを おしらべ いたします。',
  'にもつは あさっての ごご に おとどけ よていと なって おります。',
  'ごしていの じかんたいに へんこう することも できます。',
  'へんぴんの ばあいは しょうひんが とどいてから なのか いないに ごれんらく ください。',
  'もうしわけ ございません、 その しょうひんは ただいま ざいこが ございません。',
  'にゅうか しだい めえるで おしらせ いたします。',
  'ごとうろくの じゅうしょは とうきょうとの ほうで よろしいですか。',
  'ぽいんとは つぎの おかいものから おつかい いただけます。',
  'ほかに おてつだい できる ことは ございますか。',
  'おでんわ ありがとう ございました。 しつれい いたします。',
  'しょうしょう おまち ください。 ただいま おしらべ して おります。',
];
const TEST_CUSTOMER_LINES = [
  'せんしゅう ちゅうもん した ものが まだ とどかないんです。',
  'ばんごうは ええと、 めえるに かいて あった はずなんですけど。',
  'たなか です。 たなか いちろう です。',
  'できれば どようびの ごぜんちゅうに して ほしいんですが。',
  'そうですか、 こまったなあ。',
  'へんぴん する ときの そうりょうは どうなりますか。',
  'はい、 その じゅうしょで あって ます。',
  'じゃあ、 にゅうか したら おしえて ください。',
  'ぽいんとの ざんだかも しりたいんですけど。',
  'わかりました。 たすかります。',
  'いえ、 いまの ところ だいじょうぶです。',
  'あ、 すみません、 もう いちど おねがい します。',
];
const TEST_BACKCHANNELS = ['うん', 'ええ', 'はあ', 'なるほど', 'はい、 はい', 'ええ、 そうです'];
const TEST_TRANSFER_LINE = 'かしこまりました。 せんもんの ものに おつなぎ しますので、 おまち ください。';
const TEST_VOICEMAIL_LINES = [
  ...TEST_CUSTOMER_LINES.slice(0, 4),
  'また よる に でんわ します。 おりかえし おねがい します。',
];

interface Script {
  agent: string[];
  customer: string[];
  backchannels: string[];
  transfer: string;
  voicemail: string[];
}

/**
 * Telephone lines of the test split that no preset of the pipeline's names: a cordless handset, a
 * congested mobile line and a VoIP gateway, so the test split's lines were never seen while tuning.
 */
const TEST_ONLY_PATHS: Record<string, TelephonePath> = {
  cordless: { gainDb: -2, bandHz: [250, 3300], tiltDbPerOctave: 1.5, codec: 'alaw', noiseDbfs: -58 },
  'congested-gsm': { gainDb: -8, bandHz: [350, 3200], tiltDbPerOctave: -2.5, codec: 'gsm', noiseDbfs: -52 },
  'voip-gateway': { gainDb: 1, bandHz: [200, 3500], tiltDbPerOctave: -0.5, codec: 'mulaw' },
};

/** espeak-ng variants that sound like people (no robots, whispers or effects), shared out between the splits. */
const DEV_VARIANTS = [
  'm1',
  'm3',
  'm5',
  'm7',
  'f1',
  'f3',
  'f5',
  'adam',
  'benjamin',
  'edward',
  'linda',
  'michel',
  'rob',
  'steph',
  'victor',
  'aunty',
  'quincy',
];
const TEST_VARIANTS = [
  'm2',
  'm4',
  'm6',
  'f2',
  'f4',
  'andy',
  'david',
  'john',
  'max',
  'paul',
  'robert',
  'travis',
  'belinda',
  'annie',
];

interface SplitPlan {
  seed: number;
  script: Script;
  paths: Record<string, TelephonePath>;
  variants: string[];
  /**
   * Open JTalk voices are drawn on a grid of their own per split (whole semitones and even hundredths
   * of formant factor in development, half semitones and odd hundredths in test), so no voice of one
   * split is a voice of the other.
   */
  semitoneOffset: number;
  formantOffset: number;
  twoVoice: { engine: Engine; pairing: Pairing; style: Style; line: Line; minutes: number }[];
  oneVoice: { engine: Engine; sex: 'woman' | 'man'; style: Style }[];
  threeVoice: { engine: Engine; style: Style; line: Line }[];
  dtmfPairs: [string, string][];
  /**
   * Calls whose voices and lines are set by hand (the development split's hard cases, issue 36), each
   * set built after the ones before it from a seed of its own, so adding a set changes no earlier call.
   */
  hard?: HardCalls[];
  /**
   * Transfers drawn as the split's own are (the pair and the third voice by the split's rules, half way),
   * from a seed of their own and built after every other call, so adding them changes no earlier call.
   */
  drawnTransfers?: { seed: number; threeVoice: { engine: Engine; style: Style; line: Line }[] };
}

type JTalk = Extract<SynthVoice, { engine: 'openjtalk' }>;
const jt = (halfTone: number, formant: number, speed: number): JTalk => ({
  engine: 'openjtalk',
  halfTone,
  formant,
  speed,
});

/** A close pair's call (the object's keys in the order the split's hash has always read them). */
const closePair = (a: JTalk, b: JTalk, style: Style, lines: string[], minutes: number) => ({
  voices: [a, b] as [JTalk, JTalk],
  pairing: 'close' as const,
  style,
  lines,
  minutes,
});

/**
 * Hand-made calls, built after a split's drawn ones from a seed of their own (so the drawn calls stay as
 * they were): their voices, lines (names of `paths`, one for a shared line, one per voice otherwise) and
 * DTMF-only line pairs are given, not drawn.
 */
interface HardCalls {
  seed: number;
  paths: Record<string, TelephonePath>;
  twoVoice: { voices: [JTalk, JTalk]; pairing: Pairing; style: Style; lines: string[]; minutes: number }[];
  oneVoice: { voice: JTalk; style: Style; line: string }[];
  /** `transferAt`: the share of the call after which the transfer comes (half way when absent). */
  threeVoice: { voices: [JTalk, JTalk, JTalk]; style: Style; lines: string[]; transferAt?: number }[];
  dtmfPairs: [string, string][];
}

/**
 * Lines of the development split's hard cases, quiet and noisy as the test split's worst are, but no
 * preset or test line: an old copper loop, a weak mobile cell and a SIP trunk.
 */
const DEV_HARD_PATHS: Record<string, TelephonePath> = {
  'rural-copper': { gainDb: -9, bandHz: [280, 3000], tiltDbPerOctave: -2, codec: 'mulaw', noiseDbfs: -53 },
  'weak-mobile': { gainDb: -7, bandHz: [320, 3300], tiltDbPerOctave: -1, codec: 'gsm', noiseDbfs: -55 },
  'sip-trunk': { gainDb: -3, bandHz: [150, 3600], tiltDbPerOctave: 0.5, codec: 'alaw', noiseDbfs: -60 },
};

/**
 * The development split's hard cases: close same-sex pairs (2 to 4 semitones and formants ×0.93–0.97
 * apart; men and women; pure speech and DTMF + speech; one shared line and a line each), one-voice calls
 * on the noisy lines, transfers whose third voice is close to one of the first two (half way, late, early;
 * all three men), and DTMF-only calls whose legs differ by the noisy lines only. On the split's grid
 * (whole semitones, even hundredths).
 */
const DEV_HARD: HardCalls = {
  seed: 13,
  paths: { ...DEV_HARD_PATHS, landline: TELEPHONE_PATHS.landline, headset: TELEPHONE_PATHS.headset },
  twoVoice: [
    closePair(jt(-7, 0.86, 1.02), jt(-10, 0.82, 0.98), 'pure', ['rural-copper'], 4),
    closePair(jt(-8, 0.88, 0.96), jt(-10, 0.84, 1.0), 'dtmf+speech', ['weak-mobile', 'landline'], 3),
    closePair(jt(1, 1.02, 1.04), jt(-2, 0.98, 1.0), 'pure', ['sip-trunk', 'rural-copper'], 3),
    closePair(jt(0, 1.0, 1.06), jt(3, 0.96, 1.02), 'dtmf+speech', ['weak-mobile'], 3),
    closePair(jt(-6, 0.9, 0.94), jt(-9, 0.86, 0.96), 'pure', ['weak-mobile'], 5),
    closePair(jt(-1, 1.04, 1.0), jt(3, 1.0, 1.04), 'pure', ['rural-copper'], 3),
    closePair(jt(-11, 0.84, 1.08), jt(-9, 0.8, 1.06), 'dtmf+speech', ['sip-trunk'], 2),
    closePair(jt(2, 1.06, 0.92), jt(-1, 1.0, 0.94), 'pure', ['weak-mobile', 'headset'], 3),
  ],
  oneVoice: [
    { voice: jt(-8, 0.86, 1.0), style: 'pure', line: 'rural-copper' },
    { voice: jt(1, 1.0, 0.98), style: 'dtmf+speech', line: 'weak-mobile' },
  ],
  threeVoice: [
    {
      voices: [jt(1, 1.02, 1.0), jt(-8, 0.84, 1.04), jt(-2, 0.98, 0.96)],
      style: 'pure',
      lines: ['rural-copper'],
    },
    {
      voices: [jt(-7, 0.86, 0.98), jt(2, 1.04, 1.02), jt(-9, 0.82, 1.04)],
      style: 'dtmf+speech',
      lines: ['weak-mobile', 'sip-trunk', 'landline'],
    },
    {
      voices: [jt(0, 1.0, 1.04), jt(-10, 0.84, 0.96), jt(-8, 0.88, 1.0)],
      style: 'pure',
      lines: ['sip-trunk', 'weak-mobile', 'rural-copper'],
    },
    // Harder than the three above: late (a short second agent), early, all three men; the third voice
    // 2 semitones and 4 % of formants from the first agent (three-10: between the first agent and the customer).
    {
      voices: [jt(-7, 0.86, 1.0), jt(1, 1.02, 0.98), jt(-9, 0.82, 1.02)],
      style: 'pure',
      lines: ['weak-mobile'],
      transferAt: 0.8,
    },
    {
      voices: [jt(2, 1.04, 1.0), jt(-8, 0.86, 1.02), jt(0, 1.0, 0.96)],
      style: 'dtmf+speech',
      lines: ['rural-copper', 'sip-trunk', 'weak-mobile'],
      transferAt: 0.25,
    },
    {
      voices: [jt(-6, 0.9, 1.04), jt(-10, 0.82, 0.98), jt(-8, 0.86, 0.96)],
      style: 'pure',
      lines: ['rural-copper'],
      transferAt: 0.75,
    },
    {
      voices: [jt(-1, 1.0, 0.98), jt(-9, 0.84, 1.0), jt(1, 1.04, 1.04)],
      style: 'pure',
      lines: ['sip-trunk', 'headset', 'landline'],
      transferAt: 0.7,
    },
  ],
  dtmfPairs: [
    ['rural-copper', 'weak-mobile'],
    ['sip-trunk', 'rural-copper'],
  ],
};

/**
 * The development split's closest pairs (2026-11-29): as close as the test split's two-5 and two-8, which
 * are found as one voice, and no closer pair was in the development split. Two men 1 semitone and
 * formants ×0.955 apart, pure speech on one shared GSM line; two women 3 semitones apart with the same
 * formants, DTMF + speech on one shared line. On the split's grid.
 */
const DEV_CLOSEST: HardCalls = {
  seed: 17,
  paths: DEV_HARD_PATHS,
  twoVoice: [
    closePair(jt(-8, 0.88, 1.04), jt(-9, 0.84, 1.0), 'pure', ['weak-mobile'], 5),
    closePair(jt(0, 1.02, 1.0), jt(-3, 1.02, 1.04), 'dtmf+speech', ['sip-trunk'], 3),
  ],
  oneVoice: [],
  threeVoice: [],
  dtmfPairs: [],
};

const SPLITS: Record<Split, SplitPlan> = {
  dev: {
    seed: 11,
    script: {
      agent: AGENT_LINES,
      customer: CUSTOMER_LINES,
      backchannels: BACKCHANNELS,
      transfer: TRANSFER_LINE,
      voicemail: VOICEMAIL_LINES,
    },
    paths: {
      landline: TELEPHONE_PATHS.landline,
      'mobile-gsm': TELEPHONE_PATHS['mobile-gsm'],
      headset: TELEPHONE_PATHS.headset,
    },
    variants: DEV_VARIANTS,
    semitoneOffset: 0,
    formantOffset: 0,
    twoVoice: [
      { engine: 'openjtalk', pairing: 'woman-man', style: 'pure', line: 'shared', minutes: 3 },
      { engine: 'openjtalk', pairing: 'woman-man', style: 'dtmf+speech', line: 'separate', minutes: 5 },
      { engine: 'openjtalk', pairing: 'two-men', style: 'pure', line: 'separate', minutes: 4 },
      { engine: 'openjtalk', pairing: 'two-men', style: 'dtmf+speech', line: 'shared', minutes: 2 },
      { engine: 'openjtalk', pairing: 'two-women', style: 'pure', line: 'shared', minutes: 6 },
      { engine: 'openjtalk', pairing: 'two-women', style: 'dtmf+speech', line: 'separate', minutes: 3 },
      { engine: 'openjtalk', pairing: 'close', style: 'pure', line: 'shared', minutes: 4 },
      { engine: 'openjtalk', pairing: 'close', style: 'dtmf+speech', line: 'separate', minutes: 2 },
      { engine: 'openjtalk', pairing: 'woman-man', style: 'pure', line: 'separate', minutes: 20 },
      { engine: 'espeak', pairing: 'espeak', style: 'pure', line: 'shared', minutes: 3 },
      { engine: 'espeak', pairing: 'espeak', style: 'dtmf+speech', line: 'separate', minutes: 5 },
      { engine: 'espeak', pairing: 'espeak', style: 'pure', line: 'separate', minutes: 1 },
    ],
    oneVoice: [
      { engine: 'openjtalk', sex: 'woman', style: 'pure' },
      { engine: 'openjtalk', sex: 'man', style: 'dtmf+speech' },
      { engine: 'espeak', sex: 'man', style: 'pure' },
    ],
    threeVoice: [
      { engine: 'openjtalk', style: 'pure', line: 'shared' },
      { engine: 'openjtalk', style: 'dtmf+speech', line: 'separate' },
      { engine: 'espeak', style: 'pure', line: 'separate' },
      { engine: 'openjtalk', style: 'pure', line: 'separate' },
    ],
    dtmfPairs: [
      ['landline', 'mobile-gsm'],
      ['headset', 'mobile-gsm'],
      ['headset', 'landline'],
    ],
    hard: [DEV_HARD, DEV_CLOSEST],
    // Drawn transfers on one shared line, where the test split's missed transfers were, and of which the
    // development split held one drawn (three-1): bench/README.md, fourteenth round.
    drawnTransfers: {
      seed: 19,
      threeVoice: [
        { engine: 'openjtalk', style: 'pure', line: 'shared' },
        { engine: 'openjtalk', style: 'dtmf+speech', line: 'shared' },
        { engine: 'espeak', style: 'pure', line: 'shared' },
        { engine: 'espeak', style: 'dtmf+speech', line: 'shared' },
        { engine: 'openjtalk', style: 'pure', line: 'shared' },
        { engine: 'openjtalk', style: 'dtmf+speech', line: 'shared' },
        { engine: 'openjtalk', style: 'pure', line: 'shared' },
        { engine: 'espeak', style: 'pure', line: 'shared' },
      ],
    },
  },
  test: {
    seed: 29,
    script: {
      agent: TEST_AGENT_LINES,
      customer: TEST_CUSTOMER_LINES,
      backchannels: TEST_BACKCHANNELS,
      transfer: TEST_TRANSFER_LINE,
      voicemail: TEST_VOICEMAIL_LINES,
    },
    paths: { 'far-line': TELEPHONE_PATHS['far-line'], ...TEST_ONLY_PATHS },
    variants: TEST_VARIANTS,
    semitoneOffset: 0.5,
    formantOffset: 0.01,
    twoVoice: [
      { engine: 'openjtalk', pairing: 'woman-man', style: 'pure', line: 'shared', minutes: 2 },
      { engine: 'openjtalk', pairing: 'woman-man', style: 'pure', line: 'separate', minutes: 4 },
      { engine: 'openjtalk', pairing: 'woman-man', style: 'dtmf+speech', line: 'shared', minutes: 3 },
      { engine: 'openjtalk', pairing: 'woman-man', style: 'dtmf+speech', line: 'separate', minutes: 1 },
      { engine: 'openjtalk', pairing: 'two-men', style: 'pure', line: 'shared', minutes: 5 },
      { engine: 'openjtalk', pairing: 'two-men', style: 'dtmf+speech', line: 'separate', minutes: 3 },
      { engine: 'openjtalk', pairing: 'two-women', style: 'pure', line: 'separate', minutes: 4 },
      { engine: 'openjtalk', pairing: 'two-women', style: 'dtmf+speech', line: 'shared', minutes: 2 },
      { engine: 'openjtalk', pairing: 'close', style: 'pure', line: 'shared', minutes: 6 },
      { engine: 'openjtalk', pairing: 'close', style: 'pure', line: 'separate', minutes: 3 },
      { engine: 'openjtalk', pairing: 'woman-man', style: 'pure', line: 'shared', minutes: 60 },
      { engine: 'openjtalk', pairing: 'two-men', style: 'dtmf+speech', line: 'separate', minutes: 30 },
      { engine: 'espeak', pairing: 'espeak', style: 'pure', line: 'shared', minutes: 4 },
      { engine: 'espeak', pairing: 'espeak', style: 'pure', line: 'separate', minutes: 2 },
      { engine: 'espeak', pairing: 'espeak', style: 'dtmf+speech', line: 'shared', minutes: 3 },
      { engine: 'espeak', pairing: 'espeak', style: 'dtmf+speech', line: 'separate', minutes: 8 },
    ],
    oneVoice: [
      { engine: 'openjtalk', sex: 'man', style: 'pure' },
      { engine: 'openjtalk', sex: 'woman', style: 'dtmf+speech' },
      { engine: 'espeak', sex: 'woman', style: 'pure' },
    ],
    threeVoice: [
      { engine: 'openjtalk', style: 'pure', line: 'shared' },
      { engine: 'openjtalk', style: 'pure', line: 'separate' },
      { engine: 'openjtalk', style: 'dtmf+speech', line: 'shared' },
      { engine: 'openjtalk', style: 'dtmf+speech', line: 'separate' },
      { engine: 'espeak', style: 'pure', line: 'shared' },
      { engine: 'espeak', style: 'dtmf+speech', line: 'separate' },
    ],
    dtmfPairs: [
      ['far-line', 'cordless'],
      ['voip-gateway', 'congested-gsm'],
      ['cordless', 'voip-gateway'],
      ['congested-gsm', 'far-line'],
    ],
  },
};

/** Where the corpus is cached: `.callpipe/bench-speakers` in the checkout, whatever the working directory. */
const SPEAKER_CORPUS_ROOT = join(import.meta.dirname, '..', '..', '.callpipe', 'bench-speakers');

export interface CorpusOptions {
  split: Split;
  log?: (line: string) => void;
}

/** One split of the corpus: from the cache when its parameters are unchanged, else built (minutes). */
export async function speakerCorpus(options: CorpusOptions): Promise<CorpusCall[]> {
  const plan = SPLITS[options.split];
  const hash = createHash('sha256')
    .update(JSON.stringify({ version: GENERATOR_VERSION, plan }))
    .digest('hex')
    .slice(0, 16);
  const dir = join(SPEAKER_CORPUS_ROOT, `${options.split}-${hash}`);
  const manifest = join(dir, 'corpus.json');
  if (existsSync(manifest)) {
    // The WAVs beside the manifest: a cache copied from another checkout keeps that checkout's paths.
    const cached = JSON.parse(await readFile(manifest, 'utf8')) as CorpusCall[];
    return cached.map((call) => ({ ...call, path: join(dir, basename(call.path)) }));
  }
  await mkdir(dir, { recursive: true });
  const log = options.log ?? (() => {});
  const calls: CorpusCall[] = [];
  const random = seededRandom(plan.seed);
  const synth = new SpeechSynth(join(SPEAKER_CORPUS_ROOT, 'speech'));
  const built = (call: CorpusCall) => {
    calls.push(call);
    log(
      `built ${options.split} ${call.id} (${(call.durationSeconds / 60).toFixed(1)} min): ${call.description}`,
    );
  };
  try {
    for (const [i, c] of plan.twoVoice.entries()) {
      const voices = pairOf(random, plan, c.engine, c.pairing);
      built(await speechCall(dir, `two-${i + 1}`, 'two-voice', random, synth, plan, voices, c));
    }
    for (const [i, c] of plan.oneVoice.entries()) {
      const voices = [voiceOf(random, plan, c.engine, c.sex)];
      built(
        await speechCall(dir, `one-${i + 1}`, 'one-voice', random, synth, plan, voices, {
          ...c,
          line: 'separate',
          minutes: 1.5,
        }),
      );
    }
    for (const [i, c] of plan.threeVoice.entries())
      built(await drawnTransfer(dir, `three-${i + 1}`, random, synth, plan, c));
    for (const [i, pair] of plan.dtmfPairs.entries())
      built(await dtmfCall(dir, `dtmf-${i + 1}`, i, plan, pair, options.split));
    for (const hard of plan.hard ?? [])
      for (const call of await hardCalls(dir, plan, hard, synth, options.split, calls)) built(call);
    if (plan.drawnTransfers) {
      const drawn = seededRandom(plan.drawnTransfers.seed);
      const first = calls.filter((c) => c.kind === 'three-voice').length;
      for (const [i, c] of plan.drawnTransfers.threeVoice.entries())
        built(await drawnTransfer(dir, `three-${first + i + 1}`, drawn, synth, plan, c));
    }
  } finally {
    synth.close();
  }
  for (const c of calls) c.split = options.split;
  await writeFile(`${manifest}.tmp`, JSON.stringify(calls));
  await rename(`${manifest}.tmp`, manifest);
  return calls;
}

/** A transfer drawn by the split's rules: the customer, the first agent and the agent after the transfer, at least one of each sex. */
async function drawnTransfer(
  dir: string,
  id: string,
  random: Random,
  synth: SpeechSynth,
  plan: SplitPlan,
  c: { engine: Engine; style: Style; line: Line },
): Promise<CorpusCall> {
  const [a, b] = pairOf(random, plan, c.engine, c.engine === 'espeak' ? 'espeak' : 'woman-man');
  const third = voiceOf(random, plan, c.engine, random() < 0.5 ? 'woman' : 'man', [a!, b!]);
  return speechCall(dir, id, 'three-voice', random, synth, plan, [a!, b!, third], { ...c, minutes: 6 });
}

/** Speech calls of the test split up to this long (the 30- and 60-minute ones stay with bench:speakers). */
const PIPELINE_SPEECH_MAX_MINUTES = 10;

/**
 * The speech calls bench:speakers:pipeline submits (and bench/speakers-floor.ts reads): the test split's
 * first `count` two-voice calls of up to PIPELINE_SPEECH_MAX_MINUTES, Open JTalk and espeak-ng, as they are.
 */
export async function pipelineSpeechCalls(
  count: number,
  log?: (line: string) => void,
): Promise<CorpusCall[]> {
  const calls = await speakerCorpus({ split: 'test', ...(log ? { log } : {}) });
  return calls
    .filter((c) => c.kind === 'two-voice' && c.durationSeconds <= PIPELINE_SPEECH_MAX_MINUTES * 60)
    .slice(0, count);
}

/** A set of a split's hand-made calls, numbered after the calls `before` them (drawn and hand-made). */
async function hardCalls(
  dir: string,
  plan: SplitPlan,
  hard: HardCalls,
  synth: SpeechSynth,
  split: Split,
  before: readonly CorpusCall[],
): Promise<CorpusCall[]> {
  const random = seededRandom(hard.seed);
  const onLines = { ...plan, paths: hard.paths };
  const calls: CorpusCall[] = [];
  const counted = (prefix: string) =>
    [...before, ...calls].filter((c) => c.id.startsWith(`${prefix}-`)).length;
  const next = (prefix: string) => `${prefix}-${counted(prefix) + 1}`;
  // Hand-made DTMF-only calls take script indices from HARD_DTMF_INDEX on, in the order they are built.
  const dtmfIndex = HARD_DTMF_INDEX + counted('dtmf') - plan.dtmfPairs.length;
  for (const c of hard.twoVoice) {
    const id = next('two');
    calls.push(
      await speechCall(dir, id, 'two-voice', random, synth, onLines, c.voices, {
        ...c,
        engine: 'openjtalk',
        line: lineOf(c.lines),
      }),
    );
  }
  for (const c of hard.oneVoice) {
    const id = next('one');
    const lines = [c.line];
    calls.push(
      await speechCall(dir, id, 'one-voice', random, synth, onLines, [c.voice], {
        engine: 'openjtalk',
        style: c.style,
        line: 'separate',
        lines,
        minutes: 1.5,
      }),
    );
  }
  for (const c of hard.threeVoice) {
    const id = next('three');
    calls.push(
      await speechCall(dir, id, 'three-voice', random, synth, onLines, c.voices, {
        engine: 'openjtalk',
        style: c.style,
        line: lineOf(c.lines),
        lines: c.lines,
        minutes: 6,
        ...(c.transferAt ? { transferAt: c.transferAt } : {}),
      }),
    );
  }
  for (const [i, pair] of hard.dtmfPairs.entries()) {
    calls.push(await dtmfCall(dir, next('dtmf'), dtmfIndex + i, onLines, pair, split));
  }
  return calls;
}

/** The hand-made DTMF-only calls' scripts and levels come from indices no drawn call uses. */
const HARD_DTMF_INDEX = 100;
const lineOf = (lines: readonly string[]): Line => (lines.length === 1 ? 'shared' : 'separate');

const between = (random: Random, lo: number, hi: number) => lo + random() * (hi - lo);
const pick = <T>(random: Random, list: readonly T[]): T => list[Math.floor(random() * list.length)]!;

/** A path near a preset: its level moved by up to ±3 dB, so no two calls sound quite alike. */
function pathNear(random: Random, plan: SplitPlan, name: string): TelephonePath {
  const preset = plan.paths[name]!;
  return { ...preset, gainDb: Math.round((preset.gainDb + between(random, -3, 3)) * 10) / 10 };
}

/**
 * An Open JTalk person of `sex`: women within 3 semitones of the voice and formants within 6 %, men 6 to
 * 12 semitones lower with a vocal tract 10 to 25 % longer; speaking rate 0.88 to 1.15. Snapped to the
 * split's grid.
 */
function jtalkPerson(random: Random, plan: SplitPlan, sex: 'woman' | 'man'): SynthVoice {
  const [st, f] =
    sex === 'woman'
      ? [between(random, -3, 3), between(random, 0.94, 1.06)]
      : [between(random, -12, -6), between(random, 0.8, 0.9)];
  return {
    engine: 'openjtalk',
    halfTone: Math.round(st - plan.semitoneOffset) + plan.semitoneOffset,
    formant: Math.round((Math.round((f - plan.formantOffset) * 50) / 50 + plan.formantOffset) * 100) / 100,
    speed: Math.round(between(random, 0.88, 1.15) * 100) / 100,
  };
}

function espeakPerson(random: Random, plan: SplitPlan, avoid: readonly SynthVoice[]): SynthVoice {
  for (;;) {
    const variant = pick(random, plan.variants);
    if (avoid.some((v) => v.engine === 'espeak' && v.variant === variant)) continue;
    return {
      engine: 'espeak',
      variant,
      pitch: Math.round(between(random, 25, 75)),
      speed: Math.round(between(random, 140, 185)),
    };
  }
}

/** Semitones and formant factor apart, as one number: a semitone weighs as much as 2 % of formants. */
const apart = (a: SynthVoice, b: SynthVoice) =>
  a.engine === 'openjtalk' && b.engine === 'openjtalk'
    ? Math.abs(a.halfTone - b.halfTone) + 50 * Math.abs(a.formant - b.formant)
    : Infinity;

function voiceOf(
  random: Random,
  plan: SplitPlan,
  engine: Engine,
  sex: 'woman' | 'man',
  avoid: readonly SynthVoice[] = [],
): SynthVoice {
  if (engine === 'espeak') return espeakPerson(random, plan, avoid);
  for (;;) {
    const v = jtalkPerson(random, plan, sex);
    // Two people of a call are never one voice: at least 3 semitones or 6 % of formants apart.
    if (avoid.every((o) => apart(v, o) >= 3)) return v;
  }
}

/** The two voices of a call: agent first, then customer. */
function pairOf(random: Random, plan: SplitPlan, engine: Engine, pairing: Pairing): SynthVoice[] {
  if (engine === 'espeak' || pairing === 'espeak') {
    const a = espeakPerson(random, plan, []);
    return [a, espeakPerson(random, plan, [a])];
  }
  const flip = random() < 0.5;
  if (pairing === 'woman-man') {
    const w = voiceOf(random, plan, engine, 'woman');
    const m = voiceOf(random, plan, engine, 'man');
    return flip ? [m, w] : [w, m];
  }
  const sex = pairing === 'two-men' ? 'man' : pairing === 'two-women' ? 'woman' : flip ? 'man' : 'woman';
  const a = voiceOf(random, plan, engine, sex);
  if (pairing !== 'close') return [a, voiceOf(random, plan, engine, sex, [a])];
  // A close pair: 2.5 semitones and 5 % of formants apart, the same rate within 5 %.
  const b = a as Extract<SynthVoice, { engine: 'openjtalk' }>;
  const sign = random() < 0.5 ? -1 : 1;
  return [
    a,
    {
      ...b,
      halfTone: b.halfTone + sign * 2.5,
      formant: Math.round(b.formant * (1 + sign * 0.05) * 100) / 100,
      speed: Math.round(b.speed * between(random, 0.95, 1.05) * 100) / 100,
    },
  ];
}

/**
 * One utterance's prosody: a person's pitch and rate vary a little from line to line. Five steps, so a
 * voice's lines are synthesized a bounded number of times however long its calls.
 */
const PROSODY: readonly [number, number][] = [
  [0, 1],
  [-0.5, 1.04],
  [0.5, 0.96],
  [1, 1.03],
  [-1, 0.97],
];
function spoken(random: Random, v: SynthVoice): SynthVoice {
  const [st, rate] = pick(random, PROSODY);
  if (v.engine === 'openjtalk')
    return { ...v, halfTone: v.halfTone + st, speed: Math.round(v.speed * rate * 100) / 100 };
  return { ...v, pitch: Math.max(0, Math.min(99, v.pitch + 4 * st)), speed: Math.round(v.speed * rate) };
}

/** Speech level of every voice before its own gain and the line: -20 dBFS RMS over the audible part. */
const SPEECH_RMS_DBFS = -20;
const CODE_GAP_SECONDS = 0.06;

/** DTMF tones of `*id#` at SPEECH_RATE, as the pipeline's fixtures render them. */
function dtmfCode(id: number): Float32Array {
  const symbols = phraseSymbols(id);
  const out = new Float32Array(Math.round(phraseDurationSeconds(id) * SPEECH_RATE));
  const amplitude = 10 ** (DTMF_LEVEL_DBFS / 20);
  const tone = Math.round(DTMF_TONE_SECONDS * SPEECH_RATE);
  [...symbols].forEach((symbol, k) => {
    const [low, high] = DTMF_FREQUENCIES[symbol]!;
    const at = Math.round(k * (DTMF_TONE_SECONDS + DTMF_GAP_SECONDS) * SPEECH_RATE);
    for (let i = 0; i < tone; i++) {
      const t = i / SPEECH_RATE;
      out[at + i] = amplitude * (Math.sin(2 * Math.PI * low * t) + Math.sin(2 * Math.PI * high * t));
    }
  });
  return out;
}

interface Placed {
  speaker: number;
  start: number;
  audio: Float32Array;
  /** The line's speech (its code too), in seconds from `start`. */
  speech: Stretch[];
}

type SpeechPlan = {
  engine: Engine;
  style: Style;
  line: Line;
  minutes: number;
  pairing?: Pairing;
  /** The lines by name (one when shared, one per voice otherwise); drawn from the split's when absent. */
  lines?: readonly string[];
  /** A transfer's place: the share of the call after which it comes (half way when absent). */
  transferAt?: number;
};

/** A speech call of `kind` by `voices` (agent, customer, agent after a transfer), written to `<dir>/<id>.wav`. */
async function speechCall(
  dir: string,
  id: string,
  kind: 'two-voice' | 'one-voice' | 'three-voice',
  random: Random,
  synth: SpeechSynth,
  plan: SplitPlan,
  voices: SynthVoice[],
  call: SpeechPlan,
): Promise<CorpusCall> {
  const script = plan.script;
  const gains = voices.map(() => 10 ** ((SPEECH_RMS_DBFS + between(random, -4, 2)) / 20));
  /** A line as the leg carries it, and its speech found on the synthesizer's clean output. */
  const say = async (
    speaker: number,
    text: string,
    isAgent: boolean,
  ): Promise<{ audio: Float32Array; speech: Stretch[] }> => {
    const speech = await synth.say(spoken(random, voices[speaker]!), text);
    const voiced = voicedStretches(speech, SPEECH_RATE);
    let energy = 0;
    for (const x of speech) energy += x * x;
    const gain = gains[speaker]! / Math.sqrt(Math.max(1e-12, energy / Math.max(1, speech.length)));
    if (call.style === 'pure') return { audio: speech.map((x) => x * gain), speech: voiced };
    const range = isAgent ? AGENT_PHRASE_IDS : CUSTOMER_PHRASE_IDS;
    const code = dtmfCode(range.from + Math.floor(random() * (range.to - range.from + 1)));
    const gap = Math.round(CODE_GAP_SECONDS * SPEECH_RATE);
    const out = new Float32Array(code.length + gap + speech.length);
    out.set(code);
    for (let i = 0; i < speech.length; i++) out[code.length + gap + i] = speech[i]! * gain;
    // The code and the gap after it stay in the reference, as in the line's segment.
    const offset = (code.length + gap) / SPEECH_RATE;
    return {
      audio: out,
      speech: [
        { start: 0, end: offset },
        ...voiced.map((s) => ({ start: s.start + offset, end: s.end + offset })),
      ],
    };
  };
  const placed: Placed[] = [];
  const seconds = (a: Float32Array) => a.length / SPEECH_RATE;
  const end = (p: Placed) => p.start + seconds(p.audio);
  const target = call.minutes * 60;
  if (kind === 'one-voice') {
    // A voicemail (the customer's lines) or an announcement (the agent's).
    const asAgent = random() < 0.5;
    const lines = asAgent ? script.agent : [...script.voicemail, ...script.customer];
    let t = 0.5;
    for (let i = 0; t < target; i++) {
      const line = await say(0, lines[i % lines.length]!, asAgent);
      placed.push({ speaker: 0, start: t, ...line });
      t += seconds(line.audio) + between(random, 0.4, 1.5);
    }
  } else {
    // Speaker 1 is the customer; the agent is 0, then 2 after a transfer half way.
    let agent = 0;
    let t = 0.5;
    let speaker = 0;
    let transferred = kind !== 'three-voice';
    while (t < target) {
      const isAgent = speaker !== 1;
      const sentences = isAgent ? 1 + Math.floor(random() * 3) : 1 + Math.floor(random() * 2);
      for (let s = 0; s < sentences; s++) {
        const line =
          !isAgent && random() < 0.2
            ? pick(random, script.backchannels)
            : pick(random, isAgent ? script.agent : script.customer);
        const said = await say(speaker, line, isAgent);
        const audio = said.audio;
        const p = { speaker, start: t, ...said };
        placed.push(p);
        t = end(p);
        // The listener's backchannel: over the sentence, or in the pause after it.
        const listener = speaker === 1 ? agent : 1;
        let gap = between(random, 0.25, 0.8);
        if (seconds(audio) > 2 && random() < 0.35) {
          const bc = await say(listener, pick(random, script.backchannels.slice(0, 3)), listener !== 1);
          // After a turn's last sentence the listener speaks next: the backchannel goes over the sentence.
          if (s === sentences - 1 || random() < 0.5) {
            placed.push({
              speaker: listener,
              start: p.start + seconds(audio) * between(random, 0.35, 0.65),
              ...bc,
            });
          } else {
            placed.push({ speaker: listener, start: t + 0.25, ...bc });
            gap = Math.max(gap, seconds(bc.audio) + 0.5);
          }
        }
        if (s < sentences - 1) t += gap;
      }
      if (!transferred && t > target * (call.transferAt ?? 0.5) && speaker === 1) {
        const p = { speaker: agent, start: t + 0.6, ...(await say(agent, script.transfer, true)) };
        placed.push(p);
        t = end(p) + between(random, 4, 10);
        agent = 2;
        transferred = true;
        speaker = agent;
        continue;
      }
      // The other answers after a pause, or now and then before the sentence has ended.
      t += random() < 0.12 ? -between(random, 0.2, 0.6) : between(random, 0.3, 1.2);
      speaker = speaker === 1 ? agent : 1;
    }
  }

  const durationSeconds = Math.ceil(Math.max(...placed.map(end)) + 1);
  const names = Object.keys(plan.paths);
  const legAudio = voices.map((_, v) => {
    const leg = new Float32Array(Math.round(durationSeconds * SPEECH_RATE));
    for (const p of placed.filter((x) => x.speaker === v)) {
      const at = Math.round(p.start * SPEECH_RATE);
      for (let i = 0; i < p.audio.length && at + i < leg.length; i++)
        leg[at + i] = leg[at + i]! + p.audio[i]!;
    }
    return leg;
  });
  const legs: { input: string; path: TelephonePath }[] = [];
  const pathNames: string[] = [];
  if (call.line === 'shared') {
    // A PBX's mix: the legs summed, then one line to the recorder.
    const sum = new Float32Array(legAudio[0]!.length);
    for (const leg of legAudio) for (let i = 0; i < sum.length; i++) sum[i] = sum[i]! + leg[i]!;
    const input = join(dir, `${id}.mix.wav`);
    await writeFile(input, wavFile([sum], SPEECH_RATE));
    pathNames.push(call.lines?.[0] ?? pick(random, names));
    legs.push({ input, path: pathNear(random, plan, pathNames[0]!) });
  } else {
    for (let v = 0; v < voices.length; v++) {
      let name = call.lines?.[v] ?? pick(random, names);
      // Each on a line of its own kind when the split has enough kinds.
      while (!call.lines && pathNames.includes(name) && pathNames.length < names.length)
        name = pick(random, names);
      pathNames.push(name);
      const input = join(dir, `${id}.leg${v}.wav`);
      await writeFile(input, wavFile([legAudio[v]!], SPEECH_RATE));
      legs.push({ input, path: pathNear(random, plan, name) });
    }
  }
  const path = join(dir, `${id}.wav`);
  await mixLegs(legs, path);
  const segments = placed
    .map((p) => ({ speaker: p.speaker, start: roundSecondsToMs(p.start), end: roundSecondsToMs(end(p)) }))
    .sort((a, b) => a.start - b.start);
  const role = (v: number) =>
    kind === 'one-voice' ? 'voice' : v === 1 ? 'customer' : v === 0 ? 'agent' : 'agent 2';
  const lines =
    call.line === 'shared'
      ? `one shared line ${pathNames[0]} ${legs[0]!.path.gainDb} dB`
      : legs.map((l, i) => `${role(i)} via ${pathNames[i]} ${l.path.gainDb} dB`).join(', ');
  return {
    id,
    split: 'dev',
    kind,
    voices: voices.length,
    path,
    durationSeconds,
    segments,
    reference: voicedReference(placed),
    spans: mergeSpans(segments),
    description: `${call.pairing ?? kind} ${call.style}: ${voices.map((v, i) => `${role(i)} ${voiceText(v)}`).join('; ')}; ${lines}`,
    engine: call.engine,
    ...(call.pairing ? { pairing: call.pairing } : {}),
    style: call.style,
    line: call.line,
  };
}

/** A DTMF call: the generator's stereo script, each channel rendered alone as a leg, then mixed through two lines. */
async function dtmfCall(
  dir: string,
  id: string,
  index: number,
  plan: SplitPlan,
  pair: [string, string],
  split: Split,
): Promise<CorpusCall> {
  const random = seededRandom(plan.seed * 1000 + index);
  const durationSeconds = Math.round(between(random, 120, 600));
  const script = generateCallScript({ durationSeconds, seed: plan.seed * 100 + index, stereo: true });
  const legs: { input: string; path: TelephonePath }[] = [];
  for (let c = 0; c < 2; c++) {
    const input = join(dir, `${id}.leg${c}.wav`);
    await renderFixture(
      { durationSeconds, background: 'silence', channels: [script.channels[c] ?? { phrases: [] }] },
      input,
      { sampleRate: 8000 },
    );
    legs.push({ input, path: plan.paths[pair[c]!]! });
  }
  const path = join(dir, `${id}.wav`);
  await mixLegs(legs, path);
  const segments = script.channels
    .flatMap((channel, speaker) =>
      channel.phrases.map((p) => ({
        speaker,
        start: p.start,
        end: roundSecondsToMs(p.start + phraseDurationSeconds(p.id)),
      })),
    )
    .sort((a, b) => a.start - b.start);
  return {
    id,
    split,
    kind: 'dtmf',
    voices: 2,
    path,
    durationSeconds,
    segments,
    reference: segments,
    spans: mergeSpans(segments),
    description: `DTMF only: agent via ${pair[0]}, customer via ${pair[1]}`,
  };
}

/** Segments as a recognizer reports them: overlapping ones (of any speakers) merged into one span. */
function mergeSpans(segments: readonly Segment[]): TruthSpan[] {
  const sorted = [...segments].sort((a, b) => a.start - b.start);
  const groups: Segment[][] = [];
  let groupEnd = -Infinity;
  for (const s of sorted) {
    if (s.start < groupEnd) {
      groups.at(-1)!.push(s);
      groupEnd = Math.max(groupEnd, s.end);
    } else {
      groups.push([s]);
      groupEnd = s.end;
    }
  }
  return groups.map((g) => {
    const seconds: Record<number, number> = {};
    for (const s of g) seconds[s.speaker] = (seconds[s.speaker] ?? 0) + (s.end - s.start);
    const speaker = Number(Object.entries(seconds).sort((a, b) => b[1] - a[1])[0]![0]);
    return { start: g[0]!.start, end: Math.max(...g.map((s) => s.end)), speaker, seconds };
  });
}
