/**
 * `callpipe find`: the calls that hold a personal value (a phone number, an e-mail address, a customer
 * id), for a customer's request, without the value being stored anywhere: the value asked is digested
 * with the deployment's key (schemas/personal-digest.ts) and looked up in the `personal_values` table
 * (schemas/tables.ts), mirrored and read with DuckDB as `callpipe query` does. The value is never printed
 * nor logged: the answer echoes it masked.
 */
import { join } from 'node:path';
import { CliError, parseCommandArgs } from '../command.ts';
import { pipelineConfig } from '../stack-client.ts';
import { textTable } from '../text-table.ts';
import { mirrorTables, tableFiles } from '../query/tables-mirror.ts';
import { openTablesDatabase, type TablesDatabase } from '../query/duckdb.ts';
import { createObjectStore } from '../../activities/storage/object-store.ts';
import { isNotFound } from '../../activities/storage/s3-errors.ts';
import { normalizePrefix, parseS3Url } from '../../schemas/call-keys.ts';
import {
  DigestKeyError,
  digestKeyOf,
  maskedValue,
  normalizePersonalValue,
  personalDigest,
} from '../../schemas/personal-digest.ts';
import { CALLS_TABLE, PERSONAL_VALUES_TABLE } from '../../schemas/tables.ts';
import { callIdRuleOf, reportedSource, type CallIdRule } from '../../activities/storage/call-id.ts';

export const summary =
  'finds the calls that hold a phone number, an e-mail address or a customer id, or of a recording';
export const help = `Usage: callpipe find --phone N | --email A | --customer ID | --call ID | --source URL
                     [--tables s3://bucket/prefix | --dir <folder>] [--offline] [--json]

Answers which calls hold a personal value, and where in each it occurred (utterance, time), for a
customer's request (docs/personal-data.md#requests-from-customers). Nothing stores the value itself:
redaction keeps a keyed digest (HMAC-SHA-256 with CALLPIPE_DIGEST_KEY) of each value it masks and of
each personal manifest column, and of a number or e-mail address in a recording's file name (a caller
number, not a date or time stamp), and find computes the digest of the value asked and looks it up in
the \`personal_values\` table. The value is never printed: the answer echoes it masked.

  --phone <N>        a phone number, in any notation (its digits are the value): said, in a
                     manifest column, or in a recording's file name
  --email <A>        an e-mail address (case and full-width letters do not matter)
  --customer <ID>    a customer id, a caller number or a name from the manifest's personal columns
  --call <ID>        the personal values recorded for one call (their kinds and places)
  --source <URL>     the calls of a recording (s3://bucket/key) or of every recording under a
                     prefix (s3://bucket/folder/); the tables keep a key with a number masked, so
                     each candidate is confirmed by its result.json, which keeps the key
  --tables <url>     the tables' location (default: CALLPIPE_S3_TABLES_PREFIX in CALLPIPE_S3_BUCKET)
  --dir <folder>     a local copy of a tables folder, as it is (no S3)
  --offline          the local mirror as it is, without syncing it first
  --json             the answer as JSON: { asked, calls: [{ callId, occurrences: [...] }] }`;

/** One place a value occurred: an utterance of the call (said), a manifest column, or the recording's key. */
export interface Occurrence {
  kind: string;
  origin: 'speech' | 'manifest' | 'source';
  column: string | null;
  utterance: number | null;
  startSeconds: number | null;
}

export interface FoundCall {
  callId: string;
  occurrences: Occurrence[];
}

const DIGEST = /^[0-9a-f]{64}$/;
const quote = (s: string) => `'${s.replaceAll("'", "''")}'`;

function grouped(rows: Record<string, unknown>[]): FoundCall[] {
  const calls = new Map<string, Occurrence[]>();
  for (const r of rows) {
    const id = String(r.call_id);
    const list = calls.get(id) ?? [];
    list.push({
      kind: String(r.kind),
      origin: r.origin === 'manifest' || r.origin === 'source' ? r.origin : 'speech',
      column: (r.column as string | null) ?? null,
      utterance: (r.utterance_index as number | null) ?? null,
      startSeconds: (r.start_seconds as number | null) ?? null,
    });
    calls.set(id, list);
  }
  return [...calls].map(([callId, occurrences]) => ({ callId, occurrences }));
}

const COLUMNS = 'call_id, kind, origin, "column", utterance_index, start_seconds';
const ORDER = 'ORDER BY call_id, origin, utterance_index NULLS FIRST, kind';

/** The calls whose personal values have `digest`, each with where it occurred. */
export async function callsWithDigest(db: TablesDatabase, digest: string): Promise<FoundCall[]> {
  // The digest is hex, checked: it cannot break out of the literal.
  if (!DIGEST.test(digest)) throw new Error('not a digest');
  const result = await db.query(
    `SELECT DISTINCT ${COLUMNS} FROM personal_values WHERE digest = ${quote(digest)} ${ORDER}`,
  );
  return grouped(result.rows);
}

/** The personal values recorded for one call (kinds and places, never values). */
export async function valuesOfCall(db: TablesDatabase, callId: string): Promise<FoundCall[]> {
  const result = await db.query(
    `SELECT DISTINCT ${COLUMNS} FROM personal_values WHERE call_id = ${quote(callId)} ${ORDER}`,
  );
  return grouped(result.rows);
}

/**
 * The calls of the recording `uri`, or of every recording under it when it is a prefix. The `calls` table
 * keeps a key holding a number or an address masked (reportedSource), so the masked form selects the
 * candidates and a candidate whose stored key is masked is confirmed by its result.json, which keeps
 * the key: two numbers masked alike never answer for each other.
 */
export async function callsFromSource(
  db: TablesDatabase,
  uri: string,
  rule: CallIdRule,
  readResultSource: (resultKey: string) => Promise<string | undefined>,
): Promise<FoundCall[]> {
  const selector = reportedSource(uri, rule);
  const result = await db.query(
    `SELECT DISTINCT call_id, source_uri, result_key FROM calls WHERE starts_with(source_uri, ${quote(selector)}) ORDER BY call_id`,
  );
  const found: FoundCall[] = [];
  for (const r of result.rows) {
    const stored = String(r.source_uri);
    const held = stored.startsWith(uri) || (await readResultSource(String(r.result_key)))?.startsWith(uri);
    if (!held) continue;
    found.push({
      callId: String(r.call_id),
      occurrences: [
        { kind: 'recording', origin: 'source', column: null, utterance: null, startSeconds: null },
      ],
    });
  }
  return found;
}

interface Asked {
  kind: string;
  value: string;
}

function askedOf(
  values: Record<string, string | boolean | undefined>,
): Asked | { callId: string } | { source: string } {
  const given = (['phone', 'email', 'customer', 'call', 'source'] as const).filter(
    (k) => values[k] !== undefined,
  );
  if (given.length !== 1)
    throw new CliError(
      'find: expected one of --phone, --email, --customer, --call or --source (see callpipe find --help)',
    );
  const [option] = given as [string];
  const value = String(values[option]);
  if (option === 'call') {
    if (!value.trim()) throw new CliError('find: --call needs a call id');
    return { callId: value.trim() };
  }
  if (option === 'source') {
    const location = parseS3Url(value.trim());
    if (!location?.bucket)
      throw new CliError('find: --source must be s3://bucket/key or s3://bucket/prefix/');
    return { source: value.trim() };
  }
  if (normalizePersonalValue(option, value) === '')
    throw new CliError(
      `find: --${option} is empty once normalized (${option === 'phone' ? 'no digits' : 'blank'})`,
    );
  return { kind: option, value };
}

/** The tables' local mirror (synced first unless `offline`), or a folder given as it is. */
export async function tablesFolder(
  config: ReturnType<typeof pipelineConfig>['config'],
  values: { tables?: string | undefined; dir?: string | undefined; offline?: boolean | undefined },
): Promise<string> {
  if (values.dir) return values.dir;
  const url = values.tables ?? `s3://${config.s3.bucket}/${config.s3.tablesPrefix}`;
  const location = parseS3Url(url);
  if (!location) throw new CliError(`find: --tables must be s3://bucket/prefix, got '${url}'`);
  const prefix = normalizePrefix(location.key);
  const dir = join(config.stack.home, 'tables', location.bucket, ...prefix.split('/').filter(Boolean));
  if (!values.offline) {
    const store = createObjectStore(config.s3).withBucket(location.bucket);
    try {
      await mirrorTables(store, prefix, dir);
    } catch (err) {
      throw new CliError(
        `find: cannot mirror ${url} (${(err as Error).message}); use --offline to search the last copy`,
        1,
      );
    }
  }
  return dir;
}

/** The deployment's digest key, or a refusal naming `command` and what cannot be done without it. */
function requiredDigestKey(
  config: ReturnType<typeof pipelineConfig>['config'],
  command: string,
  without: string,
): Buffer {
  let key: Buffer | undefined;
  try {
    key = digestKeyOf(config.redaction);
  } catch (err) {
    if (err instanceof DigestKeyError) throw new CliError(`${command}: ${err.message}`, 1);
    throw err;
  }
  if (!key)
    throw new CliError(
      `${command}: no digest key is configured (CALLPIPE_DIGEST_KEY or CALLPIPE_DIGEST_KEY_FILE): ${without}`,
      1,
    );
  return key;
}

/**
 * The ids of the calls holding a value (by keyed digest, as `find` answers), for commands that act on
 * them (`forget`); `command` names the command in refusals. The value itself is never printed.
 */
export async function callIdsHolding(
  config: ReturnType<typeof pipelineConfig>['config'],
  asked: { kind: string; value: string },
  options: { command: string; offline?: boolean },
): Promise<string[]> {
  const { command } = options;
  if (normalizePersonalValue(asked.kind, asked.value) === '')
    throw new CliError(`${command}: --${asked.kind} is empty once normalized`);
  const key = requiredDigestKey(config, command, 'calls cannot be found by a value; name them by id');
  const folder = await tablesFolder(config, { offline: options.offline });
  const db = await openTablesDatabase(
    (table) =>
      table === PERSONAL_VALUES_TABLE.name
        ? tableFiles(folder, table).map((f) => join(folder, table, f))
        : [],
    config.timeZone,
  );
  try {
    return (await callsWithDigest(db, personalDigest(key, asked.kind, asked.value)!)).map((c) => c.callId);
  } finally {
    db.close();
  }
}

function printed(asked: string, calls: FoundCall[]): string {
  if (calls.length === 0) return `no call holds ${asked}`;
  const rows = calls.flatMap((c) =>
    c.occurrences.map((o) => [
      c.callId,
      o.kind,
      o.origin === 'manifest'
        ? `manifest ${o.column ?? ''}`.trim()
        : o.origin === 'source'
          ? 'file name'
          : 'said',
      o.utterance === null ? '' : String(o.utterance),
      o.startSeconds === null ? '' : o.startSeconds.toFixed(1),
    ]),
  );
  return [
    `${calls.length} call${calls.length === 1 ? '' : 's'} hold${calls.length === 1 ? 's' : ''} ${asked}:`,
    textTable([['call', 'kind', 'where', 'utterance', 'start (s)'], ...rows]),
  ].join('\n');
}

/** How recordings' keys were masked in the tables (the call-id rule); a bad digest key refused as find's. */
function sourceRule(config: ReturnType<typeof pipelineConfig>['config']): CallIdRule {
  try {
    return callIdRuleOf(config);
  } catch (err) {
    if (err instanceof DigestKeyError) throw new CliError(`find: ${err.message}`, 1);
    throw err;
  }
}

/** Reads a result's recording key from the tables' bucket (results sit beside the tables); none when gone. */
function resultSourceReader(
  config: ReturnType<typeof pipelineConfig>['config'],
  tables: string | undefined,
): (resultKey: string) => Promise<string | undefined> {
  const bucket = (tables ? parseS3Url(tables)?.bucket : undefined) ?? config.s3.bucket;
  const store = createObjectStore(config.s3).withBucket(bucket);
  return async (resultKey) => {
    try {
      const doc = JSON.parse(await store.getText(resultKey)) as { source?: { uri?: unknown } };
      return typeof doc.source?.uri === 'string' ? doc.source.uri : undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(
    'find',
    argv,
    {
      phone: { type: 'string' },
      email: { type: 'string' },
      customer: { type: 'string' },
      call: { type: 'string' },
      source: { type: 'string' },
      tables: { type: 'string' },
      dir: { type: 'string' },
      offline: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
    false,
  );
  const question = askedOf(values);
  const { config } = pipelineConfig();
  let digest: string | undefined;
  let asked: string;
  let rule: CallIdRule | undefined;
  if ('callId' in question) {
    asked = `call ${question.callId}`;
  } else if ('source' in question) {
    rule = sourceRule(config);
    asked = reportedSource(question.source, rule);
  } else {
    asked = maskedValue(question.kind, question.value);
    const key = requiredDigestKey(
      config,
      'find',
      'no digest was written, and no personal value can be looked up',
    );
    digest = personalDigest(key, question.kind, question.value)!;
  }
  const folder = await tablesFolder(config, values);
  // Only the table asked is read: the others stay empty views, so their files cost nothing here.
  const table = 'source' in question ? CALLS_TABLE.name : PERSONAL_VALUES_TABLE.name;
  const db = await openTablesDatabase(
    (name) => (name === table ? tableFiles(folder, name).map((f) => join(folder, name, f)) : []),
    config.timeZone,
  );
  try {
    const calls =
      'source' in question
        ? await callsFromSource(db, question.source, rule!, resultSourceReader(config, values.tables))
        : digest !== undefined
          ? await callsWithDigest(db, digest)
          : await valuesOfCall(db, (question as { callId: string }).callId);
    if (values.json) console.log(JSON.stringify({ asked, calls }, null, 2));
    else console.log(printed(asked, calls));
    return 0;
  } finally {
    db.close();
  }
}
