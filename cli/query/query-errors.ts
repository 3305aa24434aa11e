/**
 * What `callpipe query` says when DuckDB refuses a statement: one line a user can act on (which tables
 * and columns exist, what is out of reach), never DuckDB's multi-line text with its `Binder Error:`
 * prefix and suggestions from its internal catalog (`pg_class`).
 */
import { TABLES } from '../../schemas/tables.ts';

const TABLE_LIST = Object.keys(TABLES).join(', ');

/** The tables a statement names (by word), in the catalog's order; all of them when it names none. */
function tablesNamedIn(sql: string): string[] {
  const named = Object.keys(TABLES).filter((t) => new RegExp(`\\b${t}\\b`, 'i').test(sql));
  return named.length > 0 ? named : Object.keys(TABLES);
}

function columnsOf(table: string): string {
  const def = TABLES[table as keyof typeof TABLES];
  return ['dt', ...def.columns.map((c) => c.name)].join(', ');
}

/** Refused before running: more than one statement, or one that is not a query. */
export function notAQueryMessage(kind: { statements: number } | { statementType: string }): string {
  if ('statements' in kind) {
    return `one SQL statement at a time (got ${kind.statements}); run each with its own callpipe query`;
  }
  return (
    `only a SELECT (or EXPLAIN, DESCRIBE, SHOW) over the tables ${TABLE_LIST} is run, not ${kind.statementType}: ` +
    'callpipe query reads the tables and changes nothing'
  );
}

/** DuckDB's error for `sql`, as one line for the user. */
export function queryErrorMessage(duckdbMessage: string, sql: string): string {
  const first = duckdbMessage
    .replace(/^Failed to extract statements: /, '')
    .split('\n')[0]!
    .trim();
  const text = first.replace(/^[A-Za-z ]+ Error: /, '').replace(/!$/, '');
  if (/^Permission Error:/.test(first) || /disabled (by|through) configuration/.test(first)) {
    return (
      `only the analysis tables (${TABLE_LIST}) can be read: files, other databases, extensions and ` +
      'the network are out of reach of callpipe query'
    );
  }
  const table = /^Catalog Error: Table with name (.+) does not exist/.exec(first);
  if (table) {
    return `no table "${table[1]}": the tables are ${TABLE_LIST} (callpipe query "DESCRIBE calls" lists a table's columns)`;
  }
  const column =
    /^Binder Error: Referenced column "?(.+?)"? not found/.exec(first) ??
    /^Binder Error: Table "[^"]+" does not have a column named "(.+?)"/.exec(first) ??
    /^Binder Error: Values list "[^"]+" does not have a column named "(.+?)"/.exec(first);
  if (column) {
    const columns = tablesNamedIn(sql).map((t) => `${t}: ${columnsOf(t)}`);
    return `no column "${column[1]}"; the columns are ${columns.join('; ')}`;
  }
  if (/^Parser Error:/.test(first))
    return /^syntax error/.test(text) ? `SQL ${text}` : `SQL syntax error: ${text}`;
  return text;
}
