/**
 * Filler removal over every utterance of a call (spec 01: `/nlp/beta/remove_filler`), batched: one
 * request carries many utterances, each ended by a sentence terminator, with `do_segment: true`, so the
 * service answers one result per sentence (spec 01: "with do_segment true ... one result object per
 * delimited sentence"). Results are mapped back to utterances by position and checked by content: the
 * sentences of one utterance must spell exactly its text (compared loosely, since the service
 * normalizes lengthened sounds). When a batch does not line up (the service split or joined sentences
 * across an utterance boundary), that batch falls back to one request per utterance, so every
 * utterance's text stays its own.
 */
import { fillersOutputSchema, type Filler, type UtteranceFillers } from '../../schemas/result.ts';
import type { Utterance } from '../../schemas/transcript.ts';
import { looseText } from '../../schemas/text-units.ts';
import { readTimeline } from './call-text.ts';
import { runStep, type NlpActivityDeps, type StepRun } from './step.ts';
import {
  DEFAULT_FILLER_BATCH_CHARS,
  DEFAULT_FILLER_BATCH_UTTERANCES,
  type NlpStepOutput,
  type RemoveFillersInput,
} from './types.ts';

/** One sentence of a remove_filler answer (FillerRemovalResult's item, without its extra fields). */
export interface SentenceResult {
  fillers: readonly { begin_pos: number; end_pos: number; form: string }[];
  normalized_sentence: string;
  fixed_sentence: string;
}

/** Sentence ends the service splits at (the client's splitter uses the same set). */
const TERMINATOR = /[。．！？!?]$/u;
/** Pause marks a removed leading filler leaves behind (`、何時に…` in the recorded sample). */
const LEADING_PAUSES = /^[\s、，,]+/u;

/** One utterance as sent: its text with a terminator added when it had none. */
export interface FillerItem {
  index: number;
  text: string;
  /** Whether a `。` was appended (and is taken off the answer again). */
  terminated: boolean;
}

export function fillerItemOf(utterance: Pick<Utterance, 'index' | 'text'>): FillerItem | undefined {
  const text = utterance.text.trim();
  if (looseText(text) === '') return undefined;
  return TERMINATOR.test(text)
    ? { index: utterance.index, text, terminated: false }
    : { index: utterance.index, text: `${text}。`, terminated: true };
}

/** Greedy batches of whole utterances, at most `maxChars` of text and `maxItems` utterances each. */
export function batchItems(items: readonly FillerItem[], maxChars: number, maxItems: number): FillerItem[][] {
  const batches: FillerItem[][] = [];
  let current: FillerItem[] = [];
  let chars = 0;
  for (const item of items) {
    if (current.length > 0 && (chars + item.text.length > maxChars || current.length >= maxItems)) {
      batches.push(current);
      current = [];
      chars = 0;
    }
    current.push(item);
    chars += item.text.length;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/**
 * Which result sentences belong to which item, by position; undefined when the sentences do not spell
 * the items' texts one after another (then the batch is redone utterance by utterance).
 */
export function alignResults(
  items: readonly FillerItem[],
  results: readonly SentenceResult[],
): SentenceResult[][] | undefined {
  const out: SentenceResult[][] = [];
  let j = 0;
  for (const item of items) {
    const target = looseText(item.text);
    const parts: SentenceResult[] = [];
    let spelled = '';
    while (spelled.length < target.length && j < results.length) {
      const part = results[j++]!;
      parts.push(part);
      spelled += looseText(part.normalized_sentence);
    }
    if (spelled !== target) return undefined;
    // Stray empty sentences (a lone terminator) stay with the utterance they follow.
    while (j < results.length && looseText(results[j]!.normalized_sentence) === '') parts.push(results[j++]!);
    out.push(parts);
  }
  return j === results.length ? out : undefined;
}

/** One utterance's sentences joined: normalized and cleaned text, fillers with offsets into the former. */
export function combineSentences(
  index: number,
  parts: readonly SentenceResult[],
  terminated: boolean,
): UtteranceFillers {
  let normalizedText = '';
  let fixed = '';
  const fillers: Filler[] = [];
  for (const part of parts) {
    for (const f of part.fillers) {
      fillers.push({
        text: f.form,
        begin: normalizedText.length + f.begin_pos,
        end: normalizedText.length + f.end_pos,
      });
    }
    normalizedText += part.normalized_sentence;
    fixed += part.fixed_sentence;
  }
  if (terminated) {
    normalizedText = normalizedText.replace(/。$/u, '');
    fixed = fixed.replace(/。$/u, '');
  }
  const length = normalizedText.length;
  return {
    index,
    normalizedText,
    cleanedText: fixed.replace(LEADING_PAUSES, '').trim(),
    fillers: fillers.map((f) => ({ ...f, begin: Math.min(f.begin, length), end: Math.min(f.end, length) })),
  };
}

function untouched(utterance: Utterance): UtteranceFillers {
  const text = utterance.text.trim();
  return { index: utterance.index, normalizedText: text, cleanedText: text, fillers: [] };
}

interface BatchResult {
  utterances: UtteranceFillers[];
  fallback: boolean;
}

async function removeBatch(
  run: StepRun<BatchResult>,
  deps: NlpActivityDeps,
  batch: FillerItem[],
): Promise<BatchResult> {
  const text = batch.map((item) => item.text).join('');
  const res = await run.request((o) => deps.service.nlp.removeFiller(text, { ...o, doSegment: true }));
  const aligned = alignResults(batch, res.result);
  if (aligned) {
    return {
      utterances: batch.map((item, i) => combineSentences(item.index, aligned[i]!, item.terminated)),
      fallback: false,
    };
  }
  const utterances: UtteranceFillers[] = [];
  for (const item of batch) {
    const one = await run.request((o) => deps.service.nlp.removeFiller(item.text, { ...o, doSegment: true }));
    utterances.push(combineSentences(item.index, one.result, item.terminated));
  }
  return { utterances, fallback: batch.length > 1 };
}

export async function removeFillers(
  deps: NlpActivityDeps,
  input: RemoveFillersInput,
): Promise<NlpStepOutput> {
  const maxChars = input.maxBatchChars ?? DEFAULT_FILLER_BATCH_CHARS;
  const maxItems = input.maxBatchUtterances ?? DEFAULT_FILLER_BATCH_UTTERANCES;
  const inputs = JSON.stringify([input.timelineKey, maxChars, maxItems]);
  return runStep<BatchResult, typeof fillersOutputSchema>(
    deps,
    'fillers',
    input,
    inputs,
    fillersOutputSchema,
    async (run) => {
      const timeline = await readTimeline(deps.store, input.timelineKey);
      const items = timeline.utterances.map(fillerItemOf).filter((i): i is FillerItem => i !== undefined);
      const batches = batchItems(items, maxChars, maxItems);
      // One batch after another: each is one request, and the client's p-limit serves every call on
      // this worker; a failure half-way keeps the batches before it (checkpoint).
      for (const [b, batch] of batches.entries()) {
        if (!run.done.has(b)) run.done.set(b, await removeBatch(run, deps, batch));
        run.progress(b + 1, batches.length);
      }
      const byIndex = new Map<number, UtteranceFillers>();
      for (const result of run.done.values()) for (const u of result.utterances) byIndex.set(u.index, u);
      return {
        step: 'fillers',
        callId: input.callId,
        utterances: timeline.utterances.map((u) => byIndex.get(u.index) ?? untouched(u)),
        batches: batches.length,
        fallbacks: [...run.done.values()].filter((r) => r.fallback).length,
      };
    },
  );
}
