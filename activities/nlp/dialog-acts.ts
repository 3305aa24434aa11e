/**
 * Speech acts of a call (spec 01: `/nlp/v1/sentence_type`, one sentence a request): greeting, apology,
 * thanking, goodbye, information-seeking… of every unit of the configured grain (text-units.ts), each
 * utterance carrying its unit's (one request per distinct text: unit-requests.ts). They feed the
 * `dialogAct` rules of call insights.
 */
import { dialogActsOutputSchema } from '../../schemas/result.ts';
import { DEFAULT_TEXT_GRAINS } from '../../schemas/text-grains.ts';
import { readCallText } from './call-text.ts';
import { runStep, type NlpActivityDeps } from './step.ts';
import { byUtterance, eachUnit } from './unit-requests.ts';
import { textUnits } from '../../schemas/text-units.ts';
import { DEFAULT_SENTIMENT_CONCURRENCY, type ClassifyDialogActsInput, type NlpStepOutput } from './types.ts';

export async function classifyDialogActs(
  deps: NlpActivityDeps,
  input: ClassifyDialogActsInput,
): Promise<NlpStepOutput> {
  const grain = input.grain ?? 'turn';
  const windowSeconds = input.windowSeconds ?? DEFAULT_TEXT_GRAINS.windowSeconds;
  const inputs = JSON.stringify([input.timelineKey, input.fillersKey ?? null, grain, windowSeconds]);
  return runStep<string[], typeof dialogActsOutputSchema>(
    deps,
    'dialogActs',
    input,
    inputs,
    dialogActsOutputSchema,
    async (run) => {
      const text = await readCallText(deps.store, input);
      const units = textUnits(text.utterances, grain, windowSeconds);
      await eachUnit(run, units, input.concurrency ?? DEFAULT_SENTIMENT_CONCURRENCY, async (text, o) => {
        const res = await deps.service.nlp.sentenceType(text, o);
        return res.result.dialog_act;
      });
      const perUtterance = byUtterance(units, run.done);
      return {
        step: 'dialogActs',
        callId: input.callId,
        grain,
        ...(grain !== 'utterance' ? { windowSeconds } : {}),
        units: units.length,
        utterances: text.timeline.utterances.map((u) => ({
          index: u.index,
          dialogActs: perUtterance.get(u.index) ?? null,
        })),
      };
    },
  );
}
