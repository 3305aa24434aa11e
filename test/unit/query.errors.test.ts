/**
 * What `callpipe query` says for DuckDB's errors (cli/query/query-errors.ts): one line a user can act on,
 * with the tables or columns that exist, never DuckDB's prefixes or its internal catalog's suggestions.
 */
import { describe, expect, it } from 'vitest';
import { notAQueryMessage, queryErrorMessage } from '../../cli/query/query-errors.ts';
import { UTTERANCES_TABLE } from '../../schemas/tables.ts';

describe('query errors', () => {
  it('name the columns of the tables the statement names, in one line', () => {
    const message = queryErrorMessage(
      'Binder Error: Referenced column "nope" not found in FROM clause!\nCandidate bindings: "text"\n\nLINE 1: SELECT nope FROM utterances\n               ^',
      'SELECT nope FROM utterances',
    );
    expect(message).toBe(
      `no column "nope"; the columns are utterances: dt, ${UTTERANCES_TABLE.columns.map((c) => c.name).join(', ')}`,
    );
    expect(message).not.toContain('\n');
    expect(
      queryErrorMessage(
        'Binder Error: Table "c" does not have a column named "x"',
        'SELECT c.x FROM calls c',
      ),
    ).toMatch(/^no column "x"; the columns are calls: dt, call_id, /);
  });

  it('name the tables for a table that does not exist, without DuckDB’s suggestion', () => {
    expect(
      queryErrorMessage(
        'Catalog Error: Table with name nope does not exist!\nDid you mean "pg_enum"?\n\nLINE 1: SELECT * FROM nope',
        'SELECT * FROM nope',
      ),
    ).toBe(
      'no table "nope": the tables are calls, utterances, personal_values (callpipe query "DESCRIBE calls" lists a table\'s columns)',
    );
  });

  it('say that files, databases, extensions and the network are out of reach', () => {
    expect(
      queryErrorMessage(
        'Permission Error: Cannot access file "/etc/passwd" - file system operations are disabled by configuration',
        "SELECT * FROM read_text('/etc/passwd')",
      ),
    ).toBe(
      'only the analysis tables (calls, utterances, personal_values) can be read: files, other databases, extensions and the network are out of reach of callpipe query',
    );
  });

  it('keep a syntax error short, and refuse what is not one query', () => {
    expect(
      queryErrorMessage(
        'Failed to extract statements: Parser Error: syntax error at or near "SELEC"',
        'SELEC 1',
      ),
    ).toBe('SQL syntax error at or near "SELEC"');
    expect(notAQueryMessage({ statements: 2 })).toBe(
      'one SQL statement at a time (got 2); run each with its own callpipe query',
    );
    expect(notAQueryMessage({ statementType: 'COPY' })).toMatch(
      /, not COPY: callpipe query reads the tables/,
    );
  });
});
