/**
 * Media activities on a recording in object storage: each spools the source to a local copy (shared
 * by the activities of one worker), then runs the plain media functions on it. Probe, plan and
 * transcode are separate activities so a long transcode retries alone and the workflow shows progress.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ProbeResult } from '../../schemas/media-probe.ts';
import type { StagedSession } from '../../schemas/media-transcode.ts';
import type { PlanOptions, SessionPlan } from '../../schemas/plan.ts';
import type { RecordingSource } from '../../schemas/recording.ts';
import { isPermanentS3Error, s3StatusOf, type ObjectStore } from '../storage/object-store.ts';
import { localCopy } from '../storage/source-cache.ts';
import { createMediaActivities, type TranscodeSessionActivityInput } from './activities.ts';
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

/**
 * The worker's local copy is a hashed cache path that means nothing to the reader of `error.json`:
 * failures name the object instead (`s3://bucket/key`). The error keeps its class (the activity
 * boundary types it from the retry table) and its stack, which still shows the local path to operators.
 */
async function namedBySource<T>(source: RecordingSource, path: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof Error && err.message.includes(path))
      err.message = err.message.split(path).join(`s3://${source.bucket}/${source.key}`);
    throw err;
  }
}

export function createRecordingMediaActivities(deps: RecordingMediaDeps) {
  const media = createMediaActivities({
    store: deps.staging,
    keyPrefix: deps.stagingPrefix,
    planDefaults: deps.planDefaults,
  });
  const local = async (source: RecordingSource): Promise<string> => {
    try {
      return await localCopy(deps.store, source);
    } catch (err) {
      // A key the store refuses, or an object gone since submission, fails this call with a reason
      // rather than five retries and the S3 error's bare name ("Invalid Request").
      if (!isPermanentS3Error(err)) throw err;
      const status = s3StatusOf(err);
      const why =
        status === 404 ? 'no such object' : `object storage refused it (${status} ${(err as Error).message})`;
      throw ApplicationFailure.create({
        type: 'SourceUnreadable',
        message: `cannot read s3://${source.bucket}/${source.key}: ${why}`,
        nonRetryable: true,
      });
    }
  };

  return {
    async probeSource(input: { source: RecordingSource }): Promise<ProbeResult> {
      const path = await local(input.source);
      return namedBySource(input.source, path, () =>
        media.probeRecording({ path, fingerprint: sourceFingerprint(input.source), name: input.source.key }),
      );
    },

    async planSource(input: {
      source: RecordingSource;
      probe: ProbeResult;
      options?: PlanOptions;
    }): Promise<SessionPlan> {
      const path = await local(input.source);
      return namedBySource(input.source, path, () =>
        media.planRecording({
          path,
          probe: { ...input.probe, path },
          fingerprint: input.probe.fingerprint,
          options: input.options,
        }),
      );
    },

    /**
     * Staged under the call's own `keyPrefix`: two calls of identical content must not share (and
     * clean up) each other's audio; retries of one call still find their earlier output.
     */
    async transcodeSource(
      input: Omit<TranscodeSessionActivityInput, 'path'> & { source: RecordingSource; keyPrefix: string },
    ): Promise<StagedSession> {
      const { source, keyPrefix, ...rest } = input;
      const path = await local(source);
      const callMedia = createMediaActivities({
        store: deps.staging,
        keyPrefix,
        planDefaults: deps.planDefaults,
      });
      return namedBySource(source, path, () => callMedia.transcodeSession({ ...rest, path }));
    },
  };
}

export type RecordingMediaActivities = ReturnType<typeof createRecordingMediaActivities>;
