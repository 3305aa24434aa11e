/**
 * Which transcripts can be trusted (docs/results.md, "Transcript quality"): misrecognition detection
 * (spec 01, beta) of the utterances recognized with a low confidence, and the call's transcript quality
 * from recognition confidence and those scores, weighted by duration. A call below the configured score
 * needs review, and its automated scorecard answers are marked unreliable rather than reported as facts.
 */
import { z } from 'zod';

/** Utterances recognized with a confidence below this are checked for misrecognition. */
export const DEFAULT_CHECK_BELOW = 0.6;
/** A call whose quality score is below this needs review. */
export const DEFAULT_REVIEW_BELOW = 0.75;
/** Levels of a call's score: high from 0.9, medium from 0.75, low below. */
const QUALITY_LEVELS = ['high', 'medium', 'low'] as const;
const LEVEL_FLOORS = { high: 0.9, medium: 0.75 } as const;
/** An utterance is marked low quality from this misrecognition score. */
const LOW_UTTERANCE_SCORE = 0.5;

export const misrecognitionSchema = z
  .object({
    score: z.number().min(0).max(1).describe('how misrecognized the utterance is, 0–1 (the service’s)'),
    candidates: z
      .array(
        z.object({
          begin: z.number().int().nonnegative().describe('character offset in the utterance text'),
          end: z.number().int().nonnegative(),
          text: z.string().describe('the suspect span as recognized'),
          score: z.number().min(0).max(1),
          corrections: z
            .array(z.object({ text: z.string(), score: z.number().min(0).max(1) }))
            .describe('suggested corrections, best first: shown beside the text, never applied'),
        }),
      )
      .describe('suspect spans'),
  })
  .meta({ id: 'Misrecognition' });
export type Misrecognition = z.infer<typeof misrecognitionSchema>;

export const transcriptQualitySchema = z
  .object({
    score: z.number().min(0).max(1).describe('duration-weighted mean of confidence × (1 − misrecognition)'),
    level: z.enum(QUALITY_LEVELS),
    needsReview: z.boolean().describe('score below reviewBelow: automated answers are not facts'),
    reviewBelow: z.number().min(0).max(1),
    checkBelow: z.number().min(0).max(1).describe('utterances below this confidence were checked'),
    checked: z.number().int().nonnegative().describe('utterances checked for misrecognition'),
    lowUtterances: z.number().int().nonnegative().describe('utterances marked low quality'),
  })
  .meta({ id: 'TranscriptQuality' });
export type TranscriptQuality = z.infer<typeof transcriptQualitySchema>;

/** The quality step's settings (config `insights`), carried in the call's spec. */
export const qualitySettingsSchema = z.object({
  checkBelow: z.number().min(0).max(1),
  reviewBelow: z.number().min(0).max(1),
});
export type QualitySettings = z.infer<typeof qualitySettingsSchema>;

function levelOf(score: number): TranscriptQuality['level'] {
  return score >= LEVEL_FLOORS.high ? 'high' : score >= LEVEL_FLOORS.medium ? 'medium' : 'low';
}

interface RatedUtterance {
  start: number;
  end: number;
  confidence?: number | undefined;
  misrecognition?: Misrecognition | undefined;
}

/** An utterance is low quality: its misrecognition score is high, or it was not checked yet unsure. */
export function lowQuality(u: RatedUtterance, checkBelow: number): boolean {
  if (u.misrecognition) return u.misrecognition.score >= LOW_UTTERANCE_SCORE;
  return (u.confidence ?? 1) < checkBelow;
}

/** The call's quality from its utterances (in any order); a call with no speech is of high quality. */
export function transcriptQualityOf(
  utterances: readonly RatedUtterance[],
  settings: QualitySettings,
): TranscriptQuality {
  let weight = 0;
  let sum = 0;
  for (const u of utterances) {
    const seconds = Math.max(0.01, u.end - u.start);
    const q = (u.confidence ?? 1) * (1 - (u.misrecognition?.score ?? 0));
    weight += seconds;
    sum += q * seconds;
  }
  const score = weight > 0 ? Math.round((sum / weight) * 1000) / 1000 : 1;
  return {
    score,
    level: levelOf(score),
    needsReview: score < settings.reviewBelow,
    reviewBelow: settings.reviewBelow,
    checkBelow: settings.checkBelow,
    checked: utterances.filter((u) => u.misrecognition).length,
    lowUtterances: utterances.filter((u) => lowQuality(u, settings.checkBelow)).length,
  };
}
