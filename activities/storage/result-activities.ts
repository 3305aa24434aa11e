/**
 * The outputs of a call (docs/design.md, Output). `publishResult` (the publish stage) reads the staged
 * Timeline, text steps' outputs and the insights stage's document, assembles `result.json`
 * (result-document.ts), writes `transcript.vtt` and the call viewer `call.html` (pages/call-page.ts),
 * then `result.json` LAST, so its presence means the call is done. `writeError` writes
 * `error.json` instead when a call failed. All are idempotent (a repeat writes the same objects again)
 * and write only the keys schemas/call-keys.ts built for the call. What they throw is typed by the
 * activity boundary (activities/failure-boundary.ts); only a document that fails its schema is typed here.
 */
import type { ZodError } from 'zod';
import type { AudioRedaction, RedactionOutput, ResultDocument, SourceFacts } from '../../schemas/result.ts';
import {
  maskPersonalMetadata,
  personalColumnsOf,
  type PersonalValue,
} from '../../schemas/personal-columns.ts';
import { personalDigest } from '../../schemas/personal-digest.ts';
import { personalValuesInKey } from './call-id.ts';
import { callInsightsDocumentSchema, type CallInsightsDocument } from '../../schemas/insights.ts';
import { timelineSchema, type Timeline } from '../../schemas/transcript.ts';
import { assertSafeCallId, KeyError, relativeHref, type CallOutputKeys } from '../../schemas/call-keys.ts';
import { FAILURE } from '../../schemas/retry-table.ts';
import { failureOf } from '../failure.ts';
import { onBucket, type ObjectStore } from './object-store.ts';
import {
  assembleResult,
  buildErrorDocument,
  type ErrorParts,
  type ResultFacts,
  type ResultParts,
} from './result-document.ts';
import {
  readStaged,
  readStagedOutputs,
  type StagedOutputKeys,
  type StagedOutputs,
} from './staged-outputs.ts';
import { toWebVtt } from './webvtt.ts';
import { unredactedCopy } from './unredacted-copy.ts';
import { matchedCategories } from '../insights/score-call.ts';
import { renderCallPage } from '../pages/call-page.ts';
import { shownSource } from '../tables/rows.ts';
import type { CallIdMode } from '../../schemas/config.ts';

/** What publish reads and writes: the staged outputs, the run's facts, the output keys. */
export interface PublishInput extends StagedOutputKeys {
  callId: string;
  /** The call's output keys (schemas/call-keys.ts). */
  output: CallOutputKeys;
  /** The timeline as recognized: the unredacted copy's words. */
  recognizedTimelineKey?: string | undefined;
  /** The redacted audio's outcome; default `off`. */
  audioRedaction?: AudioRedaction | undefined;
  stepFailures: { step: string; reason: string }[];
  facts: ResultFacts;
  /** Time zone the call page shows times in (`CALLPIPE_TIME_ZONE`); default UTC. */
  timeZone?: string | undefined;
}

/** The publish stage's input: the insights stage's document beside the staged outputs. */
export interface PublishResultInput extends PublishInput {
  /** The insights stage's document (staging key `insights`, schemas/insights.ts). */
  insightsKey: string;
}

export interface WriteResultOutput {
  bucket: string;
  resultKey: string;
  vttKey: string;
  utterances: number;
  /** Names of the categories the call matched (the `CallpipeCategories` search attribute). */
  categories?: string[];
}

/** The failure's stage and reason; written at the time of the write. */
export interface WriteErrorInput extends Omit<ErrorParts, 'writtenAt'> {
  /** The call's output keys (schemas/call-keys.ts). */
  output: CallOutputKeys;
}

export interface WriteErrorOutput {
  bucket: string;
  errorKey: string;
}

/** A document that cannot be valid however often it is retried: a bug upstream, said plainly. */
function invalidDocument(what: string, err: unknown): unknown {
  if (!(err instanceof Error && err.name === 'ZodError')) return err;
  const issue = (err as ZodError).issues[0];
  const where = issue?.path.length ? issue.path.join('.') : '(document)';
  return failureOf(FAILURE.InvalidResultDocument, `${what}: ${where}: ${issue?.message ?? 'invalid'}`);
}

/** Assembles a document, a schema failure typed as such (a ZodError elsewhere is a staged input's). */
function assemble<T>(what: string, build: () => T): T {
  try {
    return build();
  } catch (err) {
    throw invalidDocument(what, err);
  }
}

const JSON_TYPE = { contentType: 'application/json; charset=utf-8' };
const VTT_TYPE = { contentType: 'text/vtt; charset=utf-8' };
const json = (document: unknown) => `${JSON.stringify(document, null, 2)}\n`;

export interface ResultActivityDeps {
  /** Staging storage (the Timeline and step outputs); outputs go to its bucket unless the keys name another. */
  store: ObjectStore;
  /** Manifest columns that hold personal data, column → kind (default: the common names alone). */
  personalColumns?: Readonly<Record<string, string>>;
  /** Key of personal values' digests (schemas/personal-digest.ts); without it, none is written. */
  digestKey?: Buffer | undefined;
  /** The call id rule (config `callIds`): how the call page shows the recording's key; default auto. */
  callIds?: CallIdMode;
}

/**
 * The recording object's last-modified time: the call's time when no manifest gave one (the tables'
 * day partition). The starter's (the version the call read, looked up or listed when it was started),
 * else the object's now: undefined when it is gone or was replaced by another version meanwhile.
 */
async function recordingTime(store: ObjectStore, source: PublishInput['facts']['source']) {
  if (source.lastModified) return source.lastModified;
  const head = await store
    .withBucket(source.bucket)
    .head(source.key)
    .catch(() => undefined);
  if (!head?.lastModified || (source.etag && head.etag && head.etag !== source.etag.replaceAll('"', ''))) {
    return undefined;
  }
  return head.lastModified.toISOString();
}

/**
 * The call viewer beside result.json (pages/call-page.ts), linking the redacted copy of the recording when
 * one was written, else the recording by its key when the page is served from the same bucket (a static
 * site, a local mirror); the rescore writes it again too.
 */
export async function writeCallPage(
  out: ObjectStore,
  keys: Pick<CallOutputKeys, 'bucket' | 'dir' | 'page'>,
  result: ResultDocument,
  timeZone: string,
  callIds: CallIdMode = 'auto',
): Promise<void> {
  // The redacted copy when there is one (same length, so the transcript's times still seek right): a
  // supervisor listening from the page does not hear what the text masks. The recording is linked only
  // when its key holds no personal data: a link would put the caller number in the page.
  const redacted = result.redaction?.audio.status === 'written' ? result.redaction.audio.key : undefined;
  const plainKey = shownSource(result.source, callIds).key === result.source.key;
  const audioKey =
    redacted ?? (result.source.bucket === keys.bucket && plainKey ? result.source.key : undefined);
  const page = renderCallPage(result, {
    timeZone,
    callIds,
    ...(audioKey ? { audioHref: relativeHref(keys.dir, audioKey) } : {}),
  });
  await out.put(keys.page, page, { contentType: 'text/html; charset=utf-8' });
}

/** result.json's parts from the staged outputs and the facts the workflow gathered. */
function resultPartsOf(
  input: PublishInput,
  staged: StagedOutputs,
  lastModified: string | undefined,
  unredactedCopy: boolean,
): Omit<ResultParts, 'rules'> {
  const { redaction, ...outputs } = staged;
  return {
    callId: input.callId,
    ...outputs,
    stepFailures: input.stepFailures,
    facts: { ...input.facts, source: { ...input.facts.source, lastModified } },
    redaction: redaction && {
      output: redaction,
      unredactedCopy,
      audio: input.audioRedaction ?? { status: 'off' },
    },
  };
}

/** The insights stage's document, checked to be this call's (a staged part of another is a bug). */
function insightsOf(callId: string, value: unknown): CallInsightsDocument {
  const document = callInsightsDocumentSchema.parse(value);
  if (document.callId !== callId) {
    throw new KeyError(`the insights document of call ${document.callId} is not call ${callId}'s`);
  }
  return document;
}

/** The keyed digests of the personal values in a recording's key (once each); none without a key. */
function keyDigests(key: string, digestKey: Buffer | undefined): PersonalValue[] {
  if (!digestKey) return [];
  const digests = new Map<string, PersonalValue>();
  for (const { kind, value } of personalValuesInKey(key)) {
    const digest = personalDigest(digestKey, kind, value);
    if (digest && !digests.has(digest)) digests.set(digest, { kind, digest, origin: 'source' });
  }
  return [...digests.values()];
}

/** The keys are built by schemas/call-keys.ts; a caller-chosen call id is checked again here. */
function outputTargetOf(store: ObjectStore, input: { callId: string; output: CallOutputKeys }) {
  assertSafeCallId(input.callId);
  if (!input.output.dir.endsWith(`${input.callId}/`)) {
    throw new KeyError(`output keys of ${JSON.stringify(input.output.dir)} are not call ${input.callId}'s`);
  }
  const out = onBucket(store, input.output.bucket);
  return { keys: input.output, out };
}

export function createResultActivities({ store, personalColumns, digestKey, callIds }: ResultActivityDeps) {
  const columns = personalColumnsOf(personalColumns);
  /** A document as stored: personal manifest columns masked, their values kept as digests alone. */
  // The values in the recording's key (a caller number in its file name) are digested too, so `find`
  // answers for them; the key itself stays in result.json, as the call's source.
  const withoutPersonalColumns = <T extends { source: SourceFacts }>(document: T): T => {
    const { metadata, personalValues } = document.source.metadata
      ? maskPersonalMetadata(document.source.metadata, columns, digestKey)
      : { metadata: undefined, personalValues: [] as PersonalValue[] };
    personalValues.push(...keyDigests(document.source.key, digestKey));
    if (!metadata && personalValues.length === 0) return document;
    return {
      ...document,
      source: {
        ...document.source,
        ...(metadata ? { metadata } : {}),
        ...(personalValues.length > 0 ? { personalValues } : {}),
      },
    };
  };
  const outputOf = (input: { callId: string; output: CallOutputKeys }) => outputTargetOf(store, input);

  /** The staged outputs, the unredacted copy's inputs and the recording's time, read at once. */
  const readParts = async (input: PublishInput, keys: CallOutputKeys) => {
    const plain = input.redactionKey ? keys.unredacted : undefined;
    if (plain && !plain.dir.endsWith(`${input.callId}/`)) {
      throw new KeyError(`unredacted keys of ${JSON.stringify(plain.dir)} are not call ${input.callId}'s`);
    }
    const [staged, recognized, lastModified] = await Promise.all([
      readStagedOutputs(store, input),
      readStaged(store, plain ? input.recognizedTimelineKey : undefined, (v) => timelineSchema.parse(v)),
      recordingTime(store, input.facts.source),
    ]);
    const copy = plain && staged.redaction && recognized ? { plain, recognized } : undefined;
    return { staged, copy, parts: resultPartsOf(input, staged, lastModified, !!copy) };
  };

  /** The unredacted copy, transcript.vtt, call.html, then result.json: done once it is there. */
  const writeOutputs = async (
    input: PublishInput,
    target: ReturnType<typeof outputOf>,
    result: ResultDocument,
    redaction: RedactionOutput | undefined,
    copy: { plain: NonNullable<CallOutputKeys['unredacted']>; recognized: Timeline } | undefined,
  ): Promise<WriteResultOutput> => {
    const { keys, out } = target;
    // The unredacted copy keeps the manifest's values; every other output has them masked.
    const stored = withoutPersonalColumns(result);
    // The unredacted copy first: once result.json is there the call is done, copy or not.
    if (copy && redaction) {
      const plainResult = unredactedCopy(result, redaction, copy.recognized);
      const to = onBucket(store, copy.plain.bucket);
      await to.put(copy.plain.transcript, toWebVtt(plainResult.utterances), VTT_TYPE);
      await to.put(copy.plain.result, json(plainResult), JSON_TYPE);
    }
    await out.put(keys.transcript, toWebVtt(result.utterances), VTT_TYPE);
    await writeCallPage(out, keys, stored, input.timeZone ?? 'UTC', callIds);
    await out.put(keys.result, json(stored), JSON_TYPE);
    // An error.json of an earlier failed run would contradict the result now beside it.
    if (await out.exists(keys.error)) await out.deletePrefix(keys.error);
    return {
      bucket: out.bucket,
      resultKey: keys.result,
      vttKey: keys.transcript,
      utterances: result.utterances.length,
      categories: matchedCategories({ categories: result.categories ?? [] }),
    };
  };

  return {
    /** The publish stage: result.json from the staged outputs and the insights stage's document. */
    async publishResult(input: PublishResultInput): Promise<WriteResultOutput> {
      const target = outputOf(input);
      const [{ staged, copy, parts }, insights] = await Promise.all([
        readParts(input, target.keys),
        readStaged(store, input.insightsKey, (v) => insightsOf(input.callId, v)),
      ]);
      const result = assemble('result.json', () => assembleResult(parts, insights!));
      return writeOutputs(input, target, result, staged.redaction, copy);
    },

    /** Writes `error.json` (stage and reason) for a call that failed. */
    async writeError(input: WriteErrorInput): Promise<WriteErrorOutput> {
      const { keys, out } = outputOf(input);
      const document = withoutPersonalColumns(assemble('error.json', () => buildErrorDocument(input)));
      await out.put(keys.error, json(document), JSON_TYPE);
      return { bucket: out.bucket, errorKey: keys.error };
    },
  };
}

export type ResultActivities = ReturnType<typeof createResultActivities>;
