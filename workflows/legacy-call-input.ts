/**
 * The inputs of `processRecording` and of a backfill's children from before a call's settings travelled
 * as one {@link CallSpec}, and the one pure function each that turns them into a spec with the defaults
 * the workflow applied then. Recorded histories, running calls and batches, and the actions of schedules
 * created before carry these shapes; the workflows read them through here and nothing else does.
 *
 * When it can be deleted: once no run that was started with an old shape can still be open or be reset
 * (the namespace's retention after the last such run closed), and every schedule has been written again by
 * `callpipe schedule nightly` (its action then carries a spec). The recorded histories of old shapes in
 * test/fixtures/histories go with it, to the retired list of test/unit/workflows.replay.test.ts.
 *
 * Pure and deterministic (workflow code): no zod, no configuration. A setting an old input left out
 * takes the value the workflow or its workers assumed then: for the session plan, the configuration's
 * defaults (schemas/limits.ts), which the workers filled in from their own configuration.
 */
import type { LegacyBackfillChild } from '../schemas/backfill.ts';
import type { CallPlan, CallSpec } from '../schemas/call-spec.ts';
import type { PlanOptions } from '../schemas/plan.ts';
import type { OutputLocation, RecordingSource, RedactionInput } from '../schemas/recording.ts';
import { tablesLocationOf, type TablesLocation } from '../schemas/call-keys.ts';
import { LIMIT_DEFAULTS, RECOGNITION_HEARTBEAT_SECONDS, SESSION_MAX_RESTARTS } from '../schemas/limits.ts';
import { DEFAULT_TASK_QUEUE_PREFIX, taskQueuesOf } from '../schemas/task-queues.ts';
import { DEFAULT_TEXT_GRAINS, type TextGrains } from '../schemas/text-grains.ts';

/** `processRecording`'s input before {@link CallSpec}: every setting optional, defaulted by the workflow. */
export interface LegacyProcessRecordingInput {
  callId: string;
  source: RecordingSource;
  output: OutputLocation;
  stagingPrefix: string;
  redo?: boolean;
  batchId?: string;
  metadata?: Record<string, string>;
  plan?: PlanOptions;
  pacingSpeed?: number;
  maxRestarts?: number;
  heartbeatTimeoutSeconds?: number;
  cleanupStaging?: boolean;
  /** Without `probe`: probes went to the media queue. */
  queues?: { media: string; asr: string; nlp: string; probe?: string };
  rulesKey?: string;
  tables?: Partial<TablesLocation>;
  text?: TextGrains;
  wordsKey?: string;
  redaction?: RedactionInput;
}

/** Whether a `processRecording` input is of the old shape (it has no `spec`). */
export function isLegacyInput(input: object): input is LegacyProcessRecordingInput {
  return !('spec' in input);
}

/** The spec an old `processRecording` input stands for, with the defaults the workflow applied to it. */
export function specOfLegacyInput(input: LegacyProcessRecordingInput): CallSpec {
  const queues = input.queues ?? taskQueuesOf(DEFAULT_TASK_QUEUE_PREFIX);
  return {
    queues: { media: queues.media, probe: queues.probe ?? queues.media, asr: queues.asr, nlp: queues.nlp },
    stagingPrefix: input.stagingPrefix,
    cleanupStaging: input.cleanupStaging !== false,
    plan: legacyPlan(input.plan),
    pacingSpeed: input.pacingSpeed ?? 1,
    maxRestarts: input.maxRestarts ?? SESSION_MAX_RESTARTS,
    heartbeatTimeoutSeconds: input.heartbeatTimeoutSeconds ?? RECOGNITION_HEARTBEAT_SECONDS,
    rulesKey: input.rulesKey ?? null,
    wordsKey: input.wordsKey ?? null,
    tables: tablesLocationOf(input.output, input.tables),
    text: input.text ?? DEFAULT_TEXT_GRAINS,
    redaction: input.redaction ?? {},
  };
}

/** The spec an old backfill's `child` stood for: the input its children were given, then as above. */
export function specOfLegacyChild(child: LegacyBackfillChild, output: OutputLocation): CallSpec {
  return specOfLegacyInput({
    callId: '',
    source: { bucket: output.bucket, key: '-' },
    output,
    stagingPrefix: child.stagingPrefix,
    ...(child.keepStaging ? { cleanupStaging: false } : {}),
    plan: {
      ...(child.maxSessionSeconds ? { maxSessionSeconds: child.maxSessionSeconds } : {}),
      ...(child.planStrategy ? { strategy: child.planStrategy } : {}),
      ...(child.planBudget ? { budget: child.planBudget } : {}),
      ...(child.minSessionSeconds ? { minSessionSeconds: child.minSessionSeconds } : {}),
    },
    ...(child.pacingSpeed ? { pacingSpeed: child.pacingSpeed } : {}),
    ...(child.queues ? { queues: child.queues } : {}),
    ...(child.rulesKey ? { rulesKey: child.rulesKey } : {}),
    ...(child.wordsKey ? { wordsKey: child.wordsKey } : {}),
    ...(child.tables ? { tables: child.tables } : {}),
    ...(child.text ? { text: child.text } : {}),
    ...(child.redaction ? { redaction: child.redaction } : {}),
  });
}

/** An old plan input: what it gave, the rest as the workers' configuration filled it (its defaults). */
function legacyPlan(plan: PlanOptions = {}): CallPlan {
  return {
    ...plan,
    strategy: plan.strategy ?? LIMIT_DEFAULTS.planStrategy,
    maxSessionSeconds: plan.maxSessionSeconds ?? LIMIT_DEFAULTS.maxSessionSeconds,
    budget: plan.budget ?? LIMIT_DEFAULTS.asrConcurrentSessions,
    minSessionSeconds: plan.minSessionSeconds ?? LIMIT_DEFAULTS.minSessionSeconds,
  };
}
