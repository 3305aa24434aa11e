/**
 * Summary of a call with the call-center model (spec 03, Summarization: `extract-cc` takes "the dialog
 * record with speaker labels removed and sentences joined in time order"). Documents beyond 5,000
 * characters are summarized hierarchically by the client (service/nlp/summarize.ts).
 */
import { summaryOutputSchema } from '../../schemas/result.ts';
import { readCallText, type CallUtterance } from './call-text.ts';
import { runStep, type NlpActivityDeps } from './step.ts';
import type { NlpStepOutput, SummarizeCallInput } from './types.ts';

/**
 * The dialog as the call-center model wants it: no speaker labels, time order, one utterance a line.
 * An utterance said again word for word (a repeated confirmation, "はい") adds nothing to a summary but
 * weight, and an extractive summary would pick it twice: only its first occurrence is kept.
 */
export function dialogDocument(utterances: readonly CallUtterance[]): string {
  const seen = new Set<string>();
  return utterances
    .map((u) => u.text)
    .filter((text) => text !== '' && !seen.has(text) && seen.add(text))
    .join('\n');
}

export async function summarizeCall(
  deps: NlpActivityDeps,
  input: SummarizeCallInput,
): Promise<NlpStepOutput> {
  const mode = input.mode ?? 'extract-cc';
  const inputs = JSON.stringify([
    input.timelineKey,
    input.fillersKey ?? null,
    mode,
    input.sentLen,
    input.charLen,
  ]);
  return runStep(deps, 'summary', input, inputs, summaryOutputSchema, async (run) => {
    const text = await readCallText(deps.store, input);
    const document = dialogDocument(text.utterances);
    const base = { step: 'summary' as const, callId: input.callId, mode, documentChars: document.length };
    // A call without words has nothing to summarize; that is a fact of the call, not a failure.
    if (document.trim() === '') return { ...base, text: '', levels: 0, windows: 0 };
    const res = await run.request((o) =>
      deps.service.nlp.summarize(document, {
        ...o,
        mode,
        ...(input.sentLen !== undefined ? { sentLen: input.sentLen } : {}),
        ...(input.charLen !== undefined ? { charLen: input.charLen } : {}),
        ...(input.lang !== undefined ? { lang: input.lang } : {}),
        ...(input.maxWindowChars !== undefined ? { maxWindowChars: input.maxWindowChars } : {}),
      }),
    );
    run.progress(1, 1);
    return { ...base, text: res.result.summary, levels: res.result.levels, windows: res.result.windows };
  });
}
