/**
 * The synthetic-recording contract (docs/design.md, "Synthetic recordings the emulator can recognize").
 *
 * No speech model is available offline, so test recordings carry their words in-band as DTMF: each
 * utterance is `*` + decimal phrase id + `#`. The fixture generator (activities/media) writes it and the
 * emulator (emulator/) decodes it; both take their numbers from here so they cannot drift apart.
 */
import { z } from 'zod';

/** Standard DTMF pairs (ITU-T Q.23): symbol → [low Hz, high Hz]. */
export const DTMF_FREQUENCIES: Readonly<Record<string, readonly [number, number]>> = {
  '1': [697, 1209],
  '2': [697, 1336],
  '3': [697, 1477],
  '4': [770, 1209],
  '5': [770, 1336],
  '6': [770, 1477],
  '7': [852, 1209],
  '8': [852, 1336],
  '9': [852, 1477],
  '*': [941, 1209],
  '0': [941, 1336],
  '#': [941, 1477],
};
export const DTMF_LOW_HZ = [697, 770, 852, 941] as const;
export const DTMF_HIGH_HZ = [1209, 1336, 1477] as const;

/** Tone and gap lengths of one symbol, in seconds. */
export const DTMF_TONE_SECONDS = 0.08;
export const DTMF_GAP_SECONDS = 0.04;
/** Level of each of the two sines, in dBFS (the pair peaks about 6 dB higher). */
export const DTMF_LEVEL_DBFS = -12;

/** The in-band text of one utterance. */
export function phraseSymbols(phraseId: number): string {
  return `*${phraseId}#`;
}

/** Duration in seconds of the DTMF burst for a phrase id: every symbol is a tone then a gap. */
export function phraseDurationSeconds(phraseId: number): number {
  return phraseSymbols(phraseId).length * (DTMF_TONE_SECONDS + DTMF_GAP_SECONDS);
}

/** Text the emulator answers for a segment that decodes to no known phrase id. */
export const UNKNOWN_PHRASE_TEXT = '〈不明〉';

/**
 * Phrase id ranges of the default phrasebook (emulator/phrasebook.ja.json), so that generated call
 * scripts give agents agent lines and customers customer lines. Every id of both ranges is in the
 * default phrasebook (test/unit/emulator.phrasebook.test.ts), so generated calls decode to known text.
 */
export const AGENT_PHRASE_IDS = { from: 1, to: 89 } as const;
export const CUSTOMER_PHRASE_IDS = { from: 101, to: 175 } as const;

/**
 * Exchanges in which a customer gives personal data (ids 201–222 of the default phrasebook): the agent's
 * question, the customer's answer in one utterance or two (a number read in two goes), and the agent's
 * reply when there is one. Between them they name a person, a birth date, mobile numbers in digits and
 * in kanji, a landline in katakana, a card number, a My Number, a postal code and street address, an
 * e-mail address and a bank account. Generated calls carry them only when asked (`personalData`).
 */
export const PERSONAL_DATA_PHRASE_IDS = { from: 201, to: 222 } as const;
/**
 * Lines with words a recognizer knows only from a dictionary, marked `《表記|ヨミ》` (product names): the
 * emulator prints the reading unless a temporary word or the user dictionary gives the surface
 * (emulator/vocabulary.ts). Outside the generator's ranges: scripts place them on purpose.
 */
export const VOCABULARY_PHRASE_IDS = { from: 301, to: 305 } as const;
/** Lines the emulator mishears, recognized with a low confidence (emulator/misheard.ts). */
export const MISHEARD_PHRASE_IDS = { from: 401, to: 406 } as const;
export const PERSONAL_DATA_EXCHANGES: readonly { ask: number; answer: readonly number[]; reply?: number }[] =
  [
    { ask: 201, answer: [211], reply: 222 },
    { ask: 202, answer: [212] },
    { ask: 203, answer: [213] },
    { ask: 204, answer: [214, 215] },
    { ask: 205, answer: [216] },
    { ask: 206, answer: [217] },
    { ask: 207, answer: [218] },
    { ask: 208, answer: [219] },
    { ask: 209, answer: [220] },
    { ask: 210, answer: [221] },
  ];

/** A phrasebook: phrase id (decimal string) → text. */
export const phrasebookSchema = z.record(z.string().regex(/^\d+$/), z.string().min(1));
export type Phrasebook = z.infer<typeof phrasebookSchema>;

/**
 * Named telephone paths (activities/media/telephone-path.ts, TELEPHONE_PATHS): the line, codec and level
 * one speaker's leg goes through before the legs of a mono recording are mixed, as a PBX records them.
 */
export const TELEPHONE_PATH_NAMES = ['landline', 'mobile-gsm', 'headset', 'far-line'] as const;
export type TelephonePathName = (typeof TELEPHONE_PATH_NAMES)[number];

const fixturePhraseSchema = z.object({
  /** Phrase id: the utterance is the DTMF string `*id#`. */
  id: z.number().int().nonnegative(),
  /** Start in seconds from the recording's start. */
  start: z.number().nonnegative(),
  /**
   * Who says it, as an index into the channel's `legs`: 0 is the agent, 1 the customer in generated
   * calls. Without `legs` it only records the speaker; the renderer puts the phrase on the channel as is.
   * With `legs`, a phrase without one is on leg 0.
   */
  leg: z.number().int().nonnegative().optional(),
});

const fixtureChannelSchema = z.object({
  phrases: z.array(fixturePhraseSchema),
  /**
   * Several speakers in this channel, each through its own telephone path: leg i goes through the named
   * preset, then the legs are summed into the channel, as a PBX records a call in mono. Every phrase's
   * `leg` must name one of them.
   */
  legs: z.array(z.enum(TELEPHONE_PATH_NAMES)).min(1).optional(),
});

/**
 * A fixture script: per channel, phrases and their start times (seconds from the recording's start),
 * and for a channel of several speakers (a mono call) optionally the telephone path of each one's leg.
 */
export const fixtureScriptSchema = z
  .object({
    /** Total length in seconds; default: just after the last phrase. */
    durationSeconds: z.number().positive().optional(),
    sampleRate: z.number().int().min(8000).max(96000).optional(),
    /** Background: digital silence or low noise (about -60 dBFS), per leg when the channel has legs. */
    background: z.enum(['silence', 'noise']).default('silence'),
    channels: z.array(fixtureChannelSchema).min(1),
  })
  .superRefine((script, ctx) => {
    script.channels.forEach((channel, c) => {
      if (!channel.legs) return;
      const legs = channel.legs.length;
      channel.phrases.forEach((p, i) => {
        if (p.leg !== undefined && p.leg >= legs) {
          ctx.addIssue({
            code: 'custom',
            path: ['channels', c, 'phrases', i, 'leg'],
            message: `phrase ${p.id} at ${p.start} s is on leg ${p.leg}, but the channel has ${legs} legs`,
          });
        }
      });
    });
  });
export type FixtureScript = z.infer<typeof fixtureScriptSchema>;
