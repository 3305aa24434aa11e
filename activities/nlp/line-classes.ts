/**
 * Line classification (spec 03 text classification, for the rule file's classifier rules): each line of
 * a (model, speaker) pair's speaker classified by the model, one request per distinct line and model
 * (unit-requests.ts), so the cost is bounded by the speaker's lines times the file's models (at most
 * RULE_FILE_LIMITS.classifierModels).
 * The text is the redacted, cleaned one (what the steps after filler removal read). Progress is kept per
 * utterance: a retried attempt sends only what is left. A model the service does not know, or one not
 * trained, fails the step alone: the call is then `partial` and its classifier rules are unavailable.
 */
import { lineClassesOutputSchema, type LineClasses } from '../../schemas/result.ts';
import type { LineClassifier } from '../../schemas/rules.ts';
import { readCallText } from './call-text.ts';
import { runStep, type NlpActivityDeps } from './step.ts';
import { answerDistinct } from './unit-requests.ts';
import type { NlpStepInput, NlpStepOutput } from './types.ts';

export interface ClassifyLinesInput extends NlpStepInput {
  fillersKey?: string | undefined;
  /** The rule file's (model, speaker) pairs (schemas/rules.ts, lineClassifiers). */
  classifiers: LineClassifier[];
}

export async function classifyLines(
  deps: NlpActivityDeps,
  input: ClassifyLinesInput,
): Promise<NlpStepOutput> {
  const { classifiers } = input;
  const inputs = JSON.stringify([input.timelineKey, input.fillersKey ?? null, classifiers]);
  return runStep<LineClasses, typeof lineClassesOutputSchema>(
    deps,
    'lineClasses',
    input,
    inputs,
    lineClassesOutputSchema,
    async (run) => {
      const call = await readCallText(deps.store, input);
      const lines = call.utterances
        .filter((u) => u.text !== '')
        .map((u) => ({
          index: u.utterance.index,
          text: u.text,
          models: [
            ...new Set(classifiers.filter((c) => c.speaker === u.utterance.speaker).map((c) => c.model)),
          ],
        }))
        .filter((l) => l.models.length > 0);
      // A line said again word for word, to the same models, shares its scores (unit-requests.ts).
      const asks = lines.map((l) => ({ ...l, key: l.index, asks: JSON.stringify([l.models, l.text]) }));
      await answerDistinct(run, asks, 1, async (line) => {
        const scores: LineClasses = {};
        for (const model of line.models) {
          const { result } = await run.request((o) => deps.service.classifier.classify(model, line.text, o));
          scores[model] = Object.fromEntries(result.map((r) => [r.class, r.score]));
        }
        return scores;
      });
      const utterances = lines.map((l) => ({ index: l.index, lineClasses: run.done.get(l.index)! }));
      return { step: 'lineClasses' as const, callId: input.callId, classifiers, utterances };
    },
  );
}
