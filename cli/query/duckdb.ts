/**
 * The one module that runs DuckDB (@duckdb/node-api: prebuilt per platform in the npm registry's
 * packages, nothing downloaded at install or run time): an in-memory database with one view per
 * analysis table over a local folder of its Parquet files, in the call center's time zone.
 * Extensions are never installed or loaded from outside (autoinstall and autoload off); Parquet, JSON and
 * ICU (time zones) are built in.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { TABLES, type ColumnType, type TableDef } from '../../schemas/tables.ts';

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
  for (const table of Object.values(TABLES)) {
    const list = files(table.name);
    await connection.run(
      list.length === 0
        ? emptyTable(table)
        : `CREATE VIEW "${table.name}" AS SELECT * FROM read_parquet([${list.map(quote).join(', ')}], ` +
            `hive_partitioning = true, hive_types = {'dt': DATE}, union_by_name = true)`,
    );
  }
  return {
    async query(sql) {
      try {
        const reader = await connection.runAndReadAll(sql);
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
        // DuckDB's message names the problem and where in the SQL; it is the user's to fix.
        throw new QueryError((err as Error).message);
      }
    },
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}
