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

/** Every promise of an object, awaited at once, under its key. */
async function allOf<T extends Record<string, Promise<unknown>>>(
  promises: T,
): Promise<{ [K in keyof T]: Awaited<T[K]> }> {
  const entries = await Promise.all(Object.entries(promises).map(async ([k, p]) => [k, await p] as const));
  return Object.fromEntries(entries) as { [K in keyof T]: Awaited<T[K]> };
}

/** Every staged output the keys name, read at once. */
export async function readStagedOutputs(store: ObjectStore, keys: StagedOutputKeys) {
  const read = <T>(key: string | undefined, schema: { parse(v: unknown): T }) =>
    readStaged(store, key, (v) => schema.parse(v));
  const { timeline, speakers, ...outputs } = await allOf({
    timeline: read(keys.timelineKey, timelineSchema),
    fillers: read(keys.fillersKey, fillersOutputSchema),
    sentiment: read(keys.sentimentKey, sentimentOutputSchema),
    summary: read(keys.summaryKey, summaryOutputSchema),
    keywords: read(keys.keywordsKey, keywordsOutputSchema),
    dialogActs: read(keys.dialogActsKey, dialogActsOutputSchema),
    redaction: read(keys.redactionKey, redactionOutputSchema),
    speakers: read(keys.speakersKey, speakersDocumentSchema),
    reasons: read(keys.reasonsKey, reasonsOutputSchema),
    quality: read(keys.qualityKey, qualityOutputSchema),
    lineClasses: read(keys.lineClassesKey, lineClassesOutputSchema),
  });
  return { timeline: timeline!, ...outputs, speakers: speakers?.roles };
}

export type StagedOutputs = Awaited<ReturnType<typeof readStagedOutputs>>;
