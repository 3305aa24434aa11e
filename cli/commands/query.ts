/**
 * `callpipe query "<sql>"`: SQL over the analysis tables (schemas/tables.md) from the command line,
 * with no warehouse: the tables' Parquet files are mirrored from S3 into a local folder (only what
 * changed) and DuckDB answers over them, in the call center's time zone.
 */
import { join } from 'node:path';
import { CliError, parseCommandArgs } from '../command.ts';
import { pipelineConfig } from '../stack-client.ts';
import { textTable } from '../text-table.ts';
import { toCsv } from '../../activities/csv-output.ts';
import { mirrorTables, tableFiles } from '../query/tables-mirror.ts';
import { openTablesDatabase, QueryError, type QueryResult } from '../query/duckdb.ts';
import { createObjectStore } from '../../activities/storage/object-store.ts';
import { normalizePrefix, parseS3Url } from '../../schemas/call-keys.ts';
import { isTimeZone } from '../../schemas/tables.ts';

export const summary = 'answers SQL over the analysis tables (calls, utterances) with DuckDB';
export const help = `Usage: callpipe query "<sql>" [--tables s3://bucket/prefix | --dir <folder>] [--offline]
                      [--time-zone Z] [--json | --csv]

Runs one SQL statement (DuckDB's dialect) over the analysis tables: \`calls\` (one row per call) and
\`utterances\` (one row per utterance), with \`dt\` the day the call started (a DATE). Columns:
schemas/tables.md. The tables' Parquet files are first mirrored from S3 into a local folder
($CALLPIPE_HOME/tables/<bucket>/<prefix>; only changed files are fetched), so later queries are fast
and --offline needs no S3 at all. The statement reaches those tables and nothing else: one read-only
statement (SELECT, EXPLAIN, DESCRIBE, SHOW), no other file, database, URL or extension.

Options:
  --tables <url>     the tables' location (default: CALLPIPE_S3_TABLES_PREFIX in CALLPIPE_S3_BUCKET)
  --dir <folder>     query a local copy of a tables folder as it is (no S3)
  --offline          use the local mirror as it is, without syncing it first
  --time-zone <Z>    time zone of current_date and of timestamps shown (default CALLPIPE_TIME_ZONE)
  --json             one JSON array of row objects
  --csv              CSV with a header row (text cells a spreadsheet would run as a formula, such as
                     =…, +…, -…, @…, start with ' ; numbers stay numbers)

Example: the calls of last night whose customer sounded negative
  callpipe query "SELECT call_id, agent, duration_seconds, summary FROM calls
                  WHERE dt = current_date - 1 AND customer_sentiment_label = 'Negative'
                  ORDER BY customer_sentiment_mean"`;

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Numbers stay numbers; lists and maps as JSON; text cells that a spreadsheet would run are neutralised. */
function csv(result: QueryResult): string {
  return toCsv(
    result.columns,
    result.rows.map((row) => result.columns.map((c) => (typeof row[c] === 'number' ? row[c] : cell(row[c])))),
  );
}

/** Long cells (a summary, a transcript line) are cut in the text table; --json and --csv keep them. */
function shown(value: unknown): string {
  const text = cell(value).replace(/\s+/g, ' ');
  return [...text].length > 60 ? `${[...text].slice(0, 59).join('')}…` : text;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('query', argv, {
    tables: { type: 'string' },
    dir: { type: 'string' },
    offline: { type: 'boolean', default: false },
    'time-zone': { type: 'string' },
    json: { type: 'boolean', default: false },
    csv: { type: 'boolean', default: false },
  });
  if (positionals.length !== 1 || !positionals[0]!.trim()) {
    throw new CliError('query: expected one SQL statement in quotes (see callpipe query --help)');
  }
  if (values.json && values.csv) throw new CliError('query: --json or --csv, not both');
  const { config } = pipelineConfig();
  const timeZone = values['time-zone'] ?? config.timeZone;
  if (!isTimeZone(timeZone)) throw new CliError(`query: --time-zone '${timeZone}' is not an IANA time zone`);

  let dir = values.dir;
  if (!dir) {
    const url = values.tables ?? `s3://${config.s3.bucket}/${config.s3.tablesPrefix}`;
    const location = parseS3Url(url);
    if (!location) throw new CliError(`query: --tables must be s3://bucket/prefix, got '${url}'`);
    const prefix = normalizePrefix(location.key);
    dir = join(config.stack.home, 'tables', location.bucket, ...prefix.split('/').filter(Boolean));
    if (!values.offline) {
      const store = createObjectStore(config.s3).withBucket(location.bucket);
      try {
        const synced = await mirrorTables(store, prefix, dir);
        if (synced.downloaded || synced.removed) {
          console.error(
            `callpipe query: mirrored ${url}: ${synced.downloaded} file(s) fetched, ${synced.removed} removed, ${synced.files} in all`,
          );
        }
      } catch (err) {
        throw new CliError(
          `query: cannot mirror ${url} (${(err as Error).message}); use --offline to query the last copy`,
          1,
        );
      }
    }
  }

  const folder = dir;
  const db = await openTablesDatabase(
    (table) => tableFiles(folder, table).map((f) => join(folder, table, f)),
    timeZone,
  );
  try {
    const result = await db.query(positionals[0]!);
    if (values.json) console.log(JSON.stringify(result.rows, null, 2));
    else if (values.csv) process.stdout.write(csv(result));
    else {
      console.log(
        textTable([result.columns, ...result.rows.map((r) => result.columns.map((c) => shown(r[c])))]),
      );
      console.error(`(${result.rows.length} row${result.rows.length === 1 ? '' : 's'})`);
    }
    return 0;
  } catch (err) {
    if (err instanceof QueryError) throw new CliError(`query: ${err.message.split('\n')[0]}`, 1);
    throw err;
  } finally {
    db.close();
  }
}
