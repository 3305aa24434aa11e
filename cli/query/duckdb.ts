/**
 * The one module that runs DuckDB (@duckdb/node-api: prebuilt per platform in the npm registry's
 * packages, nothing downloaded at install or run time): an in-memory database with one view per
 * analysis table over a local folder of its Parquet files, in the call center's time zone.
 * Extensions are never installed or loaded from outside (autoinstall and autoload off); Parquet, JSON and
 * ICU (time zones) are built in.
 *
 * A user's statement reaches the tables and nothing else: once the views exist, DuckDB may open only
 * their Parquet files (`allowed_paths`), no other file, database, extension or URL
 * (`enable_external_access = false`), and the configuration is locked so no statement can undo that;
 * only one read-only statement (SELECT, EXPLAIN, DESCRIBE, SHOW) is run, so even the allowed files
 * cannot be overwritten.
 */
import { DuckDBInstance, StatementType, type DuckDBConnection } from '@duckdb/node-api';
import { TABLES, type ColumnType, type TableDef } from '../../schemas/tables.ts';
import { notAQueryMessage, queryErrorMessage } from './query-errors.ts';

/** DESCRIBE, SHOW and SUMMARIZE are SELECTs to DuckDB; EXPLAIN only plans or times a SELECT. */
const READ_ONLY_STATEMENTS = new Set<StatementType>([StatementType.SELECT, StatementType.EXPLAIN]);

export interface QueryResult {
  columns: string[];
  types: string[];
  /** Rows as JSON values (timestamps as text in UTC, lists as arrays, maps as key/value entries). */
  rows: Record<string, unknown>[];
}

const quote = (s: string) => `'${s.replaceAll("'", "''")}'`;

function sqlType(t: ColumnType | 'string' | 'int32' | 'double'): string {
  if (typeof t === 'string') {
    return {
      string: 'VARCHAR',
      int32: 'INTEGER',
      int64: 'BIGINT',
      double: 'DOUBLE',
      boolean: 'BOOLEAN',
      timestamp: 'TIMESTAMPTZ',
    }[t];
  }
  if ('list' in t) return `${sqlType(t.list)}[]`;
  if ('map' in t) return `MAP(VARCHAR, ${sqlType(t.map)})`;
  return `STRUCT(${t.listOf.map((f) => `"${f.name}" ${sqlType(f.type)}`).join(', ')})[]`;
}

/** An empty table with the documented columns, so a query of a table with no rows yet still runs. */
function emptyTable(table: TableDef): string {
  const columns = [`"dt" DATE`, ...table.columns.map((c) => `"${c.name}" ${sqlType(c.type)}`)];
  return `CREATE TABLE "${table.name}" (${columns.join(', ')})`;
}

export class QueryError extends Error {
  override name = 'QueryError';
}

export interface TablesDatabase {
  query(sql: string): Promise<QueryResult>;
  close(): void;
}

/**
 * A database whose tables are `files(table)` (views over Parquet with `dt` from the Hive partitions,
 * a DATE) in `timeZone` (so `current_date` is the call center's day).
 */
export async function openTablesDatabase(
  files: (table: string) => string[],
  timeZone: string,
): Promise<TablesDatabase> {
  const instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  });
  const connection: DuckDBConnection = await instance.connect();
  await connection.run(`SET TimeZone = ${quote(timeZone)}`);
  const allowed: string[] = [];
  for (const table of Object.values(TABLES)) {
    const list = files(table.name);
    allowed.push(...list);
    await connection.run(
      list.length === 0
        ? emptyTable(table)
        : `CREATE VIEW "${table.name}" AS SELECT * FROM read_parquet([${list.map(quote).join(', ')}], ` +
            `hive_partitioning = true, hive_types = {'dt': DATE}, union_by_name = true)`,
    );
  }
  await connection.run(`SET allowed_paths = [${allowed.map(quote).join(', ')}]`);
  await connection.run('SET enable_external_access = false');
  await connection.run('SET lock_configuration = true');
  return {
    async query(sql) {
      try {
        const statements = await connection.extractStatements(sql);
        if (statements.count !== 1) throw new QueryError(notAQueryMessage({ statements: statements.count }));
        const statement = await statements.prepare(0);
        if (!READ_ONLY_STATEMENTS.has(statement.statementType)) {
          // Named as written: DuckDB calls an INSTALL a LOAD statement.
          const keyword = /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase();
          throw new QueryError(
            notAQueryMessage({ statementType: keyword ?? StatementType[statement.statementType] }),
          );
        }
        const reader = await statement.runAndReadAll();
        const columns = reader.columnNames();
        const types = reader.columnTypes().map(String);
        // DuckDB's JSON gives 64-bit integers (COUNT(*), SUM of integers) as text; a count is a number.
        const wide = columns.filter((_, i) => /^(BIGINT|HUGEINT|UBIGINT|UHUGEINT)$/.test(types[i]!));
        const rows = reader.getRowObjectsJson().map((row) => {
          for (const c of wide) {
            const n = Number(row[c]);
            if (typeof row[c] === 'string' && Number.isSafeInteger(n)) row[c] = n;
          }
          return row;
        });
        return { columns, types, rows };
      } catch (err) {
        if (err instanceof QueryError) throw err;
        throw new QueryError(queryErrorMessage((err as Error).message, sql));
      }
    },
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}
