/**
 * result.json and error.json from their parts (docs/design.md, Output), validated against
 * schemas/result.ts: the staged Timeline and text steps' outputs, and the facts the workflow gathered
 * (its `writeStage` and `failStage` send them, in exactly the shapes below). Pure: the activities that
 * read the parts and write the documents are in result-activities.ts.
 */
import { transcriptQualityOf, type TranscriptQuality } from '../../schemas/transcript-quality.ts';
import type { RecognitionFacts } from '../../schemas/recognition.ts';
import {
  type DialogActsOutput,
  type ReasonsOutput,
  type QualityOutput,
  type LineClassesOutput,
  type NlpStep,
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
  type SentimentOutput,
  type SessionFacts,
  type SourceFacts,
  type SummaryOutput,
} from '../../schemas/result.ts';
import type { ProbeResult } from '../../schemas/media-probe.ts';
import type { PlanSession, SessionPlan } from '../../schemas/plan.ts';
import type { RecordingSource, Stage } from '../../schemas/recording.ts';
import type { Timeline } from '../../schemas/transcript.ts';
import type { CallInsightsParts } from '../../schemas/insights.ts';
import type { SpeakerRoles } from '../../schemas/speakers.ts';
import { msToSeconds, roundSecondsToMs } from '../../schemas/units.ts';
import { maskPersonalData } from '../nlp/redaction/free-text.ts';
import { callInsights } from '../insights/call-insights.ts';
import { defaultRules, type LoadedRules } from '../insights/rule-file.ts';
import { callSpeakers, dialogActsSummary, resultUtterances, sentimentSummary } from './call-content.ts';

// --- parts ---------------------------------------------------------------------------------------------

/** The recording, the manifest's columns given with it, and the object's time when known. */
type SourceInput = RecordingSource & {
  metadata?: Record<string, string> | undefined;
  lastModified?: string | undefined;
};

/** The probe's facts result.json keeps (the workflow passes its ProbeResult; the local path stays out). */
type AudioInput = Pick<
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
interface SessionInput extends PlanSession {
  restarts: number;
  reStreamedSeconds: number;
  audioSecondsSent: number;
  reused: boolean;
}

interface ProcessingInput {
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
  /** How the call was recognized (absent from runs started before the recognition modes). */
  recognition?: RecognitionFacts | undefined;
}

export interface ResultParts {
  callId: string;
  timeline: Timeline;
  fillers?: FillersOutput | undefined;
  sentiment?: SentimentOutput | undefined;
  summary?: SummaryOutput | undefined;
  keywords?: KeywordsOutput | undefined;
  dialogActs?: DialogActsOutput | undefined;
  /** The reasons step's output, when a model is configured and the step succeeded. */
  reasons?: ReasonsOutput | undefined;
  /** The quality step's output, when it ran. */
  quality?: QualityOutput | undefined;
  /** The line classification step's output, when the rule file asked for it. */
  lineClasses?: LineClassesOutput | undefined;
  /** Who said what, and why (the speakers stage's document), when the stage ran. */
  speakers?: SpeakerRoles | undefined;
  stepFailures: { step: string; reason: string }[];
  facts: ResultFacts;
  /** The rule file of the call's metrics, categories and scorecard; default the shipped one. */
  rules?: LoadedRules | undefined;
  /** What the redaction step did, when it ran (the timeline is then the redacted one). */
  redaction?: ResultRedaction | undefined;
  /** ISO time the document is written at; default now. */
  writtenAt?: string | undefined;
}

interface ResultRedaction {
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
    ...(s.recognition ? { recognition: s.recognition } : {}),
    restartReasons: (reasons.get(s.index) ?? []).map(redact),
    audioSecondsSent: s.audioSecondsSent,
    reused: s.reused,
    utterances: timeline.utterances.filter((u) => u.session === s.index).length,
  }));
}

function processingFacts(
  processing: ProcessingInput,
  steps: Partial<Record<NlpStep, EndpointCost>>,
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

/**
 * Processing facts with requests sent after the pipeline (a rescore's classifications) added to their
 * endpoints' counts and to the total; an endpoint with none sent is left as it was.
 */
export function withRequestsSent(
  processing: ProcessingFacts,
  sent: Readonly<Record<string, number>>,
): ProcessingFacts {
  const added = Object.entries(sent).filter(([, n]) => n > 0);
  if (added.length === 0) return processing;
  const requests = { ...processing.requests };
  for (const [name, n] of added) {
    const cost = requests[name] ?? { requests: 0, retries: 0 };
    requests[name] = { ...cost, requests: cost.requests + n };
  }
  const total = added.reduce((sum, [, n]) => sum + n, 0);
  return { ...processing, requests, totalRequests: processing.totalRequests + total };
}

/**
 * The scorecard as reported: marked unreliable when the transcript needs review, so no one reads an
 * automated answer on a badly recognized call as a fact (docs/results.md, "Transcript quality").
 */
export function reviewed<S extends { unreliable?: boolean | undefined } | null>(
  scorecard: S,
  quality: TranscriptQuality | undefined,
): S {
  if (!scorecard) return scorecard;
  const { unreliable: _, ...rest } = scorecard;
  return (quality?.needsReview ? { ...rest, unreliable: true } : rest) as S;
}

// --- documents -----------------------------------------------------------------------------------------

/**
 * The result document from its parts and the call's insights (the insights stage's staged document),
 * validated: throws a ZodError naming the first field at fault. What publish writes.
 */
export function assembleResult(
  parts: Omit<ResultParts, 'rules'>,
  insights: CallInsightsParts,
): ResultDocument {
  const {
    timeline,
    fillers,
    sentiment,
    summary,
    keywords,
    dialogActs,
    reasons,
    quality,
    lineClasses,
    facts,
  } = parts;
  const utterances = resultUtterances({ ...parts, redaction: parts.redaction?.output });
  const redaction = parts.redaction;
  const content = {
    schemaVersion: RESULT_SCHEMA_VERSION,
    callId: parts.callId,
    source: sourceFacts(facts.source, facts.audio.fingerprint),
    audio: audioFacts(facts.audio, facts.plan),
    speakers: callSpeakers(timeline),
    sessions: sessionFacts(facts.sessions, timeline),
    ...(facts.recognition ? { recognition: facts.recognition } : {}),
    utterances,
    talk: insights.talk,
    sentiment: sentimentSummary(sentiment),
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
    ...(dialogActs ? { dialogActs: dialogActsSummary(dialogActs) } : {}),
    ...(parts.speakers ? { speakerRoles: parts.speakers } : {}),
    ...(reasons?.reasons ? { reasons: reasons.reasons } : {}),
    ...(quality ? { transcriptQuality: transcriptQualityOf(utterances, quality.settings) } : {}),
  };
  const document = {
    ...content,
    metrics: insights.metrics,
    categories: insights.categories,
    scorecard: reviewed(insights.scorecard, content.transcriptQuality),
    rules: insights.rules,
    processing: processingFacts(facts.processing, {
      ...(redaction ? { redaction: redaction.output.cost } : {}),
      ...(fillers ? { fillers: fillers.cost } : {}),
      ...(summary ? { summary: summary.cost } : {}),
      ...(sentiment ? { sentiment: sentiment.cost } : {}),
      ...(keywords ? { keywords: keywords.cost } : {}),
      ...(dialogActs ? { dialogActs: dialogActs.cost } : {}),
      ...(reasons ? { reasons: reasons.cost } : {}),
      ...(quality ? { quality: quality.cost } : {}),
      ...(lineClasses ? { lineClasses: lineClasses.cost } : {}),
    }),
    stepFailures: parts.stepFailures.map((f) => ({ step: f.step, reason: redact(f.reason) })),
    writtenAt: parts.writtenAt ?? new Date().toISOString(),
  };
  return resultDocumentSchema.parse(document);
}

/**
 * The result document with its insights computed here, scored at the time it is written: the single
 * write of runs recorded before the insights stage (and of the tests' documents). Validated like
 * {@link assembleResult}.
 */
export function buildResult(parts: ResultParts): ResultDocument {
  const writtenAt = parts.writtenAt ?? new Date().toISOString();
  const insights = callInsights(
    {
      timeline: parts.timeline,
      fillers: parts.fillers,
      sentiment: parts.sentiment,
      dialogActs: parts.dialogActs,
      redaction: parts.redaction?.output,
      durationSeconds: parts.facts.audio.durationSeconds,
    },
    parts.rules ?? defaultRules(),
    { scoredAt: writtenAt },
  );
  return assembleResult({ ...parts, writtenAt }, insights);
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
