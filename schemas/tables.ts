/**
 * The analysis tables: what callpipe writes as Parquet under the tables prefix
 * (`CALLPIPE_S3_TABLES_PREFIX`, default `tables/` at the root of the output bucket), one folder per
 * table with Hive partitions by the call's day: `tables/<table>/dt=YYYY-MM-DD/*.parquet`.
 *
 * This file is the documented schema: every column's name, type and meaning, and the version. The
 * Markdown reference beside it (`tables.md`) is generated from it by
 * `node scripts/on-node.mjs ts schemas/generate-json-schema.ts`, and a unit test fails when it is stale.
 *
 * Rules every table keeps:
 * - snake_case names, typed columns (a list or a map where the value is one, never a JSON string);
 * - `dt` is not stored in the files: it is the Hive partition of the folder (`dt=2025-01-31`), a DATE;
 *   read it as one (pyarrow: `partitioning=ds.partitioning(pa.schema([("dt", pa.date32())]),
 *   flavor="hive")`; DuckDB: `hive_partitioning=true`, dates are recognized);
 * - exactly one row per call (calls) or per utterance of a call (utterances) across the whole table,
 *   after any sequence of runs, re-runs, retries and re-scores: a call's rows are replaced, never added;
 * - `processed_at` is when the call's result.json was written: the version of its rows.
 *
 * Glossary: a *table* is a folder of Parquet files; a *partition* is one day's folder of it; a *call
 * file* holds one call's rows (written when the call is done); a *part* holds many calls' rows (written
 * by compaction at the end of a batch).
 *
 * Pure data with no imports of ours beyond types: workflow code may read the names.
 */

/**
 * Version of the tables' schema (the `schema_version` column and each file's `callpipe.schema_version`
 * key): raised on an incompatible change (a column removed, renamed or retyped); new columns keep it.
 */
export const TABLES_SCHEMA_VERSION = 1;

/** Column types, as Parquet stores them and readers see them. */
export type ColumnType =
  | 'string'
  | 'int32'
  | 'int64'
  | 'double'
  | 'boolean'
  /** UTC instant, milliseconds (Parquet TIMESTAMP(MILLIS, isAdjustedToUTC)). */
  | 'timestamp'
  | { list: 'string' | 'double' }
  | { map: 'string' | 'int32' }
  | { listOf: readonly StructField[] };

export interface StructField {
  name: string;
  type: 'string' | 'int32' | 'double';
  required?: boolean;
}

export interface ColumnDef {
  name: string;
  type: ColumnType;
  /** Never null. */
  required?: boolean;
  doc: string;
}

export interface TableDef {
  name: TableName;
  doc: string;
  /** Columns that identify a row within the table (the call's rows share `call_id`). */
  key: readonly string[];
  columns: readonly ColumnDef[];
}

export const TABLE_NAMES = ['calls', 'utterances', 'personal_values'] as const;
export type TableName = (typeof TABLE_NAMES)[number];

/** Per-speaker facts of a call (`calls.speaker_stats`). */
const SPEAKER_STATS_FIELDS = [
  { name: 'speaker', type: 'string', required: true },
  { name: 'utterances', type: 'int32', required: true },
  { name: 'talk_seconds', type: 'double', required: true },
  { name: 'silence_seconds', type: 'double', required: true },
  { name: 'talk_share', type: 'double', required: true },
  { name: 'sentiment_label', type: 'string' },
  { name: 'sentiment_mean', type: 'double' },
] as const satisfies readonly StructField[];

const processedAt: ColumnDef = {
  name: 'processed_at',
  type: 'timestamp',
  required: true,
  doc: "when the call's result.json was written (UTC): the version of the call's rows",
};
const schemaVersion: ColumnDef = {
  name: 'schema_version',
  type: 'int32',
  required: true,
  doc: 'version of this schema (TABLES_SCHEMA_VERSION) the row was written with',
};

export const CALLS_TABLE = {
  name: 'calls',
  doc: 'One row per call whose result.json exists (done, or partial when a text step failed).',
  key: ['call_id'],
  columns: [
    { name: 'call_id', type: 'string', required: true, doc: "the call's id: its folder under the output" },
    { name: 'status', type: 'string', required: true, doc: '`done`, or `partial` when a text step failed' },
    {
      name: 'call_started_at',
      type: 'timestamp',
      required: true,
      doc: "when the call started: the manifest's started_at, else the recording object's time, else when processing began",
    },
    {
      name: 'call_started_at_source',
      type: 'string',
      required: true,
      doc: '`manifest`, `recording` or `processing`: where call_started_at (and so dt) came from',
    },
    { name: 'duration_seconds', type: 'double', required: true, doc: 'decoded length of the recording' },
    {
      name: 'speakers',
      type: { list: 'string' },
      required: true,
      doc: 'speaker labels, e.g. [agent, customer]',
    },
    {
      name: 'speakers_inferred',
      type: 'boolean',
      doc: 'speakers told apart by voice on a one-track call: speaker-scoped figures rest on it; null before 0.3.0',
    },
    {
      name: 'roles_decision',
      type: 'string',
      doc: 'how roles were decided: configured, swapped, fixed, inferred, low-confidence, unknown; null before 0.3.0',
    },
    { name: 'utterance_count', type: 'int32', required: true, doc: 'utterances recognized' },
    {
      name: 'speaker_stats',
      type: { listOf: SPEAKER_STATS_FIELDS },
      required: true,
      doc: 'per speaker: utterances, talk and silence seconds, talk share, sentiment label and mean',
    },
    { name: 'agent_talk_seconds', type: 'double', doc: "the `agent` speaker's talk time (null without one)" },
    { name: 'customer_talk_seconds', type: 'double', doc: "the `customer` speaker's talk time" },
    { name: 'silence_seconds', type: 'double', required: true, doc: 'time when nobody talks' },
    { name: 'overlap_seconds', type: 'double', required: true, doc: 'time when two or more speakers talk' },
    {
      name: 'sentiment_label',
      type: 'string',
      doc: 'Positive, Negative or Neutral over the call; null when sentiment did not run',
    },
    { name: 'sentiment_mean', type: 'double', doc: 'mean signed sentiment (−1…1) over analysed utterances' },
    { name: 'agent_sentiment_label', type: 'string', doc: "the `agent` speaker's sentiment label" },
    { name: 'customer_sentiment_label', type: 'string', doc: "the `customer` speaker's sentiment label" },
    { name: 'agent_sentiment_mean', type: 'double', doc: "the `agent` speaker's mean sentiment" },
    { name: 'customer_sentiment_mean', type: 'double', doc: "the `customer` speaker's mean sentiment" },
    { name: 'summary', type: 'string', doc: 'the call summary; null when summarizing did not run' },
    {
      name: 'reason',
      type: 'string',
      doc: "why the customer called: the reasons model's best class; null when no model classified the call",
    },
    { name: 'reason_score', type: 'double', doc: "the reason's score, 0–1 (the model's confidence)" },
    {
      name: 'transcript_quality',
      type: 'double',
      doc: 'how far the transcript can be trusted, 0–1 (duration-weighted confidence × (1 − misrecognition))',
    },
    { name: 'transcript_level', type: 'string', doc: 'high, medium or low; null before transcript quality' },
    {
      name: 'needs_review',
      type: 'boolean',
      doc: "the transcript is below CALLPIPE_REVIEW_BELOW: the call's automated answers are not facts",
    },
    {
      name: 'categories',
      type: { list: 'string' },
      doc: "the rule file's categories the call matched (null in results written without insights)",
    },
    { name: 'scorecard', type: 'string', doc: "the rule file's scorecard name; null without one" },
    { name: 'score', type: 'double', doc: 'scorecard points: the weights answered yes' },
    {
      name: 'score_max',
      type: 'double',
      doc: 'scorecard points possible: the weights of applicable questions',
    },
    { name: 'score_normalized', type: 'double', doc: 'score ÷ score_max, 0–1; null when nothing applied' },
    { name: 'hold_seconds', type: 'double', doc: 'time on hold (metrics.holdSeconds); null without metrics' },
    { name: 'rules_version', type: 'string', doc: 'version of the rule file that scored the call' },
    { name: 'keywords', type: { list: 'string' }, doc: 'keywords, most important first' },
    {
      name: 'redactions_total',
      type: 'int32',
      doc: 'personal data masked in the stored texts; null in results written without redaction',
    },
    {
      name: 'redaction_counts',
      type: { map: 'int32' },
      doc: "redactions per kind (e.g. redaction_counts['phone']); null without redaction",
    },
    { name: 'failed_steps', type: { list: 'string' }, required: true, doc: 'text steps that failed' },
    { name: 'agent', type: 'string', doc: "the manifest's `agent` column" },
    { name: 'direction', type: 'string', doc: "the manifest's `direction` column (inbound, outbound)" },
    {
      name: 'metadata',
      type: { map: 'string' },
      required: true,
      doc: "every manifest column given with the recording (e.g. metadata['queue'])",
    },
    {
      name: 'source_uri',
      type: 'string',
      required: true,
      doc: 's3://bucket/key of the recording, a number or e-mail address in the key masked as in reports (result.json has the key)',
    },
    {
      name: 'source_key',
      type: 'string',
      required: true,
      doc: 'key of the recording, masked as source_uri',
    },
    { name: 'audio_codec', type: 'string', required: true, doc: "the recording's codec, e.g. pcm_s16le" },
    { name: 'audio_channels', type: 'int32', required: true, doc: "the recording's channels" },
    { name: 'audio_sample_rate', type: 'int32', required: true, doc: "the recording's sample rate, Hz" },
    { name: 'batch_id', type: 'string', doc: 'the backfill or nightly batch that processed the call' },
    { name: 'workflow_id', type: 'string', required: true, doc: 'the Temporal workflow that processed it' },
    { name: 'requests', type: 'int32', required: true, doc: 'service requests made for the call' },
    { name: 'retries', type: 'int32', required: true, doc: 'requests that repeated an earlier one' },
    { name: 'restarts', type: 'int32', required: true, doc: 'recognition restarts' },
    {
      name: 'recognition',
      type: 'string',
      doc: 'how speech was recognized: stream, file (pieces of at most 58 s), mixed or none; null before file recognition',
    },
    { name: 'wall_seconds', type: 'double', required: true, doc: 'wall time from start to the write' },
    { name: 'result_key', type: 'string', required: true, doc: "key of the call's result.json" },
    { name: 'result_schema_version', type: 'int32', required: true, doc: "result.json's schemaVersion" },
    processedAt,
    schemaVersion,
  ],
} as const satisfies TableDef;

export const UTTERANCES_TABLE = {
  name: 'utterances',
  doc: "One row per utterance of every call in `calls`, in the call's order.",
  key: ['call_id', 'utterance_index'],
  columns: [
    { name: 'call_id', type: 'string', required: true, doc: 'the call (calls.call_id)' },
    {
      name: 'utterance_index',
      type: 'int32',
      required: true,
      doc: "0-based position in the call's time order",
    },
    { name: 'speaker', type: 'string', required: true, doc: 'speaker label, e.g. agent, customer' },
    {
      name: 'speaker_confidence',
      type: 'double',
      doc: 'how sure the speaker is, 0–1 (1 on a track of its own); null before 0.3.0',
    },
    {
      name: 'start_seconds',
      type: 'double',
      required: true,
      doc: 'start, seconds from the start of the call',
    },
    { name: 'end_seconds', type: 'double', required: true, doc: 'end, seconds from the start of the call' },
    {
      name: 'text',
      type: 'string',
      required: true,
      doc: 'the stored text, as result.json keeps it (redacted when redaction is on)',
    },
    {
      name: 'cleaned_text',
      type: 'string',
      doc: 'the text without fillers; null when filler removal did not run',
    },
    { name: 'confidence', type: 'double', doc: 'recognition confidence 0–1, when the service gave one' },
    { name: 'sentiment_label', type: 'string', doc: 'Positive, Negative or Neutral; null when not analysed' },
    { name: 'sentiment_value', type: 'double', doc: 'signed sentiment −1…1 (result.json sentiment.scoring)' },
    { name: 'emotions', type: { list: 'string' }, doc: 'emotion labels of the utterance (喜ぶ, 不安, …)' },
    { name: 'filler_count', type: 'int32', required: true, doc: 'fillers removed from the utterance' },
    {
      name: 'redaction_kinds',
      type: { list: 'string' },
      doc: 'kinds of personal data masked in `text`, once each (phone, name, …); null without redaction',
    },
    { name: 'session', type: 'int32', required: true, doc: 'recognition session it came from' },
    processedAt,
    schemaVersion,
  ],
} as const satisfies TableDef;

/**
 * Where personal values occur, by keyed digest (schemas/personal-digest.ts), never the value: what
 * `callpipe find` reads. Written only when a digest key is configured.
 */
export const PERSONAL_VALUES_TABLE = {
  name: 'personal_values',
  doc: 'One row per personal value of a call (masked in its text, in a personal manifest column, or in its recording’s key), by keyed digest.',
  key: ['call_id', 'origin', 'utterance_index', 'digest'],
  columns: [
    { name: 'call_id', type: 'string', required: true, doc: 'the call (calls.call_id)' },
    {
      name: 'kind',
      type: 'string',
      required: true,
      doc: 'phone, email, name, customer, … (the mask’s kind)',
    },
    {
      name: 'digest',
      type: 'string',
      required: true,
      doc: 'HMAC-SHA-256 (hex) of the value normalized per kind, with the deployment’s digest key',
    },
    {
      name: 'origin',
      type: 'string',
      required: true,
      doc: '`speech` (said in the call, masked in its text), `manifest` (a personal metadata column) or `source` (a number or address in the recording’s key)',
    },
    { name: 'column', type: 'string', doc: 'the manifest column (origin `manifest`); null otherwise' },
    {
      name: 'utterance_index',
      type: 'int32',
      doc: 'the utterance (utterances.utterance_index) that held it; null when not said',
    },
    {
      name: 'start_seconds',
      type: 'double',
      doc: 'start of that utterance, seconds from the start of the call; null when not said',
    },
    processedAt,
    schemaVersion,
  ],
} as const satisfies TableDef;

export const TABLES: Record<TableName, TableDef> = {
  calls: CALLS_TABLE,
  utterances: UTTERANCES_TABLE,
  personal_values: PERSONAL_VALUES_TABLE,
};

/** A row of a table: column name → value (Date for timestamps, arrays for lists, objects for maps). */
export type TableRow = Record<string, unknown>;

/** The calendar day (`YYYY-MM-DD`) an instant falls on in `timeZone` (IANA name). */
export function dayIn(at: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(at);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')}`;
}

/** Whether `timeZone` is an IANA time zone this runtime knows. */
export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-CA', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** The Markdown reference of every table (schemas/tables.md), generated from the definitions above. */
export function tablesReference(): string {
  const typeName = (t: ColumnType): string =>
    typeof t === 'string'
      ? t === 'timestamp'
        ? 'timestamp (ms, UTC)'
        : t
      : 'list' in t
        ? `list<${t.list}>`
        : 'map' in t
          ? `map<string, ${t.map}>`
          : `list<struct<${t.listOf.map((f) => `${f.name}: ${f.type}`).join(', ')}>>`;
  const lines = [
    '# callpipe analysis tables',
    '',
    `Schema version ${TABLES_SCHEMA_VERSION}. Generated from \`schemas/tables.ts\` by`,
    '`node scripts/on-node.mjs ts schemas/generate-json-schema.ts`; do not edit by hand.',
    '',
    'Parquet (Snappy) under `<tables prefix><table>/dt=YYYY-MM-DD/`, the prefix `CALLPIPE_S3_TABLES_PREFIX`',
    '(default `tables/` at the root of the output bucket). `dt` is the Hive partition, a DATE: the day the',
    'call started in `CALLPIPE_TIME_ZONE` (default UTC). Exactly one row per call (per utterance) across a',
    'table after any sequence of runs, re-runs, retries and re-scores.',
  ];
  for (const table of Object.values(TABLES)) {
    lines.push(
      '',
      `## ${table.name}`,
      '',
      table.doc,
      '',
      '| column | type | null | meaning |',
      '| --- | --- | --- | --- |',
    );
    lines.push(
      '| `dt` | `date` (partition) | no | the day the call started (Hive partition, not in the files) |',
    );
    for (const c of table.columns) {
      lines.push(`| \`${c.name}\` | \`${typeName(c.type)}\` | ${c.required ? 'no' : 'yes'} | ${c.doc} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}
