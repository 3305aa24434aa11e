/**
 * `callpipe query` reaches the analysis tables and nothing else (issue 41, finding 1), on the real
 * stack: the tables are mirrored from the stack's S3, then the probe's statements run through the real
 * command. Reading a file of the machine, writing one (`COPY … TO`, `ATTACH`, `EXPORT DATABASE`) and
 * installing or loading an extension are refused in one line, and nothing is read, written or
 * downloaded; a mistake in a table or column name says in one line which exist.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { callpipe as run } from '../helpers/cli.ts';
import { objectStore } from '../helpers/stack.ts';
import { runId } from '../helpers/run-id.ts';
import { CALLS_TABLE } from '../../schemas/tables.ts';

const id = runId();
const dir = mkdtempSync(join(tmpdir(), 'callpipe-query-sandbox-'));
/** A private home for the command: its mirror, and DuckDB's extension folder if anything wrote one. */
const home = join(dir, 'home');
const secret = join(dir, 'secret.txt');
const env = () => ({
  ...inject('stackEnv'),
  HOME: home,
  CALLPIPE_HOME: join(home, '.callpipe'),
  CALLPIPE_S3_TABLES_PREFIX: `tables-${id}/`,
});
const query = (sql: string) => run(['query', sql, '--json'], env());

beforeAll(async () => {
  mkdirSync(home, { recursive: true });
  writeFileSync(secret, 'not-for-query-users\n');
  // One day of `calls` in the stack's bucket, written by DuckDB itself (another writer than ours).
  const local = join(dir, 'calls.parquet');
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  await c.run(
    `COPY (SELECT 'call-a' AS call_id, 'sato' AS agent, 42.5 AS duration_seconds) TO '${local}' (FORMAT parquet)`,
  );
  c.closeSync();
  db.closeSync();
  await objectStore().put(`tables-${id}/calls/dt=2026-11-01/part-a.parquet`, readFileSync(local));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('callpipe query is sandboxed', () => {
  it('answers over the mirrored tables', async () => {
    const ok = await query('SELECT call_id, agent, dt FROM calls');
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual([{ call_id: 'call-a', agent: 'sato', dt: '2026-11-01' }]);
  });

  it.each([
    ['read_text of a file', `SELECT * FROM read_text('${secret}')`],
    ['read_csv of a file', `SELECT * FROM read_csv('${secret}')`],
    ['a file by its name', `SELECT * FROM '${secret}'`],
    ['glob of a folder', `SELECT * FROM glob('${dir}/*')`],
    ['a URL', `SELECT * FROM read_csv('http://127.0.0.1:9/x.csv')`],
  ])('refuses to read outside the tables: %s', async (_, sql) => {
    const r = await query(sql);
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain('not-for-query-users');
    expect(r.stdout).not.toContain('secret.txt');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    // A quoted path in FROM is a table name once files are out of reach: "no table" says so.
    expect(r.stderr).toMatch(
      /^callpipe: query: (only the analysis tables \(calls, utterances, personal_values\) can be read|no table ")/,
    );
  });

  it.each([
    ['COPY … TO a file', (p: string) => `COPY (SELECT 1) TO '${p}'`],
    ['COPY a table TO a file', (p: string) => `COPY calls TO '${p}'`],
    ['ATTACH a new database', (p: string) => `ATTACH '${p}'`],
    ['EXPORT DATABASE', (p: string) => `EXPORT DATABASE '${p}'`],
    ['two statements', (p: string) => `SELECT 1; COPY (SELECT 1) TO '${p}'`],
  ])('writes nothing: %s', async (_, sqlFor) => {
    const target = join(dir, `written-${runId(4)}`);
    const r = await query(sqlFor(target));
    expect(r.code).toBe(1);
    expect(existsSync(target)).toBe(false);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /^callpipe: query: (only a SELECT|one SQL statement at a time|only the analysis tables)/,
    );
  });

  it.each([
    'INSTALL httpfs',
    'LOAD httpfs',
    "LOAD '/tmp/x.duckdb_extension'",
    'SET enable_external_access = true',
    'FORCE INSTALL httpfs',
  ])('installs, loads and reconfigures nothing: %s', async (sql) => {
    const r = await query(sql);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    // The statement named as written (DuckDB's own type of an INSTALL is LOAD).
    const keyword = sql.split(' ')[0];
    expect(r.stderr).toMatch(new RegExp(`^callpipe: query: only a SELECT .* not ${keyword}: `));
    // DuckDB keeps downloaded extensions under ~/.duckdb: nothing was fetched into this home.
    expect(readdirSync(home)).not.toContain('.duckdb');
  });

  it('a table or column that does not exist is named, with what does, in one line', async () => {
    const table = await query('SELECT * FROM callz');
    expect(table.code).toBe(1);
    expect(table.stderr.trim().split('\n')).toHaveLength(1);
    expect(table.stderr).toMatch(
      /^callpipe: query: no table "callz": the tables are calls, utterances, personal_values/,
    );
    expect(table.stderr).not.toMatch(/Catalog Error|pg_/);

    const column = await query('SELECT nope FROM calls');
    expect(column.code).toBe(1);
    expect(column.stderr.trim().split('\n')).toHaveLength(1);
    expect(column.stderr).toMatch(/^callpipe: query: no column "nope"; the columns are calls: dt, call_id, /);
    for (const c of CALLS_TABLE.columns) expect(column.stderr).toContain(c.name);
    expect(column.stderr).not.toMatch(/Binder Error/);
  });
});
