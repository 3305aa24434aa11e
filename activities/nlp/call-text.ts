/**
 * The text of a call as the steps after filler removal see it: the Timeline's utterances in time order,
 * each with its cleaned text when the fillers step ran (else the recognized text).
 */
import { fillersOutputSchema } from '../../schemas/result.ts';
import { timelineSchema, type Timeline, type Utterance } from '../../schemas/transcript.ts';
import type { ObjectStore } from '../storage/object-store.ts';

export interface CallUtterance {
  utterance: Utterance;
  /** Cleaned text (fillers removed) or, without a fillers output, the recognized text; trimmed. */
  text: string;
}

export interface CallText {
  timeline: Timeline;
  /** Every utterance of the timeline, sorted by start (then index). */
  utterances: CallUtterance[];
}

export async function readTimeline(store: ObjectStore, key: string): Promise<Timeline> {
  return timelineSchema.parse(JSON.parse(await store.getText(key)));
}

/** Utterances in time order: the timeline is sorted already, but the order is what summaries rely on. */
export function inTimeOrder(utterances: readonly Utterance[]): Utterance[] {
  return [...utterances].sort((a, b) => a.start - b.start || a.index - b.index);
}

export async function readCallText(
  store: ObjectStore,
  input: { timelineKey: string; fillersKey?: string | undefined },
): Promise<CallText> {
  const timeline = await readTimeline(store, input.timelineKey);
  const cleaned = new Map<number, string>();
  if (input.fillersKey) {
    const fillers = fillersOutputSchema.parse(JSON.parse(await store.getText(input.fillersKey)));
    for (const u of fillers.utterances) cleaned.set(u.index, u.cleanedText);
  }
  return {
    timeline,
    utterances: inTimeOrder(timeline.utterances).map((utterance) => ({
      utterance,
      text: (cleaned.get(utterance.index) ?? utterance.text).trim(),
    })),
  };
}
