/**
 * Media activities on a recording in object storage: each spools the source to a local copy (shared
 * by the activities of one worker), then runs the plain media functions on it. Probe and plan (which
 * stages every track) are separate activities so a long plan retries alone and the workflow shows
 * progress.
 */
import { randomUUID } from 'node:crypto';
import { rm, stat } from 'node:fs/promises';
import type { ProbeResult } from '../../schemas/media-probe.ts';
import type { PlanOptions, SessionPlan } from '../../schemas/plan.ts';
import type { RecordingSource } from '../../schemas/recording.ts';
import { redactionOutputSchema, type AudioRedaction } from '../../schemas/result.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { isPermanentS3Error, s3StatusOf } from '../storage/s3-errors.ts';
import { localCopy, storeDownload } from '../storage/source-cache.ts';
import type { HashedDownload } from '../storage/hashed-file.ts';
import { createMediaActivities, type MediaActivities } from './media-activities.ts';
import type { StagingStore } from './staging.ts';
import { activityContext } from '../activity-context.ts';
import { failureOf } from '../failure.ts';
import { FAILURE } from '../../schemas/retry-table.ts';
import { openInput } from './media-input.ts';
import { writeRedactedAudio, type AudioMask } from './redacted-audio.ts';
import { mapRedactionSpans, type FrameSpan } from './redaction-spans.ts';
import { roundSecondsToMs } from '../../schemas/units.ts';
import { scratchPath } from '../scratch.ts';

export interface RecordingMediaDeps {
  store: ObjectStore;
  /** How sources are downloaded to the worker's cache; default through `store`, on this thread. */
  download?: HashedDownload;
  staging: StagingStore;
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

/** What the redacted copy of a recording is made from, and where it goes. */
export interface RedactAudioInput {
  source: RecordingSource;
  probe: Pick<ProbeResult, 'streamIndex' | 'sampleRate' | 'channels' | 'reader'> &
    /** The recording's length (absent from calls started before it was passed): bounds the copy's time. */
    Partial<Pick<ProbeResult, 'durationSeconds'>>;
  /** The redaction step's records (staging, the store's bucket: schemas/call-keys.ts `staging.redaction`). */
  redactionKey: string;
  /** Where the copy goes: the call's output bucket and `redactedAudio` key (schemas/call-keys.ts). */
  output: { bucket: string; key: string };
  mask: AudioMask;
}

/** The worker's local copy of a source object (source-cache.ts), failing clearly when it is unreadable. */
type LocalCopy = (source: RecordingSource) => Promise<string>;

export interface PlanSourceInput {
  source: RecordingSource;
  probe: ProbeResult;
  options?: PlanOptions;
  /** The call's audio prefix (call-keys `staging.audio`): the plan stages each track there. */
  stageTracksUnder?: string;
}

async function planSource(
  media: MediaActivities,
  local: LocalCopy,
  input: PlanSourceInput,
): Promise<SessionPlan> {
  const path = await local(input.source);
  return namedBySource(input.source, path, () =>
    media.planRecording({
      path,
      probe: { ...input.probe, path },
      fingerprint: input.probe.fingerprint,
      options: input.options,
      ...(input.stageTracksUnder !== undefined ? { stageTracksUnder: input.stageTracksUnder } : {}),
    }),
  );
}

/** The masked copy made in `outPath`, from the worker's local copy (`path`) of the source. */
async function writeMaskedCopy(path: string, input: RedactAudioInput, spans: FrameSpan[], outPath: string) {
  const signal = activityContext()?.cancellationSignal;
  return namedBySource(input.source, path, async () =>
    writeRedactedAudio({
      input: await openInput(path, input.probe.reader, input.probe.streamIndex, { signal }),
      sampleRate: input.probe.sampleRate,
      channels: input.probe.channels,
      spans,
      mask: input.mask,
      outPath,
      ...(signal ? { signal } : {}),
      ...(input.probe.durationSeconds
        ? { bound: { path, sizeBytes: (await stat(path)).size, audioSeconds: input.probe.durationSeconds } }
        : {}),
    }),
  );
}

async function redactAudio(
  deps: RecordingMediaDeps,
  local: LocalCopy,
  input: RedactAudioInput,
): Promise<AudioRedaction> {
  const out = deps.store.withBucket(input.output.bucket);
  const records = redactionOutputSchema.parse(JSON.parse(await deps.store.getText(input.redactionKey)));
  const mapped = mapRedactionSpans(records.utterances, input.probe.sampleRate);
  const fail = async (reason: string): Promise<AudioRedaction> => {
    if (await out.exists(input.output.key)) await out.deleteKeys([input.output.key]);
    return { status: 'failed', reason };
  };
  if (!mapped.ok) return fail(mapped.reason);
  const path = await local(input.source);
  const outPath = scratchPath(`redacted-${randomUUID()}.flac`);
  try {
    const made = await writeMaskedCopy(path, input, mapped.spans, outPath);
    if (!made.ok) return await fail(made.reason);
    await out.putFile(input.output.key, outPath, { contentType: 'audio/flac' });
    return {
      status: 'written',
      key: input.output.key,
      mask: input.mask,
      spans: made.spans.length,
      seconds: roundSecondsToMs(made.maskedSeconds),
    };
  } finally {
    await rm(outPath, { force: true });
  }
}

export function createRecordingMediaActivities(deps: RecordingMediaDeps) {
  const media = createMediaActivities({
    store: deps.staging,
    planDefaults: deps.planDefaults,
  });
  const download = deps.download ?? storeDownload(deps.store);
  const local = async (source: RecordingSource): Promise<string> => {
    try {
      return await localCopy(download, source);
    } catch (err) {
      // A key the store refuses, or an object gone since submission, fails this call with a reason
      // rather than five retries and the S3 error's bare name ("Invalid Request").
      if (!isPermanentS3Error(err)) throw err;
      const status = s3StatusOf(err);
      const why =
        status === 404 ? 'no such object' : `object storage refused it (${status} ${(err as Error).message})`;
      throw failureOf(FAILURE.SourceUnreadable, `cannot read s3://${source.bucket}/${source.key}: ${why}`);
    }
  };

  return {
    async probeSource(input: { source: RecordingSource }): Promise<ProbeResult> {
      const path = await local(input.source);
      return namedBySource(input.source, path, () =>
        media.probeRecording({ path, fingerprint: sourceFingerprint(input.source), name: input.source.key }),
      );
    },

    planSource: (input: PlanSourceInput) => planSource(media, local, input),

    /**
     * The redacted copy of the recording (redacted-audio.ts), written to `output` only once it checked
     * out. Otherwise `failed` with the reason, and no copy: not this one, nor one an earlier run left
     * there. ffmpeg's and the store's own failures throw, to be retried.
     */
    redactAudio: (input: RedactAudioInput) => redactAudio(deps, local, input),
  };
}

export type RecordingMediaActivities = ReturnType<typeof createRecordingMediaActivities>;
