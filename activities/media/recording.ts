/**
 * Media activities on a recording in object storage: each spools the source to a local copy (shared
 * by the activities of one worker), then runs the plain media functions on it. Probe, plan and
 * transcode are separate activities so a long transcode retries alone and the workflow shows progress.
 */
import type { ProbeResult } from '../../schemas/media-probe.ts';
import type { SessionAudioFormat, StagedSession } from '../../schemas/media-transcode.ts';
import type { PlanOptions, SessionPlan } from '../../schemas/plan.ts';
import type { RecordingSource } from '../../schemas/recording.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { localCopy } from '../storage/source-cache.ts';
import { createMediaActivities } from './activities.ts';
import type { StagingStore } from './staging.ts';

export interface RecordingMediaDeps {
  store: ObjectStore;
  staging: StagingStore;
  stagingPrefix: string;
  planDefaults?: PlanOptions;
}

/** The fingerprint of an object version: content identity without reading the content twice. */
function sourceFingerprint(source: RecordingSource): string | undefined {
  return source.etag ? `etag:${source.etag}` : undefined;
}

export function createRecordingMediaActivities(deps: RecordingMediaDeps) {
  const media = createMediaActivities({
    store: deps.staging,
    keyPrefix: deps.stagingPrefix,
    planDefaults: deps.planDefaults,
  });
  const local = (source: RecordingSource) => localCopy(deps.store, source);

  return {
    async probeSource(input: { source: RecordingSource }): Promise<ProbeResult> {
      const path = await local(input.source);
      return media.probeRecording({ path, fingerprint: sourceFingerprint(input.source) });
    },

    async planSource(input: {
      source: RecordingSource;
      probe: ProbeResult;
      options?: PlanOptions;
    }): Promise<SessionPlan> {
      const path = await local(input.source);
      return media.planRecording({
        path,
        probe: { ...input.probe, path },
        fingerprint: input.probe.fingerprint,
        options: input.options,
      });
    },

    /**
     * Staged under the call's own `keyPrefix`: two calls of identical content must not share (and
     * clean up) each other's audio; retries of one call still find their earlier output.
     */
    async transcodeSource(input: {
      source: RecordingSource;
      keyPrefix: string;
      fingerprint: string;
      streamIndex: number;
      track: number;
      sourceChannels: number[];
      start: number;
      end: number;
      format: SessionAudioFormat;
    }): Promise<StagedSession> {
      const { source, keyPrefix, ...rest } = input;
      const path = await local(source);
      const callMedia = createMediaActivities({
        store: deps.staging,
        keyPrefix,
        planDefaults: deps.planDefaults,
      });
      return callMedia.transcodeSession({ ...rest, path });
    },
  };
}

export type RecordingMediaActivities = ReturnType<typeof createRecordingMediaActivities>;
