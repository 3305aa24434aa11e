/**
 * How finely text steps that take one sentence a request (sentiment, dialog acts) cut a call: per
 * `utterance`, per `turn` (one speaker's consecutive utterances, at most `windowSeconds` long) or per
 * `window` (a speaker's utterances in fixed windows of `windowSeconds`). Per utterance costs a request
 * each (about 1,330 per audio hour); a turn is what a supervisor reads as one statement, at about half
 * the requests (bench/night prints them per endpoint). Pure TypeScript with no imports: workflow code
 * reads the defaults.
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

export const DEFAULT_TEXT_GRAINS: TextGrains = { sentiment: 'turn', dialogActs: 'turn', windowSeconds: 30 };
