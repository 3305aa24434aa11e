/**
 * Every object key of a call, in one place: where its recording was uploaded, its staged
 * audio and intermediates, its partial results, its outputs (`result.json`, `transcript.vtt`,
 * `error.json`, the redacted audio, and the unredacted copies under a prefix of their own) and its
 * batch's report. Keys are built once from the configuration, the call id and the
 * workflow id, and then passed around as data; nothing else in callpipe concatenates a prefix.
 *
 * Every spelling of a prefix a user may write (`results`, `results/`, `/results`, `a//b/`, empty, or an
 * `s3://bucket/prefix` URL) is normalized here and only here: `''` or `seg/…/seg/` with one trailing
 * slash. Before this module, `res2` (no slash) made the done-check look for `res2<callId>/result.json`
 * while the writer wrote `res2/<callId>/result.json`, so every run re-processed every call.
 *
 * Pure TypeScript with no imports: workflow code uses it, and workflow code must be deterministic.
 */

/** A key or prefix that would leave the place it is meant for; never worth a retry. */
export class KeyError extends Error {
  override name = 'KeyError';
}

export const RESULT_FILE = 'result.json';
const TRANSCRIPT_FILE = 'transcript.vtt';
export const ERROR_FILE = 'error.json';
/** The call viewer: a self-contained HTML page beside result.json. */
const CALL_PAGE_FILE = 'call.html';
/** The recording with every redacted span masked (opt-in), FLAC: lossless, and no 4-GB limit as WAV has. */
export const REDACTED_AUDIO_FILE = 'audio.redacted.flac';

/** Where results go: a bucket and a normalized key prefix (`''` or ending in exactly one `/`). */
export interface OutputLocation {
  bucket: string;
  prefix: string;
}

/** Call ids name a folder: letters, digits, `.`, `_`, `-`; never `..`, a slash or a leading dot. */
const SAFE_CALL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function assertSafeCallId(callId: string): string {
  if (!SAFE_CALL_ID.test(callId) || callId.includes('..')) {
    throw new KeyError(
      `unsafe call id ${JSON.stringify(callId.slice(0, 140))}: letters, digits, '.', '_' and '-' only, no '..'`,
    );
  }
  return callId;
}

/** `s3://bucket/key…` → its parts; anything else → undefined. */
export function parseS3Url(url: string): { bucket: string; key: string } | undefined {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(url);
  return m ? { bucket: m[1]!, key: m[2]! } : undefined;
}

/**
 * A key prefix as `''` or `seg/…/seg/`: repeated and trailing slashes folded, one added. Refuses what
 * would leave the intended folder or means something else elsewhere: an absolute path (`/results`),
 * `.` or `..` segments, backslashes, control characters.
 */
export function normalizePrefix(prefix: string): string {
  if (prefix.startsWith('/') || prefix.includes('\\') || [...prefix].some((c) => c.charCodeAt(0) < 0x20)) {
    throw new KeyError(`key prefix ${JSON.stringify(prefix)} must be a relative key prefix`);
  }
  const segments = prefix.split('/').filter((s) => s !== '');
  if (segments.some((s) => s === '..' || s === '.')) {
    throw new KeyError(`key prefix ${JSON.stringify(prefix)} must not hold '.' or '..' segments`);
  }
  return segments.length === 0 ? '' : `${segments.join('/')}/`;
}

/**
 * An output location from what a user wrote: an `s3://bucket/prefix` URL, or a key prefix in
 * `defaultBucket`. Other URL schemes are refused (a local directory is the CLI's business, not a key).
 */
export function outputLocationOf(spelling: string, defaultBucket: string): OutputLocation {
  const s3 = parseS3Url(spelling);
  if (s3) return { bucket: s3.bucket, prefix: normalizePrefix(s3.key) };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(spelling)) {
    throw new KeyError(`output ${JSON.stringify(spelling)}: only s3:// URLs and key prefixes are supported`);
  }
  return { bucket: defaultBucket, prefix: normalizePrefix(spelling) };
}

/** The same location with its prefix normalized (idempotent: safe on any location, old or new). */
export function normalizeLocation(output: OutputLocation): OutputLocation {
  return { bucket: output.bucket, prefix: normalizePrefix(output.prefix) };
}

/** `s3://bucket/prefix` of a location, for reports and messages. */
export function locationUrl(output: OutputLocation): string {
  return `s3://${output.bucket}/${normalizePrefix(output.prefix)}`;
}

/** The outputs of a call: `<prefix><callId>/{result.json,transcript.vtt,error.json,…}` in `bucket`. */
export interface CallOutputKeys {
  bucket: string;
  dir: string;
  result: string;
  transcript: string;
  error: string;
  /** The call viewer page (written beside result.json, before it). */
  page: string;
  /** The redacted copy of the audio, when asked for. Absent in keys built before 0.2.0. */
  redactedAudio?: string;
  /**
   * Where the unredacted result.json and transcript.vtt go, when configured: a location of its own, so
   * that a bucket policy can restrict who reads it.
   */
  unredacted?: { bucket: string; dir: string; result: string; transcript: string };
}

export function callOutputKeys(
  output: OutputLocation,
  callId: string,
  unredacted?: OutputLocation,
): CallOutputKeys {
  const dir = `${normalizePrefix(output.prefix)}${assertSafeCallId(callId)}/`;
  const plainDir = unredacted ? `${normalizePrefix(unredacted.prefix)}${callId}/` : undefined;
  return {
    bucket: output.bucket,
    dir,
    result: `${dir}${RESULT_FILE}`,
    transcript: `${dir}${TRANSCRIPT_FILE}`,
    error: `${dir}${ERROR_FILE}`,
    page: `${dir}${CALL_PAGE_FILE}`,
    redactedAudio: `${dir}${REDACTED_AUDIO_FILE}`,
    ...(unredacted && plainDir
      ? {
          unredacted: {
            bucket: unredacted.bucket,
            dir: plainDir,
            result: `${plainDir}${RESULT_FILE}`,
            transcript: `${plainDir}${TRANSCRIPT_FILE}`,
          },
        }
      : {}),
  };
}

/** A link from a page in folder `fromDir` to the object `toKey` of the same bucket, each segment URL-encoded. */
export function relativeHref(fromDir: string, toKey: string): string {
  const depth = normalizePrefix(fromDir).split('/').length - 1;
  return `${'../'.repeat(depth)}${toKey.split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * Where unredacted copies go, from what a user configured (`s3://bucket/prefix` or a key prefix of the
 * output bucket). Refused when it is the output location, inside it or holds it: the copies must sit
 * where a bucket policy can keep them from readers of the redacted results.
 */
export function unredactedLocationOf(spelling: string, output: OutputLocation): OutputLocation {
  const location = outputLocationOf(spelling, output.bucket);
  const out = normalizeLocation(output);
  if (
    location.bucket === out.bucket &&
    (location.prefix.startsWith(out.prefix) || out.prefix.startsWith(location.prefix))
  ) {
    throw new KeyError(
      `the unredacted prefix ${locationUrl(location)} must not be, hold or lie inside the output ${locationUrl(out)}`,
    );
  }
  return location;
}

/**
 * A call's staging folder (in the store's own bucket): `<staging>calls/<callId>/<workflowId>/`. The
 * workflow id is part of it, so a `--redo` or a new version of the recording never reads another run's
 * intermediates; two calls of identical audio never share staged audio either.
 */
export interface CallStagingKeys {
  dir: string;
  /** Prefix of the transcoded sessions (media/staging.ts adds fingerprint, track and range). */
  audio: string;
  /** Prefix of the recognized sessions: see {@link sessionResultKey}. */
  sessions: string;
  timeline: string;
  /** The timeline with speakers separated and named (activities/speakers/): what redaction reads. */
  speakersTimeline: string;
  /** The speakers stage's document (schemas/speakers.ts): what publish copies into result.json. */
  speakers: string;
  fillers: string;
  summary: string;
  sentiment: string;
  keywords: string;
  dialogActs: string;
  /** The reasons step's output (schemas/result.ts, reasonsOutputSchema). */
  reasons: string;
  /** The quality step's output (schemas/result.ts, qualityOutputSchema). */
  quality: string;
  /** The line classification step's output (schemas/result.ts, lineClassesOutputSchema). */
  lineClasses: string;
  /** The redaction step's records (schemas/result.ts, redactionOutputSchema). */
  redaction: string;
  /** The timeline with personal data masked: what every text step after redaction reads. */
  redactedTimeline: string;
  /** The insights stage's document (schemas/insights.ts): what publish copies into result.json. */
  insights: string;
}

/** Workflow ids may hold characters a key should not; they are replaced, the id stays readable. */
function keySafe(id: string): string {
  return id.replace(/[^A-Za-z0-9._@-]/g, '_');
}

function callStagingKeys(stagingPrefix: string, callId: string, workflowId: string): CallStagingKeys {
  const dir = `${normalizePrefix(stagingPrefix)}calls/${assertSafeCallId(callId)}/${keySafe(workflowId)}/`;
  return {
    dir,
    audio: `${dir}audio/`,
    sessions: `${dir}sessions/`,
    timeline: `${dir}timeline.json`,
    speakersTimeline: `${dir}timeline.speakers.json`,
    speakers: `${dir}speakers.json`,
    fillers: `${dir}fillers.json`,
    summary: `${dir}summary.json`,
    sentiment: `${dir}sentiment.json`,
    keywords: `${dir}keywords.json`,
    dialogActs: `${dir}dialog-acts.json`,
    reasons: `${dir}reasons.json`,
    quality: `${dir}quality.json`,
    lineClasses: `${dir}line-classes.json`,
    redaction: `${dir}redaction.json`,
    redactedTimeline: `${dir}timeline.redacted.json`,
    insights: `${dir}insights.json`,
  };
}

/** Every key of one run of a call. */
export interface CallKeys {
  callId: string;
  output: CallOutputKeys;
  staging: CallStagingKeys;
}

export function callKeys(input: {
  output: OutputLocation;
  stagingPrefix: string;
  callId: string;
  workflowId: string;
  /** Where unredacted copies go, when configured (already checked by {@link unredactedLocationOf}). */
  unredacted?: OutputLocation | undefined;
}): CallKeys {
  return {
    callId: input.callId,
    output: callOutputKeys(input.output, input.callId, input.unredacted),
    staging: callStagingKeys(input.stagingPrefix, input.callId, input.workflowId),
  };
}

/** A recognized session's result: `<staging>sessions/0003.json`. */
export function sessionResultKey(staging: Pick<CallStagingKeys, 'sessions'>, session: number): string {
  return `${staging.sessions}${String(session).padStart(4, '0')}.json`;
}

/** The results of one group of pieces recognized by file requests (activities/asr/pieces-activities.ts). */
export function pieceGroupResultKey(staging: Pick<CallStagingKeys, 'sessions'>, group: number): string {
  return `${staging.sessions}pieces-${String(group).padStart(4, '0')}.json`;
}

/** The partial results of a session still being recognized, beside its result. */
export function partialResultKey(resultKey: string): string {
  return `${resultKey}.partial.json`;
}

/**
 * The recognition checkpoints of a call (activities/asr/checkpoint-book.ts): `<staging>checkpoints/`, in
 * the call's staging folder (the one holding the `sessions/` folder of `resultKey`), so deleting the
 * call's staging or forgetting the call removes them.
 */
export function sessionCheckpointsPrefix(resultKey: string): string {
  const sessionsDir = resultKey.slice(0, resultKey.lastIndexOf('/') + 1);
  const callDir = sessionsDir.slice(0, sessionsDir.lastIndexOf('/', sessionsDir.length - 2) + 1);
  return `${callDir}checkpoints/`;
}

/** One asr process's checkpoint of a call's sessions: `<staging>checkpoints/<writerId>.json`. */
export function sessionCheckpointKey(resultKey: string, writerId: string): string {
  return `${sessionCheckpointsPrefix(resultKey)}${writerId}.json`;
}

/** A step's checkpoint (progress of earlier attempts), beside its output. */
export function checkpointKey(outputKey: string): string {
  return `${outputKey}.checkpoint.json`;
}

/** A batch's report folder: `<prefix>batches/<batchId>/` (call ids never equal `batches`). */
export function batchReportPrefix(output: OutputLocation, batchId: string): string {
  return `${normalizePrefix(output.prefix)}batches/${batchId.replace(/[^A-Za-z0-9._-]/g, '_')}/`;
}

/** The files of a batch's report: `report.json`, `report.csv` and the night report `report.html`. */
export function batchReportKeys(reportPrefix: string): { json: string; csv: string; html: string } {
  return {
    json: `${reportPrefix}report.json`,
    csv: `${reportPrefix}report.csv`,
    html: `${reportPrefix}report.html`,
  };
}

/**
 * From a batch's report folder to a call's page: the night report links each call relatively, so the
 * links work wherever the output is mirrored (a local copy, a static site over the bucket).
 */
export function callPageFromReport(output: OutputLocation, batchId: string, callId: string): string {
  const depth =
    batchReportPrefix(output, batchId).slice(normalizePrefix(output.prefix).length).split('/').length - 1;
  return `${'../'.repeat(depth)}${assertSafeCallId(callId)}/${CALL_PAGE_FILE}`;
}

/** Parts of one execution of a batch (its first run id), so a re-run does not merge an older one's. */
export function batchPartsPrefix(reportPrefix: string, executionId: string): string {
  return `${reportPrefix}parts/${executionId}/`;
}

/**
 * A local file the CLI uploads, content-addressed so the same file is the same object:
 * `<input>local/<16 hex of its sha-256>/<file name>` for recordings, `<input>manifests/…` for manifests,
 * `<input>rules/…` for rule files and `<input>dictionaries/…` for custom vocabularies (as the workers
 * read them: validated, canonical JSON).
 */
export function uploadKey(
  inputPrefix: string,
  kind: 'local' | 'manifests' | 'rules' | 'dictionaries',
  digestHex: string,
  fileName: string,
): string {
  const name = fileName.split('/').pop() || 'upload';
  return `${normalizePrefix(inputPrefix)}${kind}/${digestHex.slice(0, 16)}/${name}`;
}

// --- analysis tables (schemas/tables.ts) -------------------------------------------------------------

/** Default tables prefix, at the root of the output bucket (`CALLPIPE_S3_TABLES_PREFIX`). */
const DEFAULT_TABLES_PREFIX = 'tables/';

/** Where the tables live, and the time zone that decides a call's day (its partition). */
export interface TablesLocation {
  bucket: string;
  prefix: string;
  /** IANA time zone of the partitions' days (default UTC). */
  timeZone: string;
}

/** The tables of an output: its bucket, the configured prefix (default `tables/`), UTC unless told. */
export function tablesLocationOf(output: OutputLocation, tables?: Partial<TablesLocation>): TablesLocation {
  return {
    bucket: tables?.bucket ?? output.bucket,
    prefix: normalizePrefix(tables?.prefix ?? DEFAULT_TABLES_PREFIX),
    timeZone: tables?.timeZone ?? 'UTC',
  };
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function assertDay(dt: string): string {
  if (!DAY.test(dt)) throw new KeyError(`partition day ${JSON.stringify(dt.slice(0, 40))} is not YYYY-MM-DD`);
  return dt;
}

/** A table's folder: `<tables>calls/`. */
export function tablePrefix(tables: Pick<TablesLocation, 'prefix'>, table: string): string {
  return `${normalizePrefix(tables.prefix)}${table}/`;
}

/** One day's folder of a table (its Hive partition): `<tables>calls/dt=2025-01-31/`. */
export function tablePartitionPrefix(
  tables: Pick<TablesLocation, 'prefix'>,
  table: string,
  dt: string,
): string {
  return `${tablePrefix(tables, table)}dt=${assertDay(dt)}/`;
}

/** The day of a partition folder or of a file in it, or undefined. */
export function partitionDayOf(key: string): string | undefined {
  const m = /\/dt=(\d{4}-\d{2}-\d{2})\//.exec(key);
  return m?.[1];
}

/** A call's own file in a partition (written when the call is done; compaction folds it into a part). */
export function callTableFileKey(
  tables: Pick<TablesLocation, 'prefix'>,
  table: string,
  dt: string,
  callId: string,
): string {
  return `${tablePartitionPrefix(tables, table, dt)}call-${assertSafeCallId(callId)}.parquet`;
}

/** Whether a key is a call's own file (not a compacted part). */
export function isCallTableFile(key: string): boolean {
  return /\/call-[^/]+\.parquet$/.test(key);
}

/** A compacted part of a partition: `part-<compaction id>-<n>.parquet`. */
export function partTableFileKey(
  tables: Pick<TablesLocation, 'prefix'>,
  table: string,
  dt: string,
  compactionId: string,
  n: number,
): string {
  return `${tablePartitionPrefix(tables, table, dt)}part-${keySafe(compactionId)}-${String(n).padStart(3, '0')}.parquet`;
}

/**
 * Bookkeeping of the tables, under `<tables>_callpipe/` (readers skip folders starting with `_`): the
 * lease that serializes the changes of one day's partitions, and where each call's rows are.
 */
export function tableLeaseKey(tables: Pick<TablesLocation, 'prefix'>, dt: string): string {
  return `${normalizePrefix(tables.prefix)}_callpipe/leases/dt=${assertDay(dt)}.json`;
}

export function callLocatorKey(tables: Pick<TablesLocation, 'prefix'>, callId: string): string {
  return `${normalizePrefix(tables.prefix)}_callpipe/calls/${assertSafeCallId(callId)}.json`;
}
