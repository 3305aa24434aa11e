/**
 * The media activities (task queue `callpipe-media`): thin wrappers that take small JSON inputs, call
 * the plain functions of this folder and return small JSON outputs; audio goes through staging
 * storage, never through workflow history. Errors leave as their classes (errors.ts); the worker's
 * activity boundary (activities/failure-boundary.ts) types them from the retry table.
 */
import type { ProbeResult } from '../../schemas/media-probe.ts';
import type { PlanOptions, SessionPlan } from '../../schemas/plan.ts';
import { activityContext } from '../activity-context.ts';
import { planRecording as planFromProbe } from './plan.ts';
import { probeRecording as probeFile } from './probe.ts';
import type { StagingStore } from './staging.ts';
import type { MediaTimeBounds } from './time-bound.ts';

export interface MediaActivityDeps {
  /** Where a plan's tracks are staged (S3 in production, a local directory in tests). */
  store: StagingStore;
  /** Plan options used when an input gives none (e.g. maxSessionSeconds from config). */
  planDefaults?: PlanOptions;
  /** Cancellation of the current activity; default: the Temporal activity context's signal, when there is one. */
  cancellationSignal?: () => AbortSignal | undefined;
  /** Wall-clock bounds of the tool runs (time-bound.ts); default: the product's. Small in tests. */
  timeBounds?: MediaTimeBounds;
}

export interface ProbeRecordingInput {
  /** Local file (S3 objects are spooled to a temp file by the caller). */
  path: string;
  /** A fingerprint already known (e.g. the S3 ETag); default: SHA-256 of the content. */
  fingerprint?: string;
  /** The recording's own name (the object key), whose extension names a headerless format; default: the path. */
  name?: string;
}

export interface PlanRecordingInput {
  path: string;
  /** The probe's result, when the workflow already has it (saves a decode pass). */
  probe?: ProbeResult;
  fingerprint?: string;
  options?: PlanOptions;
  /**
   * Stage each track whole under this key prefix (the call's audio prefix), for sessions to read by
   * byte range (staged-tracks.ts); absent, the plan stages nothing (tests and benchmarks of the planner).
   */
  stageTracksUnder?: string;
}

export function createMediaActivities(deps: MediaActivityDeps) {
  const signal = () =>
    deps.cancellationSignal ? deps.cancellationSignal() : activityContext()?.cancellationSignal;
  return {
    async probeRecording(input: ProbeRecordingInput): Promise<ProbeResult> {
      return probeFile(input.path, {
        fingerprint: input.fingerprint,
        name: input.name,
        signal: signal(),
        timeBounds: deps.timeBounds,
      });
    },

    async planRecording(input: PlanRecordingInput): Promise<SessionPlan> {
      const probe =
        input.probe ??
        (await probeFile(input.path, {
          fingerprint: input.fingerprint,
          signal: signal(),
          timeBounds: deps.timeBounds,
        }));
      return planFromProbe(
        { ...probe, path: input.path },
        { ...deps.planDefaults, ...input.options },
        signal(),
        deps.timeBounds,
        input.stageTracksUnder !== undefined
          ? { store: deps.store, keyPrefix: input.stageTracksUnder }
          : undefined,
      );
    },
  };
}

export type MediaActivities = ReturnType<typeof createMediaActivities>;
