/**
 * How finely text steps that take one sentence a request (sentiment, dialog acts) cut a call: per
 * `utterance`, per `turn` (one speaker's consecutive utterances, at most `windowSeconds` long) or per
 * `window` (a speaker's utterances in fixed windows of `windowSeconds`). Pure TypeScript with no imports:
 * workflow code reads the defaults.
 *
 * The defaults keep every text step on within the text-request budget of 1,360 requests per audio hour
 * (sentiment alone, per utterance, would spend nearly all of it: bench/README.md). Dialog acts go per turn: they are the
 * function of a statement (a greeting, a question, an apology), which a turn delimits and rules count.
 * Sentiment goes per window: it is read as a curve per speaker, per quarter and per call, and as
 * "negative more than once", for which a speaker's 30 s is the resolution, and per turn it would cost as
 * much as dialog acts again (a stereo call has about three times as many turns as windows: bench/README.md).
 */
export const TEXT_GRAINS = ['utterance', 'turn', 'window'] as const;
export type TextGrain = (typeof TEXT_GRAINS)[number];

export interface TextGrains {
  sentiment: TextGrain;
  /** `off`: no dialog acts (rules on them are "unavailable"). */
  dialogActs: TextGrain | 'off';
  /** Length of a window, and the longest turn, seconds. */
  windowSeconds: number;
}

export const DEFAULT_TEXT_GRAINS: TextGrains = { sentiment: 'window', dialogActs: 'turn', windowSeconds: 30 };
