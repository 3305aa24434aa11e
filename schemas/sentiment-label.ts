/**
 * The label of a mean sentiment value (SENTIMENT_SCORING's scale): the one rule both the sentiment step's
 * aggregates and the insights' sentiment rules apply, so a call's `label` and a rule on it never disagree.
 * Pure.
 */
import { SENTIMENT_NEUTRAL_BAND, type UtteranceSentiment } from './result.ts';

export function labelOfMean(mean: number): UtteranceSentiment['label'] {
  if (mean > SENTIMENT_NEUTRAL_BAND) return 'Positive';
  if (mean < -SENTIMENT_NEUTRAL_BAND) return 'Negative';
  return 'Neutral';
}
