/**
 * The outputs of a call (DESIGN.md, Output): `writeResult` assembles `result.json` from the staged
 * Timeline, the text steps' outputs and the facts the workflow gathered, validates it
 * (schemas/result.ts), writes `<prefix>/<callId>/transcript.vtt` and then `result.json` LAST, so its
 * presence means the call is done. `writeError` writes `error.json` instead when a call failed.
 * Both are idempotent (a repeat writes the same objects again) and never write outside
 * `<prefix>/<callId>/`.
 *
 * The pure parts (`buildResult`, `talkTimeBySpeaker`, `toWebVtt`, the key helpers) are exported for
 * unit tests and for tools that rebuild a result.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ZodError } from 'zod';
import {
  errorDocumentSchema,
  fillersOutputSchema,
  keywordsOutputSchema,
  RESULT_SCHEMA_VERSION,
  resultDocumentSchema,
  sentimentOutputSchema,
  summaryOutputSchema,
  type AudioFacts,
  type EndpointCost,
  type ErrorDocument,
  type FillersOutput,
  type KeywordsOutput,
  type ProcessingFacts,
  type ResultDocument,
  type ResultUtterance,
  type SentimentOutput,
  type SessionFacts,
  type SourceFacts,
  type SpeakerTalk,
  type SummaryOutput,
  type Talk,
} from '../../schemas/result.ts';
import { timelineSchema, type Timeline, type Utterance } from '../../schemas/transcript.ts';
import type { ObjectStore } from './object-store.ts';
import { assertSafeCallId, KeyError, type CallOutputKeys } from '../../schemas/call-keys.ts';
import { toWebVtt } from './webvtt.ts';

export { toWebVtt, vttTimestamp } from './webvtt.ts';

// --- inputs --------------------------------------------------------------------------------------------

/** The recording: `uri`, or the bucket and key of an object (RecordingSource fits). */
export interface SourceInput {
  uri?: string | undefined;
  bucket?: string | undefined;
  key?: string | undefined;
  etag?: string | undefined;
  size?: number | undefined;
  sizeBytes?: number | undefined;
  lastModified?: string | undefined;
  fingerprint?: string | undefined;
  metadata?: Record<string, string> | undefined;
}

/** Audio facts: the media probe's result fits (its local path is not copied). */
export interface AudioInput {
  durationSeconds: number;
  sampleRate: number;
  channels: number;
  container?: string | undefined;
  codec?: string | undefined;
  sizeBytes?: number | undefined;
  hasVideo?: boolean | undefined;
  fingerprint?: string | undefined;
  tracks?: AudioFacts['tracks'];
}

/** A planned session (PlanSession fits) and what recognizing it took. */
export interface SessionInput {
  index: number;
  track: number;
  speaker: string;
  start: number;
  end: number;
  cut: SessionFacts['cut'];
  silence: SessionFacts['silence'];
  channel?: number | 'mix' | undefined;
  audioKey?: string | undefined;
  restarts?: number | undefined;
  restartReasons?: string[] | undefined;
  /** Audio sent again because of restarts (either name). */
  reStreamedSeconds?: number | undefined;
  reStreamedAudioSeconds?: number | undefined;
  audioSecondsSent?: number | undefined;
  reused?: boolean | undefined;
}

export interface ProcessingInput {
  workflowId?: string | undefined;
  runId?: string | undefined;
  batchId?: string | undefined;
  startedAt?: string | undefined;
  finishedAt?: string | undefined;
  /** Requests per endpoint or step as the workflow counted them; the staged step outputs' costs replace their entries. */
  requests?: Record<string, number | EndpointCost> | undefined;
  retries?: number | undefined;
  restarts?: number | undefined;
  reStreamedSeconds?: number | undefined;
  reStreamedAudioSeconds?: number | undefined;
  /** Wall time per stage, in milliseconds or in seconds. */
  stageMs?: Record<string, number> | undefined;
  wallSeconds?: Record<string, number> | undefined;
  /** Wall time of the whole run, ms (reported as `wallSeconds.total`). */
  wallMs?: number | undefined;
}

export interface ResultFacts {
  source: SourceInput;
  audio: AudioInput;
  /** The session plan, for the tracks (which channels each speaker was heard on). */
  plan?: { tracks: { track: number; speaker: string; sourceChannels: number[] }[] } | undefined;
  sessions: SessionInput[];
  processing: ProcessingInput;
}

export interface WriteResultInput {
  callId: string;
  /** The call's output keys (schemas/call-keys.ts). */
  output: CallOutputKeys;
  /** Staging keys (store's bucket): the Timeline, and the outputs of the steps that succeeded. */
  timelineKey: string;
  fillersKey?: string | undefined;
  sentimentKey?: string | undefined;
  summaryKey?: string | undefined;
  keywordsKey?: string | undefined;
  stepFailures: { step: string; reason: string }[];
  facts: ResultFacts;
}

export interface WriteResultOutput {
  bucket: string;
  resultKey: string;
  vttKey: string;
  utterances: number;
}

export interface WriteErrorInput {
  callId: string;
  /** The call's output keys (schemas/call-keys.ts). */
  output: CallOutputKeys;
  source: SourceInput;
  stage: string;
  reason: string;
  /** ISO time of the failure; default now. */
  at?: string | undefined;
  workflowId?: string | undefined;
  runId?: string | undefined;
}

export interface WriteErrorOutput {
  bucket: string;
  errorKey: string;
}

// --- pure assembly -------------------------------------------------------------------------------------

/** Tokens and secrets never belong in an output, whatever an upstream message carried. */
export function redact(text: string): string {
  return text
    .replace(/(bearer\s+)[A-Za-z0-9._~+/=-]+/gi, '$1[redacted]')
    .replace(/((?:client_?secret|access_?token|token)["']?\s*[:=]\s*["']?)[^\s"',}]+/gi, '$1[redacted]');
}

interface Interval {
  start: number;
  end: number;
}

/** Sorted, overlap-free union of intervals. */
function union(intervals: readonly Interval[]): Interval[] {
  const sorted = intervals.filter((i) => i.end > i.start).sort((a, b) => a.start - b.start);
  const out: Interval[] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last && i.start <= last.end) last.end = Math.max(last.end, i.end);
    else out.push({ ...i });
  }
  return out;
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/**
 * Talk time per speaker (the union of its utterances, so its own overlaps count once), silence per
 * speaker (the call's length minus its talk), silence of the call (nobody talks) and overlap (two or
 * more talk at once). Times are clamped to [0, duration].
 */
export function talkTimeBySpeaker(
  utterances: readonly Pick<Utterance, 'speaker' | 'start' | 'end'>[],
  durationSeconds: number,
  speakers: readonly string[] = [],
): Talk {
  const duration = Math.max(durationSeconds, 0);
  const clamp = (u: Interval): Interval => ({
    start: Math.min(Math.max(u.start, 0), duration),
    end: Math.min(Math.max(u.end, 0), duration),
  });
  const names = [...new Set([...speakers, ...utterances.map((u) => u.speaker)])];
  const perSpeaker = new Map(
    names.map((s) => [s, union(utterances.filter((u) => u.speaker === s).map(clamp))]),
  );
  const bySpeaker: SpeakerTalk[] = names.map((speaker) => {
    const talk = perSpeaker.get(speaker)!.reduce((sum, i) => sum + (i.end - i.start), 0);
    return {
      speaker,
      utterances: utterances.filter((u) => u.speaker === speaker).length,
      talkSeconds: round3(talk),
      silenceSeconds: round3(Math.max(0, duration - talk)),
      talkShare: duration > 0 ? Math.min(1, round3(talk / duration)) : 0,
    };
  });
  // Sweep over every speaker's merged intervals: depth ≥ 1 is talk, ≥ 2 is overlap.
  const events = [...perSpeaker.values()]
    .flat()
    .flatMap((i) => [
      { t: i.start, d: 1 },
      { t: i.end, d: -1 },
    ])
    .sort((a, b) => a.t - b.t || a.d - b.d);
  let depth = 0;
  let last = 0;
  let anyTalk = 0;
  let overlap = 0;
  for (const e of events) {
    if (depth >= 1) anyTalk += e.t - last;
    if (depth >= 2) overlap += e.t - last;
    depth += e.d;
    last = e.t;
  }
  return {
    bySpeaker,
    silenceSeconds: round3(Math.max(0, duration - anyTalk)),
    overlapSeconds: round3(overlap),
  };
}

function sourceFacts(source: SourceInput): SourceFacts {
  const uri =
    source.uri ?? (source.bucket && source.key ? `s3://${source.bucket}/${source.key}` : source.key);
  return {
    uri: uri ?? 'unknown',
    ...(source.bucket !== undefined ? { bucket: source.bucket } : {}),
    ...(source.key !== undefined ? { key: source.key } : {}),
    ...(source.etag !== undefined ? { etag: source.etag } : {}),
    ...((source.sizeBytes ?? source.size) !== undefined
      ? { sizeBytes: source.sizeBytes ?? source.size }
      : {}),
    ...(source.lastModified !== undefined ? { lastModified: source.lastModified } : {}),
    ...(source.fingerprint !== undefined ? { fingerprint: source.fingerprint } : {}),
    ...(source.metadata && Object.keys(source.metadata).length > 0 ? { metadata: source.metadata } : {}),
  };
}

function audioFacts(audio: AudioInput, plan: ResultFacts['plan']): AudioFacts {
  const tracks =
    audio.tracks ??
    plan?.tracks.map((t) => ({ track: t.track, speaker: t.speaker, sourceChannels: t.sourceChannels }));
  return {
    durationSeconds: audio.durationSeconds,
    sampleRate: audio.sampleRate,
    channels: audio.channels,
    ...(audio.container !== undefined ? { container: audio.container } : {}),
    ...(audio.codec !== undefined ? { codec: audio.codec } : {}),
    ...(audio.sizeBytes !== undefined ? { sizeBytes: audio.sizeBytes } : {}),
    ...(audio.hasVideo !== undefined ? { hasVideo: audio.hasVideo } : {}),
    ...(tracks ? { tracks } : {}),
  };
}

function sessionFacts(sessions: readonly SessionInput[], utterances: readonly Utterance[]): SessionFacts[] {
  return sessions.map((s) => ({
    index: s.index,
    track: s.track,
    speaker: s.speaker,
    start: s.start,
    end: s.end,
    cut: s.cut,
    silence: s.silence,
    restarts: s.restarts ?? 0,
    reStreamedAudioSeconds: s.reStreamedAudioSeconds ?? s.reStreamedSeconds ?? 0,
    ...(s.restartReasons ? { restartReasons: s.restartReasons.map(redact) } : {}),
    ...(s.audioSecondsSent !== undefined ? { audioSecondsSent: s.audioSecondsSent } : {}),
    ...(s.reused !== undefined ? { reused: s.reused } : {}),
    utterances: utterances.filter((u) => u.session === s.index).length,
  }));
}

function toCost(value: number | EndpointCost): EndpointCost {
  return typeof value === 'number' ? { requests: value, retries: 0 } : value;
}

function processingFacts(
  processing: ProcessingInput,
  sessions: readonly SessionFacts[],
  steps: Partial<Record<'fillers' | 'summary' | 'sentiment' | 'keywords', EndpointCost>>,
): ProcessingFacts {
  const requests: Record<string, EndpointCost> = {};
  for (const [name, value] of Object.entries(processing.requests ?? {})) requests[name] = toCost(value);
  // The staged outputs carry the steps' measured cost (every attempt, bytes included).
  for (const [name, cost] of Object.entries(steps)) if (cost) requests[name] = cost;
  const entries = Object.values(requests);
  const wallSeconds: Record<string, number> = { ...(processing.wallSeconds ?? {}) };
  for (const [stage, ms] of Object.entries(processing.stageMs ?? {}))
    wallSeconds[stage] ??= round3(ms / 1000);
  if (processing.wallMs !== undefined) wallSeconds.total ??= round3(processing.wallMs / 1000);
  const optional = (key: 'workflowId' | 'runId' | 'batchId' | 'startedAt' | 'finishedAt') =>
    processing[key] !== undefined ? { [key]: processing[key] } : {};
  return {
    ...optional('workflowId'),
    ...optional('runId'),
    ...optional('batchId'),
    ...optional('startedAt'),
    ...optional('finishedAt'),
    requests,
    totalRequests: entries.reduce((n, c) => n + c.requests, 0),
    retries: Math.max(
      processing.retries ?? 0,
      entries.reduce((n, c) => n + c.retries, 0),
    ),
    restarts: processing.restarts ?? sessions.reduce((n, s) => n + s.restarts, 0),
    reStreamedAudioSeconds: round3(
      processing.reStreamedAudioSeconds ??
        processing.reStreamedSeconds ??
        sessions.reduce((n, s) => n + s.reStreamedAudioSeconds, 0),
    ),
    wallSeconds,
  };
}

export interface ResultParts {
  callId: string;
  timeline: Timeline;
  fillers?: FillersOutput | undefined;
  sentiment?: SentimentOutput | undefined;
  summary?: SummaryOutput | undefined;
  keywords?: KeywordsOutput | undefined;
  stepFailures: { step: string; reason: string }[];
  facts: ResultFacts;
  /** ISO time the document is written at; default now. */
  writtenAt?: string;
}

/** The result document, validated: throws a ZodError naming the first field at fault. */
export function buildResult(parts: ResultParts): ResultDocument {
  const { timeline, fillers, sentiment, summary, keywords, facts } = parts;
  const cleaned = new Map(fillers?.utterances.map((u) => [u.index, u]));
  const felt = new Map(sentiment?.utterances.map((u) => [u.index, u.sentiment]));
  const ordered = [...timeline.utterances].sort((a, b) => a.start - b.start || a.index - b.index);
  const utterances: ResultUtterance[] = ordered.map((u) => {
    const f = cleaned.get(u.index);
    return {
      index: u.index,
      speaker: u.speaker,
      track: u.track,
      session: u.session,
      start: u.start,
      end: u.end,
      text: u.text,
      ...(u.score !== undefined ? { confidence: u.score } : {}),
      normalizedText: f ? f.normalizedText : null,
      cleanedText: f ? f.cleanedText : null,
      fillers: f ? f.fillers : [],
      sentiment: felt.get(u.index) ?? null,
    };
  });
  const duration = facts.audio.durationSeconds || timeline.durationSeconds;
  const speakers = [...new Set([...timeline.speakers, ...timeline.utterances.map((u) => u.speaker)])];
  const sessions = sessionFacts(facts.sessions, timeline.utterances);
  const document = {
    schemaVersion: RESULT_SCHEMA_VERSION,
    callId: parts.callId,
    source: sourceFacts(facts.source),
    audio: audioFacts(facts.audio, facts.plan),
    speakers,
    sessions,
    utterances,
    talk: talkTimeBySpeaker(timeline.utterances, duration, speakers),
    sentiment: sentiment
      ? {
          scoring: sentiment.scoring,
          overall: sentiment.overall,
          bySpeaker: sentiment.bySpeaker,
          byQuarter: sentiment.byQuarter,
        }
      : null,
    summary: summary
      ? {
          text: summary.text,
          mode: summary.mode,
          levels: summary.levels,
          windows: summary.windows,
          documentChars: summary.documentChars,
        }
      : null,
    keywords: keywords ? keywords.keywords : null,
    processing: processingFacts(facts.processing, sessions, {
      ...(fillers ? { fillers: fillers.cost } : {}),
      ...(summary ? { summary: summary.cost } : {}),
      ...(sentiment ? { sentiment: sentiment.cost } : {}),
      ...(keywords ? { keywords: keywords.cost } : {}),
    }),
    stepFailures: parts.stepFailures.map((f) => ({ step: f.step, reason: redact(f.reason) })),
    writtenAt: parts.writtenAt ?? new Date().toISOString(),
  };
  return resultDocumentSchema.parse(document);
}

export function buildErrorDocument(input: WriteErrorInput, now = new Date()): ErrorDocument {
  return errorDocumentSchema.parse({
    schemaVersion: RESULT_SCHEMA_VERSION,
    callId: input.callId,
    source: sourceFacts(input.source),
    stage: input.stage,
    reason: redact(input.reason).slice(0, 4000) || 'unknown',
    at: input.at ?? now.toISOString(),
    ...(input.workflowId !== undefined ? { workflowId: input.workflowId } : {}),
    ...(input.runId !== undefined ? { runId: input.runId } : {}),
  });
}

// --- activities ----------------------------------------------------------------------------------------

/** A document that cannot be valid however often it is retried: a bug upstream, said plainly. */
function invalidDocument(what: string, err: ZodError): ApplicationFailure {
  const issue = err.issues[0];
  const where = issue?.path.length ? issue.path.join('.') : '(document)';
  return ApplicationFailure.create({
    type: 'InvalidResultDocument',
    message: `${what}: ${where}: ${issue?.message ?? 'invalid'}`,
    nonRetryable: true,
  });
}

function nonRetryable(err: unknown): unknown {
  if (err instanceof KeyError) {
    return ApplicationFailure.create({ type: err.name, message: err.message, nonRetryable: true });
  }
  if (err instanceof Error && err.name === 'ZodError')
    return invalidDocument('result document', err as ZodError);
  return err;
}

export interface ResultActivityDeps {
  /** Staging storage (the Timeline and step outputs); outputs go to its bucket unless the target names another. */
  store: ObjectStore;
}

async function readStaged<T>(
  store: ObjectStore,
  key: string | undefined,
  parse: (v: unknown) => T,
): Promise<T | undefined> {
  if (!key) return undefined;
  return parse(JSON.parse(await store.getText(key)));
}

export function createResultActivities({ store }: ResultActivityDeps) {
  const target = (keys: CallOutputKeys) =>
    keys.bucket !== store.bucket ? store.withBucket(keys.bucket) : store;
  /** The keys are built by schemas/call-keys.ts; a caller-chosen call id is checked again here. */
  const outputKeys = (input: { callId: string; output: CallOutputKeys }) => {
    assertSafeCallId(input.callId);
    if (!input.output.dir.endsWith(`${input.callId}/`)) {
      throw new KeyError(`output keys of ${JSON.stringify(input.output.dir)} are not call ${input.callId}'s`);
    }
    return input.output;
  };

  return {
    /** Writes `transcript.vtt`, then `result.json` (last: its presence means done). */
    async writeResult(input: WriteResultInput): Promise<WriteResultOutput> {
      try {
        const keys = outputKeys(input);
        const { result: resultKey, transcript: vttKey, error: errorKey } = keys;
        const [timeline, fillers, sentiment, summary, keywords] = await Promise.all([
          readStaged(store, input.timelineKey, (v) => timelineSchema.parse(v)),
          readStaged(store, input.fillersKey, (v) => fillersOutputSchema.parse(v)),
          readStaged(store, input.sentimentKey, (v) => sentimentOutputSchema.parse(v)),
          readStaged(store, input.summaryKey, (v) => summaryOutputSchema.parse(v)),
          readStaged(store, input.keywordsKey, (v) => keywordsOutputSchema.parse(v)),
        ]);
        const result = buildResult({
          callId: input.callId,
          timeline: timeline!,
          fillers,
          sentiment,
          summary,
          keywords,
          stepFailures: input.stepFailures,
          facts: input.facts,
        });
        const out = target(keys);
        await out.put(vttKey, toWebVtt(result.utterances), { contentType: 'text/vtt; charset=utf-8' });
        await out.put(resultKey, `${JSON.stringify(result, null, 2)}\n`, {
          contentType: 'application/json; charset=utf-8',
        });
        // An error.json of an earlier failed run would contradict the result now beside it.
        if (await out.exists(errorKey)) await out.deletePrefix(errorKey);
        return { bucket: out.bucket, resultKey, vttKey, utterances: result.utterances.length };
      } catch (err) {
        throw nonRetryable(err);
      }
    },

    /** Writes `error.json` (stage and reason) for a call that failed. */
    async writeError(input: WriteErrorInput): Promise<WriteErrorOutput> {
      try {
        const keys = outputKeys(input);
        const errorKey = keys.error;
        const document = buildErrorDocument(input);
        const out = target(keys);
        await out.put(errorKey, `${JSON.stringify(document, null, 2)}\n`, {
          contentType: 'application/json; charset=utf-8',
        });
        return { bucket: out.bucket, errorKey };
      } catch (err) {
        throw nonRetryable(err);
      }
    },
  };
}

export type ResultActivities = ReturnType<typeof createResultActivities>;
