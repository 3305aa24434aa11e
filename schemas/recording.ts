/**
 * What travels in workflow history for one recording: where it is, where its results go, and small
 * facts. Never audio, never whole transcripts (those go through staging storage), never secrets.
 */
import { z } from 'zod';

/** An input recording in object storage. `etag`/`size` make its identity: a changed file is a new call. */
export interface RecordingSource {
  bucket: string;
  key: string;
  etag?: string;
  size?: number;
  /**
   * The object's last-modified time (ISO 8601) as its starter looked it up or listed it: the call's time
   * without a manifest (result.json, the tables' day), so publish need not look the object up again.
   */
  lastModified?: string;
}

/** Where results go: a bucket and a key prefix (`results/`), normalized by schemas/call-keys.ts. */
export const outputLocationSchema = z.object({
  bucket: z.string().min(1),
  prefix: z.string(),
});
export type { OutputLocation } from './call-keys.ts';

/**
 * What a call's workflow knows of redaction: where unredacted copies go, if anywhere, and whether (and
 * how) to write a redacted copy of the audio. Never the rules, terms or patterns: those may themselves
 * be personal, and stay in the workers' configuration.
 */
export const redactionInputSchema = z.object({
  unredacted: outputLocationSchema.optional(),
  audio: z.object({ mask: z.enum(['tone', 'silence']) }).optional(),
});
export type RedactionInput = z.infer<typeof redactionInputSchema>;

/**
 * The stages of a call, in order: kept current in the `progress` query (the `CallpipeStage` search
 * attribute shows its milestones: workflows/call-attributes.ts) and timed in
 * result.json's `processing.wallSeconds`. `insights` (metrics, categories, scorecard) and `publish`
 * (result.json, transcript.vtt, call page) replaced `write`, which did both and stays for runs recorded
 * before them (their histories replay as `write`, their error.json can name it).
 *
 * A stage's name is data (error.json's `stage`, the keys of `processing.wallSeconds`, the `CallpipeStage`
 * search attribute), so it keeps its value when the code is renamed: `analyze` is the text steps after
 * fillers (summary, sentiment, keywords, dialog acts: TEXT_STEPS_STAGE, `textStepsStage` in
 * workflows/process-recording.ts), nothing more.
 */
export const STAGES = [
  'queued',
  'probe',
  'plan',
  'transcode',
  'recognize',
  'merge',
  'speakers',
  'redact',
  'fillers',
  'analyze',
  'insights',
  'publish',
  'write',
  'done',
  'failed',
] as const;
export type Stage = (typeof STAGES)[number];

/** The stage of the text steps after fillers; its stored name is `analyze` (see STAGES). */
export const TEXT_STEPS_STAGE = 'analyze' satisfies Stage;

/**
 * How a call ended, in one vocabulary for the workflow's status, the `CallpipeOutcome` search attribute,
 * `process --json` and the batch report: `done` (every step), `partial` (result.json written, a text step
 * failed: see its `stepFailures`), `failed` (error.json written), `skipped` (done before; nothing run).
 */
export const OUTCOMES = ['done', 'partial', 'failed', 'skipped'] as const;
export type Outcome = (typeof OUTCOMES)[number];
