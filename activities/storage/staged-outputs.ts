/**
 * Reading a call's staged outputs (the timeline and the text steps' documents) by the keys the workflow
 * passes, each parsed by its schema: a key left out is a step that failed or did not run.
 */
import {
  dialogActsOutputSchema,
  qualityOutputSchema,
  lineClassesOutputSchema,
  reasonsOutputSchema,
  fillersOutputSchema,
  keywordsOutputSchema,
  redactionOutputSchema,
  sentimentOutputSchema,
  summaryOutputSchema,
} from '../../schemas/result.ts';
import { timelineSchema } from '../../schemas/transcript.ts';
import { speakersDocumentSchema } from '../../schemas/speakers.ts';
import type { ObjectStore } from './object-store.ts';

export async function readStaged<T>(
  store: ObjectStore,
  key: string | undefined,
  parse: (v: unknown) => T,
): Promise<T | undefined> {
  if (!key) return undefined;
  return parse(JSON.parse(await store.getText(key)));
}

/** Staging keys (the store's bucket) of a call's outputs. */
export interface StagedOutputKeys {
  /** The Timeline the text steps read (the redacted one when redaction ran). */
  timelineKey: string;
  /** The redaction step's records; absent for a run from before redaction. */
  redactionKey?: string | undefined;
  fillersKey?: string | undefined;
  sentimentKey?: string | undefined;
  summaryKey?: string | undefined;
  keywordsKey?: string | undefined;
  dialogActsKey?: string | undefined;
  /** The reasons step's output; absent when no model is configured or the step failed. */
  reasonsKey?: string | undefined;
  /** The quality step's output; absent for a run from before it, or when it failed. */
  qualityKey?: string | undefined;
  /** The line classification step's output; absent when the rule file has no classifier rule, or it failed. */
  lineClassesKey?: string | undefined;
  /** The speakers stage's document; absent for a run from before it, or when it could not run. */
  speakersKey?: string | undefined;
}

/** Every staged output the keys name, read at once. */
export async function readStagedOutputs(store: ObjectStore, keys: StagedOutputKeys) {
  const [
    timeline,
    fillers,
    sentiment,
    summary,
    keywords,
    dialogActs,
    redaction,
    speakers,
    reasons,
    quality,
    lineClasses,
  ] = await Promise.all([
    readStaged(store, keys.timelineKey, (v) => timelineSchema.parse(v)),
    readStaged(store, keys.fillersKey, (v) => fillersOutputSchema.parse(v)),
    readStaged(store, keys.sentimentKey, (v) => sentimentOutputSchema.parse(v)),
    readStaged(store, keys.summaryKey, (v) => summaryOutputSchema.parse(v)),
    readStaged(store, keys.keywordsKey, (v) => keywordsOutputSchema.parse(v)),
    readStaged(store, keys.dialogActsKey, (v) => dialogActsOutputSchema.parse(v)),
    readStaged(store, keys.redactionKey, (v) => redactionOutputSchema.parse(v)),
    readStaged(store, keys.speakersKey, (v) => speakersDocumentSchema.parse(v).roles),
    readStaged(store, keys.reasonsKey, (v) => reasonsOutputSchema.parse(v)),
    readStaged(store, keys.qualityKey, (v) => qualityOutputSchema.parse(v)),
    readStaged(store, keys.lineClassesKey, (v) => lineClassesOutputSchema.parse(v)),
  ]);
  return {
    timeline: timeline!,
    fillers,
    sentiment,
    summary,
    keywords,
    dialogActs,
    redaction,
    speakers,
    reasons,
    quality,
    lineClasses,
  };
}

export type StagedOutputs = Awaited<ReturnType<typeof readStagedOutputs>>;
