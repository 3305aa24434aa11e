/**
 * Transcript quality's text step (schemas/transcript-quality.ts): misrecognition detection (spec 01,
 * `/nlp/beta/detect_misrecognition`) of the utterances recognized with a confidence below the call's
 * `checkBelow`, one request per distinct text (unit-requests.ts), so a clean call costs nothing and a
 * noisy one a request per doubtful utterance. Progress is kept per utterance: a retried attempt sends
 * only what is left. The text is the redacted one; corrections are stored beside it and never applied.
 */
import type { MisrecognitionResult } from '../../schemas/service-nlp.ts';
import { qualityOutputSchema } from '../../schemas/result.ts';
import type { Misrecognition, QualitySettings } from '../../schemas/transcript-quality.ts';
import { readTimeline } from './call-text.ts';
import { runStep, type NlpActivityDeps } from './step.ts';
import { answerDistinct } from './unit-requests.ts';
import type { NlpStepInput, NlpStepOutput } from './types.ts';

export interface CheckQualityInput extends NlpStepInput, QualitySettings {}

const unit = (x: number) => Math.min(1, Math.max(0, x));

/** The service's answer in result.json's terms (positions, scores, corrections best first). */
function misrecognitionOf(result: MisrecognitionResult): Misrecognition {
  return {
    score: unit(result.score),
    candidates: result.candidates.map((c) => ({
      begin: c.begin_pos,
      end: c.end_pos,
      text: c.form,
      score: unit(c.detect_score),
      corrections: [...c.correction]
        .sort((a, b) => b.correct_score - a.correct_score)
        .map((k) => ({ text: k.form, score: unit(k.correct_score) })),
    })),
  };
}

export async function checkQuality(deps: NlpActivityDeps, input: CheckQualityInput): Promise<NlpStepOutput> {
  const settings = { checkBelow: input.checkBelow, reviewBelow: input.reviewBelow };
  const inputs = JSON.stringify([input.timelineKey, settings]);
  return runStep<Misrecognition, typeof qualityOutputSchema>(
    deps,
    'quality',
    input,
    inputs,
    qualityOutputSchema,
    async (run) => {
      const timeline = await readTimeline(deps.store, input.timelineKey);
      const doubtful = timeline.utterances.filter(
        (u) => (u.confidence ?? 1) < settings.checkBelow && u.text.trim() !== '',
      );
      // One at a time, as before; an utterance said again word for word shares its answer.
      await answerDistinct(
        run,
        doubtful.map((u) => ({ key: u.index, asks: u.text })),
        1,
        async (ask, o) => misrecognitionOf((await deps.service.nlp.detectMisrecognition(ask.asks, o)).result),
      );
      const utterances = doubtful.map((u) => ({ index: u.index, misrecognition: run.done.get(u.index)! }));
      return { step: 'quality' as const, callId: input.callId, settings, utterances };
    },
  );
}
