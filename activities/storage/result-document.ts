/**
 * result.json and error.json from their parts (DESIGN.md, Output), validated against
 * schemas/result.ts: the staged Timeline and text steps' outputs, and the facts the workflow gathered
 * (its `writeStage` and `failStage` send them, in exactly the shapes below). Pure: the activities that
 * read the parts and write the documents are in results.ts.
 */
import {
  type DialogActsOutput,
  errorDocumentSchema,
  RESULT_SCHEMA_VERSION,
  resultDocumentSchema,
  type AudioFacts,
  type AudioRedaction,
  type EndpointCost,
  type ErrorDocument,
  type FillersOutput,
  type KeywordsOutput,
  type ProcessingFacts,
  type RedactionOutput,
  type RedactionSummary,
  type ResultDocument,
  type ResultUtterance,
  type SentimentOutput,
  type SessionFacts,
  type SourceFacts,
  type SummaryOutput,
} from '../../schemas/result.ts';
import type { ProbeResult } from '../../schemas/media-probe.ts';
import type { PlanSession, SessionPlan } from '../../schemas/plan.ts';
import type { RecordingSource, Stage } from '../../schemas/recording.ts';
import type { Timeline } from '../../schemas/transcript.ts';
import { talkTimeBySpeaker } from './talk-time.ts';
import { maskPersonalData } from '../nlp/redaction/free-text.ts';
import { defaultRules, type LoadedRules } from '../insights/rules-file.ts';
import { scoreCall, type ScoreOptions } from '../insights/score-call.ts';
import { msToSeconds, roundSecondsToMs } from '../../schemas/units.ts';

// --- parts ---------------------------------------------------------------------------------------------

/** The recording, the manifest's columns given with it, and the object's time when known. */
export type SourceInput = RecordingSource & {
  metadata?: Record<string, string> | undefined;
  lastModified?: string | undefined;
};

/** The probe's facts result.json keeps (the workflow passes its ProbeResult; the local path stays out). */
export type AudioInput = Pick<
  ProbeResult,
  | 'durationSeconds'
  | 'sampleRate'
  | 'channels'
  | 'container'
  | 'codec'
  | 'sizeBytes'
  | 'hasVideo'
  | 'fingerprint'
  | 'reader'
  | 'lengthCheck'
  | 'amr'
>;

/** A planned session and what recognizing it took in this run (RecognizeSessionOutput's counters). */
export interface SessionInput extends PlanSession {
  restarts: number;
  reStreamedSeconds: number;
  audioSecondsSent: number;
  reused: boolean;
}

export interface ProcessingInput {
  workflowId: string;
  runId: string;
  batchId?: string | undefined;
  /** ISO time the workflow started the call. */
  startedAt: string;
  /** Requests per endpoint or step as the workflow counted them; the staged step outputs' costs replace theirs. */
  requests: Record<string, number>;
  /** Retries over every step, failed steps included. */
  retries: number;
  restarts: number;
  reStreamedSeconds: number;
  /** Wall time per stage (the workflow's stage tracker), ms. */
  stageMs: Record<string, number>;
  /** Wall time from the start of the call until its write, ms (`wallSeconds.total`). */
  wallMs: number;
}

export interface ResultFacts {
  source: SourceInput;
  audio: AudioInput;
  /** The session plan: which channels each speaker was heard on, and what the channel analysis found. */
  plan: Pick<SessionPlan, 'tracks' | 'channels' | 'decisions'>;
  sessions: SessionInput[];
  processing: ProcessingInput;
}

export interface ResultParts {
  callId: string;
  timeline: Timeline;
  fillers?: FillersOutput | undefined;
  sentiment?: SentimentOutput | undefined;
  summary?: SummaryOutput | undefined;
  keywords?: KeywordsOutput | undefined;
  dialogActs?: DialogActsOutput | undefined;
  stepFailures: { step: string; reason: string }[];
  facts: ResultFacts;
  /** The rule file of the call's metrics, categories and scorecard; default the shipped one. */
  rules?: LoadedRules | undefined;
  /** What the redaction step did, when it ran (the timeline is then the redacted one). */
  redaction?: ResultRedaction | undefined;
  /** ISO time the document is written at; default now. */
  writtenAt?: string | undefined;
}

export interface ResultRedaction {
  output: RedactionOutput;
  /** An unredacted copy is written beside this document's run, under its own prefix. */
  unredactedCopy: boolean;
  audio: AudioRedaction;
}

export interface ErrorParts {
  callId: string;
  source: RecordingSource;
  stage: Stage;
  reason: string;
  workflowId?: string | undefined;
  runId?: string | undefined;
  /** ISO time the document is written at; default now. */
  writtenAt?: string | undefined;
}

// --- facts ---------------------------------------------------------------------------------------------

/**
 * Tokens, secrets and personal data never belong in an output, whatever an upstream message carried
 * (reasons are built from codes and keys, but a service may echo anything).
 */
export function redact(text: string): string {
  return maskPersonalData(
    text
      .replace(/(bearer\s+)[A-Za-z0-9._~+/=-]+/gi, '$1[redacted]')
      .replace(/((?:client_?secret|access_?token|token)["']?\s*[:=]\s*["']?)[^\s"',}]+/gi, '$1[redacted]'),
  );
}

function sourceFacts(source: SourceInput, fingerprint?: string): SourceFacts {
  return {
    uri: `s3://${source.bucket}/${source.key}`,
    bucket: source.bucket,
    key: source.key,
    ...(source.etag !== undefined ? { etag: source.etag } : {}),
    ...(source.size !== undefined ? { sizeBytes: source.size } : {}),
    ...(fingerprint !== undefined ? { fingerprint } : {}),
    ...(source.lastModified ? { lastModified: source.lastModified } : {}),
    ...(source.metadata && Object.keys(source.metadata).length > 0 ? { metadata: source.metadata } : {}),
  };
}

function audioFacts(audio: AudioInput, plan: ResultFacts['plan']): AudioFacts {
  return {
    durationSeconds: audio.durationSeconds,
    container: audio.container,
    codec: audio.codec,
    sampleRate: audio.sampleRate,
    channels: audio.channels,
    sizeBytes: audio.sizeBytes,
    hasVideo: audio.hasVideo,
    tracks: plan.tracks.map((t) => ({
      track: t.track,
      speaker: t.speaker,
      sourceChannels: t.sourceChannels,
    })),
    ...(audio.reader ? { reader: audio.reader } : {}),
    ...(audio.lengthCheck ? { lengthCheck: audio.lengthCheck } : {}),
    ...(audio.amr ? { amr: audio.amr } : {}),
    ...(plan.channels
      ? { channelAnalysis: { channels: plan.channels, decisions: plan.decisions ?? [] } }
      : {}),
  };
}

function sessionFacts(sessions: readonly SessionInput[], timeline: Timeline): SessionFacts[] {
  const reasons = new Map(timeline.sessions?.map((s) => [s.session, s.restartReasons]));
  return sessions.map((s) => ({
    index: s.index,
    track: s.track,
    speaker: s.speaker,
    start: s.start,
    end: s.end,
    cut: s.cut,
    silence: s.silence,
    restarts: s.restarts,
    reStreamedSeconds: s.reStreamedSeconds,
    restartReasons: (reasons.get(s.index) ?? []).map(redact),
    audioSecondsSent: s.audioSecondsSent,
    reused: s.reused,
    utterances: timeline.utterances.filter((u) => u.session === s.index).length,
  }));
}

function processingFacts(
  processing: ProcessingInput,
  steps: Partial<
    Record<'redaction' | 'fillers' | 'summary' | 'sentiment' | 'keywords' | 'dialogActs', EndpointCost>
  >,
): ProcessingFacts {
  const requests: Record<string, EndpointCost> = {};
  for (const [name, n] of Object.entries(processing.requests)) requests[name] = { requests: n, retries: 0 };
  // The staged outputs carry the steps' measured cost (every attempt, bytes included).
  for (const [name, cost] of Object.entries(steps)) if (cost) requests[name] = cost;
  const entries = Object.values(requests);
  const wallSeconds: Record<string, number> = {};
  for (const [stage, ms] of Object.entries(processing.stageMs)) wallSeconds[stage] = msToSeconds(ms);
  wallSeconds.total = msToSeconds(processing.wallMs);
  return {
    workflowId: processing.workflowId,
    runId: processing.runId,
    startedAt: processing.startedAt,
    ...(processing.batchId !== undefined ? { batchId: processing.batchId } : {}),
    requests,
    totalRequests: entries.reduce((n, c) => n + c.requests, 0),
    // A failed step has no staged cost: the workflow's count holds its retries.
    retries: Math.max(
      processing.retries,
      entries.reduce((n, c) => n + c.retries, 0),
    ),
    restarts: processing.restarts,
    reStreamedSeconds: roundSecondsToMs(processing.reStreamedSeconds),
    wallSeconds,
  };
}

// --- documents -----------------------------------------------------------------------------------------

/** The result document, validated: throws a ZodError naming the first field at fault. */
export function buildResult(parts: ResultParts): ResultDocument {
  const { timeline, fillers, sentiment, summary, keywords, dialogActs, facts } = parts;
  const cleaned = new Map(fillers?.utterances.map((u) => [u.index, u]));
  const felt = new Map(sentiment?.utterances.map((u) => [u.index, u.sentiment]));
  const acts = new Map(dialogActs?.utterances.map((u) => [u.index, u.dialogActs]));
  const redaction = parts.redaction;
  const masked = new Map(redaction?.output.utterances.map((u) => [u.index, u.redactions]));
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
      ...(u.confidence !== undefined ? { confidence: u.confidence } : {}),
      normalizedText: f ? f.normalizedText : null,
      cleanedText: f ? f.cleanedText : null,
      fillers: f ? f.fillers : [],
      sentiment: felt.get(u.index) ?? null,
      // Absent when the step did not run (rules on dialog acts are then "unavailable").
      ...(dialogActs ? { dialogActs: acts.get(u.index) ?? null } : {}),
      // Kind, where the mask is and who found it: never the value, nor where it was.
      ...(redaction
        ? {
            redactions: (masked.get(u.index) ?? []).map(({ kind, begin, end, source }) => ({
              kind,
              begin,
              end,
              source,
            })),
          }
        : {}),
    };
  });
  const duration = facts.audio.durationSeconds || timeline.durationSeconds;
  const speakers = [...new Set([...timeline.speakers, ...timeline.utterances.map((u) => u.speaker)])];
  const content = {
    schemaVersion: RESULT_SCHEMA_VERSION,
    callId: parts.callId,
    source: sourceFacts(facts.source, facts.audio.fingerprint),
    audio: audioFacts(facts.audio, facts.plan),
    speakers,
    sessions: sessionFacts(facts.sessions, timeline),
    utterances,
    talk: talkTimeBySpeaker(timeline.utterances, duration, speakers),
    sentiment: sentiment
      ? {
          scoring: sentiment.scoring,
          ...(sentiment.grain ? { grain: sentiment.grain } : {}),
          ...(sentiment.windowSeconds ? { windowSeconds: sentiment.windowSeconds } : {}),
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
    ...(redaction ? { redaction: redactionSummary(redaction) } : {}),
    ...(dialogActs
      ? {
          dialogActs: {
            grain: dialogActs.grain,
            ...(dialogActs.windowSeconds ? { windowSeconds: dialogActs.windowSeconds } : {}),
            units: dialogActs.units,
          },
        }
      : {}),
  };
  const writtenAt = parts.writtenAt ?? new Date().toISOString();
  const scoring: ScoreOptions = { scoredAt: writtenAt };
  const document = {
    ...content,
    ...scoreCall(content, parts.rules ?? defaultRules(), scoring),
    processing: processingFacts(facts.processing, {
      ...(redaction ? { redaction: redaction.output.cost } : {}),
      ...(fillers ? { fillers: fillers.cost } : {}),
      ...(summary ? { summary: summary.cost } : {}),
      ...(sentiment ? { sentiment: sentiment.cost } : {}),
      ...(keywords ? { keywords: keywords.cost } : {}),
      ...(dialogActs ? { dialogActs: dialogActs.cost } : {}),
    }),
    stepFailures: parts.stepFailures.map((f) => ({ step: f.step, reason: redact(f.reason) })),
    writtenAt,
  };
  return resultDocumentSchema.parse(document);
}

function redactionSummary(redaction: ResultRedaction): RedactionSummary {
  const counts = redaction.output.counts;
  return {
    applied: true,
    detectors: redaction.output.detectors,
    counts,
    total: Object.values(counts).reduce((a, b) => a + b, 0),
    unredactedCopy: redaction.unredactedCopy,
    audio: redaction.audio,
  };
}

/** The error document, validated: throws a ZodError naming the first field at fault. */
export function buildErrorDocument(parts: ErrorParts): ErrorDocument {
  return errorDocumentSchema.parse({
    schemaVersion: RESULT_SCHEMA_VERSION,
    callId: parts.callId,
    source: sourceFacts(parts.source),
    stage: parts.stage,
    reason: redact(parts.reason).slice(0, 4000) || 'unknown',
    writtenAt: parts.writtenAt ?? new Date().toISOString(),
    ...(parts.workflowId !== undefined ? { workflowId: parts.workflowId } : {}),
    ...(parts.runId !== undefined ? { runId: parts.runId } : {}),
  });
}
