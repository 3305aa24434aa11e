/**
 * The outputs of a call (DESIGN.md, Output), as two activities. `writeResult` reads the staged Timeline
 * and text steps' outputs, assembles `result.json` (result-document.ts), writes `transcript.vtt` and the
 * call viewer `call.html` (pages/call-page.ts), then `result.json` LAST, so its presence means the call
 * is done. `writeError` writes `error.json`
 * instead when a call failed. Both are idempotent (a repeat writes the same objects again) and write
 * only the keys schemas/call-keys.ts built for the call. What they throw is typed by the activity
 * boundary (activities/failure-boundary.ts); only a document that fails its schema is typed here.
 */
import type { ZodError } from 'zod';
import {
  dialogActsOutputSchema,
  fillersOutputSchema,
  keywordsOutputSchema,
  redactionOutputSchema,
  sentimentOutputSchema,
  summaryOutputSchema,
  type ResultDocument,
  type AudioRedaction,
} from '../../schemas/result.ts';
import { timelineSchema } from '../../schemas/transcript.ts';
import {
  assertSafeCallId,
  CALL_PAGE_FILE,
  KeyError,
  relativeHref,
  type CallOutputKeys,
} from '../../schemas/call-keys.ts';
import { FAILURE } from '../../schemas/retry-table.ts';
import { failureOf } from '../failure-classifier.ts';
import type { ObjectStore } from './object-store.ts';
import { buildErrorDocument, buildResult, type ErrorParts, type ResultFacts } from './result-document.ts';
import { toWebVtt } from './webvtt.ts';
import { unredactedCopy } from './unredacted-copy.ts';
import { matchedCategories } from '../insights/score-call.ts';
import { storedRules } from '../insights/rules-file.ts';
import { renderCallPage } from '../pages/call-page.ts';

export interface WriteResultInput {
  callId: string;
  /** The call's output keys (schemas/call-keys.ts). */
  output: CallOutputKeys;
  /** Staging keys (store's bucket): the Timeline the text steps read (the redacted one), and the outputs of the steps that succeeded. */
  timelineKey: string;
  /** The redaction step's records; absent for a run from before redaction. */
  redactionKey?: string | undefined;
  /** The timeline as recognized: the unredacted copy's words. */
  recognizedTimelineKey?: string | undefined;
  /** The redacted audio's outcome; default `off`. */
  audioRedaction?: AudioRedaction | undefined;
  fillersKey?: string | undefined;
  sentimentKey?: string | undefined;
  summaryKey?: string | undefined;
  keywordsKey?: string | undefined;
  dialogActsKey?: string | undefined;
  stepFailures: { step: string; reason: string }[];
  facts: ResultFacts;
  /** A rule file the CLI stored (store's bucket, canonical JSON: `uploadKey(…, 'rules', …)`); default the shipped one. */
  rulesKey?: string | undefined;
  /** Time zone the call page shows times in (`CALLPIPE_TIME_ZONE`); default UTC. */
  timeZone?: string | undefined;
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
const json = (document: unknown) => `${JSON.stringify(document, null, 2)}\n`;

export interface ResultActivityDeps {
  /** Staging storage (the Timeline and step outputs); outputs go to its bucket unless the keys name another. */
  store: ObjectStore;
}

async function readStaged<T>(
  store: ObjectStore,
  key: string | undefined,
  parse: (v: unknown) => T,
): Promise<T | undefined> {
  if (!key) return undefined;
  return parse(JSON.parse(await store.getText(key)));
}

/**
 * The recording object's last-modified time: the call's time when no manifest gave one (the tables'
 * day partition). Undefined when the object is gone or was replaced by another version meanwhile.
 */
async function recordingTime(store: ObjectStore, source: WriteResultInput['facts']['source']) {
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
): Promise<void> {
  // The redacted copy when there is one (same length, so the transcript's times still seek right): a
  // supervisor listening from the page does not hear what the text masks.
  const redacted = result.redaction?.audio.status === 'written' ? result.redaction.audio.key : undefined;
  const audioKey = redacted ?? (result.source.bucket === keys.bucket ? result.source.key : undefined);
  const page = renderCallPage(result, {
    timeZone,
    ...(audioKey ? { audioHref: relativeHref(keys.dir, audioKey) } : {}),
  });
  await out.put(keys.page, page, { contentType: 'text/html; charset=utf-8' });
}

export function createResultActivities({ store }: ResultActivityDeps) {
  /** The keys are built by schemas/call-keys.ts; a caller-chosen call id is checked again here. */
  const outputOf = (input: { callId: string; output: CallOutputKeys }) => {
    assertSafeCallId(input.callId);
    if (!input.output.dir.endsWith(`${input.callId}/`)) {
      throw new KeyError(`output keys of ${JSON.stringify(input.output.dir)} are not call ${input.callId}'s`);
    }
    const out = input.output.bucket !== store.bucket ? store.withBucket(input.output.bucket) : store;
    // Keys built before the call page existed (a call in flight across the upgrade) have no `page`.
    const keys: CallOutputKeys = {
      ...input.output,
      page: input.output.page ?? `${input.output.dir}${CALL_PAGE_FILE}`,
    };
    return { keys, out };
  };

  const rulesOf = storedRules(store);

  return {
    /** Writes `transcript.vtt`, then `result.json` (last: its presence means done). */
    async writeResult(input: WriteResultInput): Promise<WriteResultOutput> {
      const { keys, out } = outputOf(input);
      const plain = input.redactionKey ? keys.unredacted : undefined;
      if (plain && !plain.dir.endsWith(`${input.callId}/`)) {
        throw new KeyError(`unredacted keys of ${JSON.stringify(plain.dir)} are not call ${input.callId}'s`);
      }
      const [timeline, fillers, sentiment, summary, keywords, dialogActs, rules, redaction, recognized] =
        await Promise.all([
          readStaged(store, input.timelineKey, (v) => timelineSchema.parse(v)),
          readStaged(store, input.fillersKey, (v) => fillersOutputSchema.parse(v)),
          readStaged(store, input.sentimentKey, (v) => sentimentOutputSchema.parse(v)),
          readStaged(store, input.summaryKey, (v) => summaryOutputSchema.parse(v)),
          readStaged(store, input.keywordsKey, (v) => keywordsOutputSchema.parse(v)),
          readStaged(store, input.dialogActsKey, (v) => dialogActsOutputSchema.parse(v)),
          rulesOf(input.rulesKey),
          readStaged(store, input.redactionKey, (v) => redactionOutputSchema.parse(v)),
          readStaged(store, plain ? input.recognizedTimelineKey : undefined, (v) => timelineSchema.parse(v)),
        ]);
      const lastModified = await recordingTime(store, input.facts.source);
      const result = assemble('result.json', () =>
        buildResult({
          callId: input.callId,
          timeline: timeline!,
          fillers,
          sentiment,
          summary,
          keywords,
          dialogActs,
          stepFailures: input.stepFailures,
          facts: { ...input.facts, source: { ...input.facts.source, lastModified } },
          rules,
          redaction: redaction && {
            output: redaction,
            unredactedCopy: !!(plain && recognized),
            audio: input.audioRedaction ?? { status: 'off' },
          },
        }),
      );
      // The unredacted copy first: once result.json is there the call is done, copy or not.
      if (plain && redaction && recognized) {
        const copy = unredactedCopy(result, redaction, recognized);
        const to = plain.bucket !== store.bucket ? store.withBucket(plain.bucket) : store;
        await to.put(plain.transcript, toWebVtt(copy.utterances), { contentType: 'text/vtt; charset=utf-8' });
        await to.put(plain.result, json(copy), JSON_TYPE);
      }
      await out.put(keys.transcript, toWebVtt(result.utterances), {
        contentType: 'text/vtt; charset=utf-8',
      });
      await writeCallPage(out, keys, result, input.timeZone ?? 'UTC');
      await out.put(keys.result, json(result), JSON_TYPE);
      // An error.json of an earlier failed run would contradict the result now beside it.
      if (await out.exists(keys.error)) await out.deletePrefix(keys.error);
      return {
        bucket: out.bucket,
        resultKey: keys.result,
        vttKey: keys.transcript,
        utterances: result.utterances.length,
        categories: matchedCategories({ categories: result.categories ?? [] }),
      };
    },

    /** Writes `error.json` (stage and reason) for a call that failed. */
    async writeError(input: WriteErrorInput): Promise<WriteErrorOutput> {
      const { keys, out } = outputOf(input);
      const document = assemble('error.json', () => buildErrorDocument(input));
      await out.put(keys.error, json(document), JSON_TYPE);
      return { bucket: out.bucket, errorKey: keys.error };
    },
  };
}

export type ResultActivities = ReturnType<typeof createResultActivities>;
