/**
 * Call reasons (spec 03 text classification): the call's text (reasons/reason-text.ts: the customer's
 * words or the summary, the text its model was trained on) classified by the configured model in one
 * request; the best classes with their scores, the model and when it was created. A call with no text
 * sends nothing. A model the service does not know, or one not trained, fails the step alone (the
 * service's `invalid` class): the call is then `partial`, with the reason.
 */
import { callReasonsOf } from '../reasons/classify-result.ts';
import { reasonsOutputSchema, summaryOutputSchema } from '../../schemas/result.ts';
import type { ServiceClient } from '../../service/index.ts';
import { reasonText } from '../reasons/reason-text.ts';
import { readCallText } from './call-text.ts';
import { runStep, type NlpActivityDeps, type StepRun } from './step.ts';
import type { ClassifyReasonsInput, NlpStepOutput } from './types.ts';

/**
 * When each model was created, as the service lists it: one list request per model and process, not
 * one per call (a model's creation time never changes).
 */
const trainedAt = new Map<string, string | null>();

async function createdAt(service: ServiceClient, run: StepRun<never>, model: string): Promise<string | null> {
  if (!trainedAt.has(model)) {
    const { result } = await run.request((o) => service.classifier.list(o));
    for (const m of result) trainedAt.set(m.model_id, m.created_at);
    if (!trainedAt.has(model)) trainedAt.set(model, null);
  }
  return trainedAt.get(model) ?? null;
}

async function textOf(deps: NlpActivityDeps, input: ClassifyReasonsInput): Promise<string> {
  const call = await readCallText(deps.store, input);
  const summary = input.summaryKey
    ? summaryOutputSchema.parse(JSON.parse(await deps.store.getText(input.summaryKey)))
    : undefined;
  return reasonText(
    { utterances: call.utterances.map((u) => ({ speaker: u.utterance.speaker, text: u.text })), summary },
    input,
  );
}

export async function classifyReasons(
  deps: NlpActivityDeps,
  input: ClassifyReasonsInput,
): Promise<NlpStepOutput> {
  const inputs = JSON.stringify([
    input.timelineKey,
    input.fillersKey ?? null,
    input.summaryKey ?? null,
    input.model,
    input.text,
    input.chars,
  ]);
  return runStep<never, typeof reasonsOutputSchema>(
    deps,
    'reasons',
    input,
    inputs,
    reasonsOutputSchema,
    async (run) => {
      const base = { step: 'reasons' as const, callId: input.callId };
      const text = await textOf(deps, input);
      if (text === '') return { ...base, reasons: null };
      const { result } = await run.request((o) => deps.service.classifier.classify(input.model, text, o));
      const asked = { model: input.model, text: input.text, chars: input.chars };
      const reasons = callReasonsOf(result, asked, text, await createdAt(deps.service, run, input.model));
      run.progress(1, 1);
      return { ...base, reasons };
    },
  );
}
