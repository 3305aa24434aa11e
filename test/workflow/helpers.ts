/**
 * Shared pieces of the workflow tests: the connection to the project's one dev server
 * (global-setup.ts), a worker with mocked activities on a task queue of the test's own, realistic
 * activity outputs, and small polling helpers.
 *
 * Mocks are tolerant of the activities' input shapes (keys and fields move while the workflow is being
 * restructured): they read only what they need, with fallbacks, and record every call with the
 * workflow id it came from (from the activity's context, not from the input).
 */
import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import { afterAll, beforeAll, inject, vi, type Mock } from 'vitest';
import { activityInfo } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker, type LogEntry } from '@temporalio/worker';
import type { ProbeResult } from '../../schemas/media-probe.ts';
import type { SessionPlan } from '../../schemas/plan.ts';
import type { ProcessRecordingInput } from '../../workflows/process-recording.ts';
import { withOverrides, type CallSpec, type CallSpecOverrides } from '../../schemas/call-spec.ts';
import type { SEARCH_ATTRIBUTE_KEYS } from '../../workflows/search-attribute-keys.ts';
import { until } from '../helpers/until.ts';

// --- the server and workers ----------------------------------------------------------------------------------

let runtimeInstalled = false;

/**
 * The SDK's own logs at WARN and above, less the "Activity failed" warnings the failure tests cause on
 * purpose (each test file runs in a process of its own: install once).
 */
function installQuietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const logger = new DefaultLogger('WARN', (entry: LogEntry) => {
    if (entry.message === 'Activity failed') return;
    process.stderr.write(
      `[temporal ${entry.level}] ${entry.message} ${inspect(entry.meta ?? {}, { depth: 3 })}\n`,
    );
  });
  try {
    Runtime.install({ logger });
  } catch {
    // Already installed in this process.
  }
}

export async function connectTestEnv(): Promise<TestWorkflowEnvironment> {
  installQuietRuntime();
  const { address, namespace } = inject('workflowTestServer');
  return TestWorkflowEnvironment.createFromExistingServer({ address, namespace });
}

/**
 * The test environment of one test file: connected before its tests, torn down after them. Returns a
 * getter, since the environment exists only once `beforeAll` has run.
 */
export function useTestEnv(): () => TestWorkflowEnvironment {
  let env: TestWorkflowEnvironment | undefined;
  beforeAll(async () => {
    env = await connectTestEnv();
  });
  afterAll(async () => {
    await env?.teardown();
  });
  return () => {
    if (!env) throw new Error('the workflow test environment is not connected yet');
    return env;
  };
}

/** A task queue (and workflow id prefix) no other test uses, on a server shared by every file. */
export function uniqueQueue(name: string): string {
  return `wft-${name}-${randomUUID().slice(0, 8)}`;
}

export type ActivityImpl = (input: unknown) => Promise<unknown>;

/**
 * Runs `fn` with one worker serving every workflow and every mocked activity on `taskQueue`; the
 * worker is shut down afterwards (a short grace time: mocks that wait honour cancellation).
 */
export async function withWorker<T>(
  env: TestWorkflowEnvironment,
  taskQueue: string,
  activities: Record<string, ActivityImpl>,
  fn: () => Promise<T>,
): Promise<T> {
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle: { codePath: inject('workflowTestServer').bundlePath },
    activities,
    shutdownGraceTime: '2 seconds',
  });
  return worker.runUntil(fn);
}

// --- realistic activity outputs ------------------------------------------------------------------------------

export const CALL_SECONDS = 64.5;

/** A 64.5-s stereo WAV (agent left, customer right), as activities/media/probe.ts reports it. */
export function probeResult(overrides: Partial<ProbeResult> = {}): ProbeResult {
  return {
    path: '/tmp/callpipe-cache/3f9a0c1e.wav',
    sizeBytes: 2_064_044,
    fingerprint: 'etag:9b2cf535f27731c974343645a3985328',
    container: 'wav',
    codec: 'pcm_s16le',
    streamIndex: 0,
    sampleRate: 16_000,
    channels: 2,
    durationSeconds: CALL_SECONDS,
    metadataDurationSeconds: CALL_SECONDS,
    hasVideo: false,
    ...overrides,
  };
}

/** Two tracks (agent, customer), one session each over the whole call: 2 sessions. */
export function sessionPlan(probe: ProbeResult = probeResult()): SessionPlan {
  const session = (index: number, speaker: string) => ({
    index,
    track: index,
    channel: index,
    speaker,
    start: 0,
    end: probe.durationSeconds,
    cut: 'end' as const,
    silence: null,
  });
  return {
    version: 1,
    source: {
      path: probe.path,
      fingerprint: probe.fingerprint,
      sampleRate: probe.sampleRate,
      channels: probe.channels,
      durationSeconds: probe.durationSeconds,
      streamIndex: probe.streamIndex,
    },
    options: {
      strategy: 'fixed',
      maxSessionSeconds: 3000,
      searchWindowSeconds: 60,
      silenceNoiseDb: -30,
      silenceMinSeconds: 0.3,
    },
    tracks: [
      { track: 0, channel: 0, sourceChannels: [0], speaker: 'agent' },
      { track: 1, channel: 1, sourceChannels: [1], speaker: 'customer' },
    ],
    sessions: [session(0, 'agent'), session(1, 'customer')],
  };
}

export const UTTERANCES_PER_SESSION = 7;

/** A text step's cost as the service client counts it. */
export const STEP_COST = { requests: 2, retries: 0, bytesSent: 1800, bytesReceived: 950 };

/** What a text step returns when the service refused its input for good (the `invalid` class). */
export function failedStep(reason: string) {
  return { status: 'failed' as const, reason, cost: { ...STEP_COST, requests: 1 } };
}

/** A non-retryable failure of one of the retry table's types (schemas/retry-table.ts). */
export function nonRetryable(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

// --- tolerant input readers ------------------------------------------------------------------------------------

/** `input.a.b…` when it is there, else undefined: mocks never depend on the exact input shape. */
export function pick(input: unknown, ...path: string[]): unknown {
  let v: unknown = input;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
}

function str(input: unknown, ...path: string[]): string | undefined {
  const v = pick(input, ...path);
  return typeof v === 'string' ? v : undefined;
}

function num(input: unknown, ...path: string[]): number | undefined {
  const v = pick(input, ...path);
  return typeof v === 'number' ? v : undefined;
}

// --- the mocked activities ---------------------------------------------------------------------------------------

export const PROCESS_ACTIVITIES = [
  'resultExists',
  'probeSource',
  'planSource',
  'recognizeSession',
  'recognizePieces',
  'fileRecognitionRate',
  'mergeTimeline',
  'assignSpeakers',
  'redactText',
  'removeFillers',
  'summarizeCall',
  'analyzeSentiment',
  'extractKeywords',
  'classifyDialogActs',
  'redactAudio',
  'computeInsights',
  'publishResult',
  'writeError',
  'writeCallTables',
  'deleteStaging',
  'emitCallEvent',
] as const;
export const BACKFILL_ACTIVITIES = [
  'prepareManifest',
  'listBackfillPage',
  'writeReportPart',
  'writeBatchReport',
  'compactTables',
  'writeNightReport',
  'emitBatchEvent',
] as const;
export type ActivityName = (typeof PROCESS_ACTIVITIES)[number] | (typeof BACKFILL_ACTIVITIES)[number];

export interface ActivityCall {
  activity: ActivityName;
  /** The workflow that scheduled it (a processRecording child, or the backfill). */
  workflowId: string;
  input: unknown;
}

const nlpOk = (input: unknown, step: string) => ({
  status: 'ok' as const,
  outputKey: str(input, 'outputKey') ?? `staging/${step}.json`,
  cost: STEP_COST,
});

/** Defaults: a call that is not done yet and goes through every stage with success. */
function processDefaults(): Record<(typeof PROCESS_ACTIVITIES)[number], ActivityImpl> {
  return {
    resultExists: async () => false,
    probeSource: async () => probeResult(),
    // As the real plan: asked to (`stageTracksUnder`), it stages each track under that prefix.
    planSource: async (input) => {
      const plan = sessionPlan((pick(input, 'probe') as ProbeResult | undefined) ?? probeResult());
      const prefix = str(input, 'stageTracksUnder');
      if (prefix === undefined) return plan;
      const bytes = Math.round(plan.source.durationSeconds * 8000);
      const stagedTracks = plan.tracks.map((t) => ({
        track: t.track,
        key: `${prefix}${plan.source.fingerprint}/t${t.track}/track.mulaw`,
        format: 'mulaw' as const,
        bytes,
      }));
      return { ...plan, stagedTracks };
    },
    recognizeSession: async (input) => ({
      resultKey: str(input, 'resultKey') ?? `staging/sessions/${num(input, 'session') ?? 0}.json`,
      utterances: UTTERANCES_PER_SESSION,
      audioSecondsSent: (num(input, 'end') ?? CALL_SECONDS) - (num(input, 'start') ?? 0),
      restarts: 0,
      reStreamedSeconds: 0,
      requests: 4,
      reused: false,
    }),
    recognizePieces: async (input) => ({
      resultKey: str(input, 'resultKey') ?? 'staging/sessions/pieces-0000.json',
      reused: false,
      pieces: (
        (pick(input, 'pieces') as { session: number; start: number; end: number }[] | undefined) ?? []
      ).map((p) => ({
        session: p.session,
        utterances: 1,
        requests: 1,
        retries: 0,
        audioSecondsSent: p.end - p.start,
      })),
    }),
    fileRecognitionRate: async () => null,
    mergeTimeline: async (input) => ({
      timelineKey: str(input, 'timelineKey') ?? 'staging/timeline.json',
      utterances: 2 * UTTERANCES_PER_SESSION,
      speakers: ['agent', 'customer'],
    }),
    assignSpeakers: async (input) => ({
      timelineKey: str(input, 'outputTimelineKey') ?? 'staging/timeline.speakers.json',
      speakersKey: str(input, 'outputKey') ?? 'staging/speakers.json',
      decision: 'configured',
      swapped: false,
      inferred: false,
      speakers: ['agent', 'customer'],
    }),
    redactText: async (input) => nlpOk(input, 'redaction'),
    removeFillers: async (input) => nlpOk(input, 'fillers'),
    summarizeCall: async (input) => nlpOk(input, 'summary'),
    analyzeSentiment: async (input) => nlpOk(input, 'sentiment'),
    extractKeywords: async (input) => nlpOk(input, 'keywords'),
    classifyDialogActs: async (input) => nlpOk(input, 'dialog-acts'),
    redactAudio: async (input) => ({
      status: 'written',
      key: str(input, 'output', 'key') ?? 'results/call/audio.redacted.flac',
      mask: str(input, 'mask') ?? 'tone',
      spans: 3,
      seconds: 7.5,
    }),
    computeInsights: async (input) => ({
      insightsKey: str(input, 'outputKey') ?? 'staging/insights.json',
      categories: [],
    }),
    publishResult: async (input) => ({
      bucket: str(input, 'output', 'bucket') ?? 'callpipe',
      resultKey: str(input, 'output', 'result') ?? `results/${str(input, 'callId')}/result.json`,
      vttKey: str(input, 'output', 'transcript') ?? `results/${str(input, 'callId')}/transcript.vtt`,
      utterances: 2 * UTTERANCES_PER_SESSION,
    }),
    writeError: async (input) => ({
      bucket: str(input, 'output', 'bucket') ?? 'callpipe',
      errorKey: str(input, 'output', 'error') ?? `results/${str(input, 'callId')}/error.json`,
    }),
    writeCallTables: async (input) => ({
      dt: '2026-11-21',
      files: { calls: `tables/calls/dt=2026-11-21/call-${str(input, 'callId')}.parquet` },
      rows: { calls: 1, utterances: 2 * UTTERANCES_PER_SESSION },
      replaced: [],
    }),
    deleteStaging: async () => ({ deleted: 6 }),
    // Written to S3 only: no sink is configured, so no delivery workflow starts.
    emitCallEvent: async (input) => emitted(input),
  };
}

/** An event as `emitCallEvent`/`emitBatchEvent` return it, with no sink (no delivery to start). */
function emitted(input: unknown) {
  const type = str(input, 'type') ?? 'callpipe.batch.completed';
  const id = `evt_${type.replace(/[^a-z]/g, '')}`;
  return {
    event: { id, type, bucket: 'callpipe', key: `results/events/2026-11-21/${id}.ndjson` },
    sinks: [],
    policy: { initialSeconds: 1, maxSeconds: 2, forSeconds: 60, requestTimeoutSeconds: 5 },
  };
}

function backfillDefaults(): Record<(typeof BACKFILL_ACTIVITIES)[number], ActivityImpl> {
  return {
    prepareManifest: async () => {
      throw nonRetryable('ManifestError', 'these tests list prefixes, not manifests');
    },
    listBackfillPage: async () => ({
      items: [],
      cursor: { page: 1, finished: true },
      listed: 0,
      filtered: 0,
      skipped: 0,
      missing: 0,
    }),
    writeReportPart: async () => undefined,
    writeBatchReport: async (input) => ({
      jsonKey: `${str(input, 'reportPrefix') ?? 'reports/'}report.json`,
      csvKey: `${str(input, 'reportPrefix') ?? 'reports/'}report.csv`,
      rows: 0,
      days: ['2026-11-21'],
    }),
    writeNightReport: async (input) => ({
      key: `${str(input, 'reportPrefix') ?? 'reports/'}report.html`,
      bytes: 50_000,
      calls: 0,
    }),
    emitBatchEvent: async (input) => emitted(input),
    compactTables: async (input) => ({
      days: ((pick(input, 'days') as string[] | undefined) ?? []).map((dt) => ({ dt, tables: {} })),
    }),
  };
}

export type Mocks = Record<ActivityName, Mock<ActivityImpl>> & {
  /** Every call in the order the activities started. */
  calls: ActivityCall[];
  /** The calls of one activity (optionally of one workflow). */
  callsOf(activity: ActivityName, workflowId?: string): ActivityCall[];
  /** What the worker registers: each mock wrapped so its call is logged with its workflow id. */
  activities: Record<string, ActivityImpl>;
};

/**
 * Every activity of processRecording and backfill as a `vi.fn` with a realistic default; override one
 * with `mocks.summarizeCall.mockImplementation(…)` or through `overrides`.
 */
export function mockActivities(overrides: Partial<Record<ActivityName, ActivityImpl>> = {}): Mocks {
  const defaults = { ...processDefaults(), ...backfillDefaults(), ...overrides };
  const calls: ActivityCall[] = [];
  const mocks = {} as Record<ActivityName, Mock<ActivityImpl>>;
  const activities: Record<string, ActivityImpl> = {};
  for (const [name, impl] of Object.entries(defaults) as [ActivityName, ActivityImpl][]) {
    const mock = vi.fn<ActivityImpl>(impl);
    mocks[name] = mock;
    activities[name] = (input: unknown) => {
      calls.push({ activity: name, workflowId: activityInfo().workflowExecution?.workflowId ?? '', input });
      return mock(input);
    };
  }
  return {
    ...mocks,
    calls,
    callsOf: (activity, workflowId) =>
      calls.filter(
        (c) => c.activity === activity && (workflowId === undefined || c.workflowId === workflowId),
      ),
    activities,
  };
}

// --- inputs ------------------------------------------------------------------------------------------------------

/** The settings of a test's calls: every queue the test's own (one worker serves them all). */
export function testSpec(taskQueue: string): CallSpec {
  return {
    queues: { media: taskQueue, probe: taskQueue, asr: taskQueue, nlp: taskQueue },
    stagingPrefix: 'staging/',
    cleanupStaging: true,
    plan: { strategy: 'balanced', maxSessionSeconds: 3000, budget: 16, minSessionSeconds: 60 },
    pacingSpeed: 1,
    maxRestarts: 10,
    heartbeatTimeoutSeconds: 5,
    rulesKey: null,
    wordsKey: null,
    tables: { bucket: 'callpipe', prefix: 'tables/', timeZone: 'UTC' },
    text: { sentiment: 'window', dialogActs: 'turn', windowSeconds: 30 },
    redaction: {},
  };
}

/** What a test changes of a call: the call's own fields, and its spec's. */
export type CallOverrides = Partial<Omit<ProcessRecordingInput, 'spec'>> & CallSpecOverrides;

/** A processRecording input on the test's own queue, with {@link testSpec}. */
export function processInput(
  taskQueue: string,
  callId: string,
  overrides: CallOverrides = {},
): ProcessRecordingInput {
  const { redo, batchId, metadata, callId: _c, source, output, ...spec } = overrides;
  return {
    callId,
    source: source ?? {
      bucket: 'calls',
      key: `2024/11/22/${callId}.wav`,
      etag: '9b2cf535f27731c974343645a3985328',
    },
    output: output ?? { bucket: 'callpipe', prefix: 'results/' },
    ...(redo !== undefined ? { redo } : {}),
    ...(batchId ? { batchId } : {}),
    ...(metadata ? { metadata } : {}),
    spec: withOverrides(testSpec(taskQueue), spec),
  };
}

// --- waiting and reading ---------------------------------------------------------------------------------------

/** Polls `check` (test/helpers/until.ts) until it returns a truthy value, which it returns. */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 15_000,
  intervalMs = 50,
): Promise<NonNullable<T>> {
  return (await until(what, check, Boolean, timeoutMs, intervalMs)) as NonNullable<T>;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** One typed search attribute of a workflow, as the server has it now. */
export async function searchAttribute(
  handle: WorkflowHandle,
  key: (typeof SEARCH_ATTRIBUTE_KEYS)[keyof typeof SEARCH_ATTRIBUTE_KEYS],
): Promise<unknown> {
  const description = await handle.describe();
  return description.typedSearchAttributes.get(key);
}
