/**
 * A call's settings: everything a `processRecording` workflow is told besides which recording it is and
 * where its results go. Made from the configuration by {@link callSpecOf} alone, the same way for every
 * command that starts calls (`process`, `backfill`, `schedule nightly`; `rescore` finds the tables where
 * it placed them, with the same `tablesOf`), so the workflow applies no default of its own and the
 * workers fill in nothing.
 *
 * Glossary: a *call* is one recording processed once (its id, source, output, batch, metadata); its
 * *spec* is how (queues, session plan, pacing, rules, tables, text grains, vocabulary, redaction). A
 * batch carries one spec for all its calls; a call's manifest row may add its channels' speakers.
 */
import { z } from 'zod';
import { channelOptionsSchema, planOptionsSchema } from './plan.ts';
import { redactionInputSchema } from './recording.ts';
import { TEXT_GRAINS } from './text-grains.ts';
import { reasonsSettingsSchema, type ReasonsSettings } from './reasons.ts';
import { lineClassifierSchema, RULE_FILE_LIMITS, type LineClassifier } from './rules.ts';
import { qualitySettingsSchema } from './transcript-quality.ts';
import { RECOGNITION_HEARTBEAT_SECONDS, SESSION_MAX_RESTARTS } from './limits.ts';
import { taskQueues, type Config } from './config.ts';
import {
  tablesLocationOf,
  unredactedLocationOf,
  type OutputLocation,
  type TablesLocation,
} from './call-keys.ts';
import type { PlanOptions } from './plan.ts';
import type { RedactionInput } from './recording.ts';
import type { TextGrains } from './text-grains.ts';
import { recognitionModeSchema } from './recognition.ts';

const plan = planOptionsSchema.shape;

/**
 * Session planning of a call (schemas/plan.ts): strategy and sizes always given; the finer settings only
 * when a caller chose them (the planner's own defaults otherwise), and the channels' speakers per call.
 */
const callPlanSchema = z.object({
  strategy: plan.strategy.unwrap(),
  /** latency: the plan when the account is busy; the configured strategy (see {@link latencyFirst}). */
  throughputStrategy: plan.throughputStrategy.unwrap().optional(),
  latencyMinSessionSeconds: plan.latencyMinSessionSeconds.unwrap().optional(),
  maxSessionSeconds: plan.maxSessionSeconds.unwrap(),
  budget: plan.budget.unwrap(),
  minSessionSeconds: plan.minSessionSeconds.unwrap(),
  searchWindowSeconds: plan.searchWindowSeconds.unwrap().optional(),
  silenceNoiseDb: plan.silenceNoiseDb.unwrap().optional(),
  silenceMinSeconds: plan.silenceMinSeconds.unwrap().optional(),
  channels: channelOptionsSchema.optional(),
});
type CallPlan = z.infer<typeof callPlanSchema>;

export const callSpecSchema = z.object({
  /** Task queues of the call's activities (schemas/task-queues.ts): probes apart from the rest of media. */
  queues: z.object({
    media: z.string().min(1),
    probe: z.string().min(1),
    asr: z.string().min(1),
    nlp: z.string().min(1),
  }),
  /** Staging key prefix for transcoded audio and intermediate documents (config `s3.stagingPrefix`). */
  stagingPrefix: z.string(),
  /** Delete the staged audio and intermediates after success (config: not `s3.keepStaging`). */
  cleanupStaging: z.boolean(),
  plan: callPlanSchema,
  /**
   * How speech is recognized (schemas/recognition.ts): `stream`, `file` or `auto`. Absent in specs made
   * before file recognition: `stream`.
   */
  recognition: recognitionModeSchema.optional(),
  /** The slowest pace recognition may stream at, × real time (1 against the real service): sizes its timeouts. */
  pacingSpeed: z.number().positive(),
  /** New recognition sessions allowed per planned session after errors. */
  maxRestarts: z.number().int().nonnegative(),
  /** Heartbeat timeout of recognition, seconds. */
  heartbeatTimeoutSeconds: z.number().positive(),
  /** The rule file of the call's insights as the CLI stored it (cli/call-files.ts); null: the shipped one. */
  rulesKey: z.string().min(1).nullable(),
  /** The custom vocabulary every recognition session sends (cli/call-files.ts); null: none. */
  wordsKey: z.string().min(1).nullable(),
  /** Where the analysis tables are and the time zone of their days. */
  tables: z.object({ bucket: z.string().min(1), prefix: z.string(), timeZone: z.string().min(1) }),
  /** Grains of sentiment and dialog acts (schemas/text-grains.ts). */
  text: z.object({
    sentiment: z.enum(TEXT_GRAINS),
    dialogActs: z.enum([...TEXT_GRAINS, 'off']),
    windowSeconds: z.number().positive(),
  }),
  /** Where unredacted copies go and whether to redact the audio; `{}`: neither. */
  redaction: redactionInputSchema,
  /** Call reasons (schemas/reasons.ts): the model each call is classified with and from what; absent: none. */
  reasons: reasonsSettingsSchema.optional(),
  /** Transcript quality (schemas/transcript-quality.ts); absent: a spec from before it, no quality step. */
  quality: qualitySettingsSchema.optional(),
  /** The rule file's classifier rules' (model, speaker) pairs (schemas/rules.ts); absent: no line classification. */
  lineClassifiers: z.array(lineClassifierSchema).min(1).max(RULE_FILE_LIMITS.classifierModels).optional(),
});
export type CallSpec = z.infer<typeof callSpecSchema>;

/** The stored files a call is processed with (cli/call-files.ts): their keys, when given. */
export interface CallSpecFiles {
  rulesKey?: string | undefined;
  wordsKey?: string | undefined;
  /** The rule file's `reasons.model`, used when the configuration names none. */
  reasonsModel?: string | undefined;
  /** The rule file's classifier rules' (model, speaker) pairs: each line of those speakers is classified. */
  lineClassifiers?: LineClassifier[] | undefined;
}

/**
 * The spec of calls whose results go to `output`, from configuration: the one place a call's settings
 * are decided. Throws a KeyError when the configured unredacted prefix is `output` itself or inside it.
 */
export function callSpecOf(config: Config, output: OutputLocation, files: CallSpecFiles = {}): CallSpec {
  const { media, probe, asr, nlp } = taskQueues(config);
  return callSpecSchema.parse({
    queues: { media, probe, asr, nlp },
    stagingPrefix: config.s3.stagingPrefix,
    cleanupStaging: !config.s3.keepStaging,
    plan: planOptionsOf(config),
    recognition: config.service.recognition ?? 'stream',
    pacingSpeed: slowestPace(config.service.speed),
    maxRestarts: SESSION_MAX_RESTARTS,
    heartbeatTimeoutSeconds: RECOGNITION_HEARTBEAT_SECONDS,
    rulesKey: files.rulesKey ?? null,
    wordsKey: files.wordsKey ?? null,
    tables: tablesOf(config, output),
    text: textGrainsOf(config),
    redaction: redactionInputOf(config, output),
    ...reasonsOf(config, files),
    ...(files.lineClassifiers?.length ? { lineClassifiers: files.lineClassifiers } : {}),
    quality: {
      checkBelow: config.insights.misrecognitionBelow,
      reviewBelow: config.insights.reviewBelow,
    },
  } satisfies z.input<typeof callSpecSchema>);
}

/** The reasons model of the configuration, else of the rule file's, and what it reads; none: no classifying. */
export function reasonsSettingsOf(
  config: Pick<Config, 'insights'>,
  fileModel: string | undefined,
): ReasonsSettings | undefined {
  const model = config.insights.reasonsModel ?? fileModel;
  const { reasonsText: text, reasonsChars: chars } = config.insights;
  return model ? { model, text, chars } : undefined;
}

function reasonsOf(config: Config, files: CallSpecFiles) {
  const reasons = reasonsSettingsOf(config, files.reasonsModel);
  return reasons ? { reasons } : {};
}

/**
 * The spec of same-day calls (the calls a watch starts): a latency plan while the account has sessions
 * free, the spec's own (throughput) strategy when it is busy. `callpipe watch --plan throughput` keeps
 * the spec as it is.
 */
export function latencyFirst(spec: CallSpec): CallSpec {
  if (spec.plan.strategy === 'latency') return spec;
  return callSpecSchema.parse({
    ...spec,
    plan: { ...spec.plan, strategy: 'latency', throughputStrategy: spec.plan.strategy },
  });
}

/** What a caller may change of a spec for its calls (tests, benchmarks): a plan's fields merge into it. */
export type CallSpecOverrides = Partial<Omit<CallSpec, 'plan'>> & { plan?: Partial<CallPlan> };

/** `spec` with `overrides` on it, checked again. */
export function withOverrides(spec: CallSpec, overrides: CallSpecOverrides = {}): CallSpec {
  const { plan: planOverrides, ...rest } = overrides;
  return callSpecSchema.parse({ ...spec, ...rest, plan: { ...spec.plan, ...planOverrides } });
}

// --- from a configuration -------------------------------------------------------------------------------

/** The slowest pace a configured speed may send at: what time limits must allow for. */
export function slowestPace(speed: number | 'auto'): number {
  return speed === 'auto' ? 1 : speed;
}

/**
 * Session planning from configuration. The budget is the asr worker's concurrent sessions: each call is
 * cut as if it had the whole budget to itself. Several calls share it in a batch, but that costs the
 * makespan bound nothing: a call's longest session (its session audio ÷ budget) never exceeds the
 * batch's total session audio ÷ budget, so `max(longest session, total ÷ budget)` stays at its floor;
 * the price is a few more sessions (a start and a stop request, an ffmpeg run each) for short calls,
 * held back by `minSessionSeconds`. Planning for the whole batch would need every call probed first.
 */
export function planOptionsOf(config: Pick<Config, 'limits' | 'insights'>): Required<
  Pick<PlanOptions, 'maxSessionSeconds' | 'budget' | 'minSessionSeconds'>
> & {
  strategy: Config['limits']['planStrategy'];
} & Pick<PlanOptions, 'channels'> {
  const { speakerRoles: roles, separateVoices: voices } = config.insights;
  return {
    strategy: config.limits.planStrategy,
    maxSessionSeconds: config.limits.maxSessionSeconds,
    budget: config.limits.asrConcurrentSessions,
    minSessionSeconds: config.limits.minSessionSeconds,
    // Only when chosen: a call's spec names the finer settings a deployment changed (schemas/call-spec.ts).
    ...(roles !== 'evidence' || voices !== 'separate' ? { channels: { roles, voices } } : {}),
  };
}

/** Grains of the per-sentence text steps from configuration (every call's `text` input). */
function textGrainsOf(config: Pick<Config, 'insights'>): TextGrains {
  return {
    sentiment: config.insights.sentimentGrain,
    dialogActs: config.insights.dialogActs,
    windowSeconds: config.insights.windowSeconds,
  };
}

/**
 * What a call's workflow is told about redaction, for results going to `output`: where unredacted copies
 * go (checked against `output`: throws a KeyError when it is the same place) and whether to redact the
 * audio. The rules stay with the workers.
 */
export function redactionInputOf(config: Pick<Config, 'redaction'>, output: OutputLocation): RedactionInput {
  const { unredactedPrefix, audio, audioMask } = config.redaction;
  return {
    ...(unredactedPrefix ? { unredacted: unredactedLocationOf(unredactedPrefix, output) } : {}),
    ...(audio ? { audio: { mask: audioMask } } : {}),
  };
}

/** Where the analysis tables of `output` go (its bucket, the configured prefix) and their time zone. */
export function tablesOf(config: Pick<Config, 's3' | 'timeZone'>, output: OutputLocation): TablesLocation {
  return tablesLocationOf(output, { prefix: config.s3.tablesPrefix, timeZone: config.timeZone });
}
