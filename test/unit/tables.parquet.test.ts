/**
 * The analysis tables' rows and files: a result.json becomes one `calls` row and its `utterances` rows,
 * typed as schemas/tables.ts says; the file encodeTable writes is read back by pyarrow (not by the
 * writer's library) with the Hive partition `dt` as a date, and decodeTable gives the same rows back
 * (compaction rewrites files through it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callRows, callStart } from '../../activities/tables/rows.ts';
import { decodeTable, encodeTable, parquetFileInfo } from '../../activities/tables/parquet.ts';
import { CALLS_TABLE, TABLES, TABLES_SCHEMA_VERSION, UTTERANCES_TABLE, dayIn } from '../../schemas/tables.ts';
import { resultFixture } from '../helpers/result-fixture.ts';
import { readLocalTables, type PyarrowTable } from '../helpers/pyarrow.ts';
import type { ResultDocument } from '../../schemas/result.ts';

describe('callStart: the call day (its partition)', () => {
  it("takes the manifest's started_at, in the configured time zone", () => {
    const result = resultFixture({
      metadata: { started_at: '2026-03-01T23:30:00Z' },
      lastModified: '2026-03-05T10:00:00Z',
    });
    expect(callStart(result, 'UTC')).toMatchObject({ source: 'manifest', dt: '2026-03-01' });
    // 23:30 UTC is 08:30 the next day in Tokyo.
    expect(callStart(result, 'Asia/Tokyo')).toMatchObject({ source: 'manifest', dt: '2026-03-02' });
  });

  it('a date alone is that day whatever the time zone', () => {
    const result = resultFixture({ metadata: { started_at: '2026-03-01' } });
    expect(callStart(result, 'Pacific/Honolulu').dt).toBe('2026-03-01');
  });

  it("without a manifest: the recording's time, else when processing began", () => {
    expect(callStart(resultFixture({ lastModified: '2026-03-05T16:00:00Z' }), 'Asia/Tokyo')).toMatchObject({
      source: 'recording',
      dt: '2026-03-06',
    });
    const none = resultFixture();
    expect(callStart(none, 'UTC')).toMatchObject({ source: 'processing', dt: '2026-11-21' });
    expect(dayIn(new Date('2026-11-21T23:58:45Z'), 'Asia/Tokyo')).toBe('2026-11-22');
  });
});

/** Two calls' results: c-1 with metadata and a phone number and a name masked, c-2 from before redaction. */
function twoResults(): ResultDocument[] {
  const results = [
    resultFixture({
      callId: 'c-1',
      utterances: 6,
      metadata: { started_at: '2026-03-01T09:00:00Z', agent: 'sato', queue: 'billing' },
    }),
    resultFixture({
      callId: 'c-2',
      utterances: 3,
      metadata: { started_at: '2026-03-02T09:00:00Z' },
      customerValue: 0.5,
    }),
  ];
  // c-1 had a phone number and a name masked in its second utterance; c-2 predates redaction.
  const redacted = results[0]!;
  redacted.utterances[1]!.redactions = [
    { kind: 'phone', begin: 0, end: 6, source: 'pattern' },
    { kind: 'name', begin: 8, end: 12, source: 'ne' },
    { kind: 'phone', begin: 14, end: 20, source: 'pattern' },
  ];
  redacted.redaction = {
    applied: true,
    detectors: ['ne', 'pattern'],
    counts: { phone: 2, name: 1 },
    total: 3,
    unredactedCopy: false,
    audio: { status: 'off' },
  };
  return results;
}

/** Each call's rows written by encodeTable, one file per call and table under `root`/tables/<table>/dt=<day>/. */
function writeCallTables(root: string, results: ResultDocument[]): void {
  for (const r of results) {
    const { rows, start } = callRows(r, `results/${r.callId}/result.json`, 'UTC');
    for (const table of [CALLS_TABLE, UTTERANCES_TABLE]) {
      const folder = join(root, 'tables', table.name, `dt=${start.dt}`);
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, `call-${r.callId}.parquet`), encodeTable(table, rows[table.name]));
    }
  }
}

/** The calls table as pyarrow reads it: its files, its column types, and one row per call. */
function expectCallsTable(calls: PyarrowTable, results: ResultDocument[]): void {
  expect(Object.keys(calls.files)).toHaveLength(2);
  for (const f of Object.values(calls.files)) {
    expect(f).toMatchObject({ table: 'calls', schema_version: String(TABLES_SCHEMA_VERSION) });
    expect(f.codecs).toEqual(['SNAPPY']);
  }
  expect(calls.schema).toMatchObject({
    dt: 'date32[day]',
    call_id: 'string',
    duration_seconds: 'double',
    sentiment_label: 'string',
    summary: 'string',
    processed_at: 'timestamp[ms, tz=UTC]',
    call_started_at: 'timestamp[ms, tz=UTC]',
    schema_version: 'int32',
    utterance_count: 'int32',
    speakers: 'list<element: string not null>',
    keywords: 'list<element: string not null>',
    metadata: 'map<string, string ("metadata")>'.replace('("metadata")', "('metadata')"),
    redactions_total: 'int32',
    redaction_counts: "map<string, int32 ('redaction_counts')>",
  });
  expect(calls.schema.speaker_stats).toMatch(
    /^list<element: struct<speaker: string not null, utterances: int32 not null, talk_seconds: double/,
  );
  const byId = new Map(calls.rows.map((r) => [r.call_id, r]));
  expect([...byId.keys()].sort()).toEqual(['c-1', 'c-2']);
  const c1 = byId.get('c-1')!;
  expect(c1).toMatchObject({
    dt: '2026-03-01',
    status: 'done',
    call_started_at_source: 'manifest',
    customer_sentiment_label: 'Negative',
    agent_sentiment_label: 'Positive',
    agent: 'sato',
    speakers: ['agent', 'customer'],
    keywords: ['請求書', '返金'],
    utterance_count: 6,
    summary: results[0]!.summary!.text,
    categories: ['請求の問い合わせ'],
    scorecard: '基本応対',
    score: 3,
    score_max: 4,
    score_normalized: 0.75,
    schema_version: TABLES_SCHEMA_VERSION,
    result_schema_version: 2,
  });
  expect(c1.metadata).toMatchObject({ queue: 'billing', agent: 'sato' });
  expect(c1).toMatchObject({ redactions_total: 3, redaction_counts: { phone: 2, name: 1 } });
  expect(byId.get('c-2')).toMatchObject({
    dt: '2026-03-02',
    customer_sentiment_label: 'Positive',
    redactions_total: null,
    redaction_counts: null,
  });
}

/** The utterances table as pyarrow reads it: its column types, and one row per utterance. */
function expectUtterancesTable(utterances: PyarrowTable, results: ResultDocument[]): void {
  expect(utterances.schema).toMatchObject({
    dt: 'date32[day]',
    utterance_index: 'int32',
    start_seconds: 'double',
    end_seconds: 'double',
    text: 'string',
    sentiment_label: 'string',
  });
  const ofC1 = utterances.rows.filter((r) => r.call_id === 'c-1');
  expect(ofC1.map((r) => r.utterance_index)).toEqual([0, 1, 2, 3, 4, 5]);
  expect(ofC1.map((r) => r.text)).toEqual(results[0]!.utterances.map((u) => u.text));
  expect(ofC1[1]).toMatchObject({
    speaker: 'customer',
    sentiment_label: 'Negative',
    filler_count: 1,
    dt: '2026-03-01',
    redaction_kinds: ['phone', 'name'],
  });
  expect(ofC1[0]!.redaction_kinds).toBeNull();
  expect(utterances.rows.filter((r) => r.call_id === 'c-2')).toHaveLength(3);
}

describe('table files', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'callpipe-tables-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('pyarrow reads what encodeTable wrote: typed columns, dt a date, one row per call', () => {
    const results = twoResults();
    writeCallTables(dir, results);
    const read = readLocalTables(join(dir, 'tables'), ['calls', 'utterances']);
    expectCallsTable(read.calls!, results);
    expectUtterancesTable(read.utterances!, results);
  });

  it('decodeTable gives back the rows encodeTable wrote', async () => {
    const result = resultFixture({ metadata: { started_at: '2026-03-01', agent: 'sato' } });
    const { rows } = callRows(result, 'k', 'UTC');
    for (const table of Object.values(TABLES)) {
      const buffer = encodeTable(table, rows[table.name]);
      expect(parquetFileInfo(buffer)).toEqual({
        table: table.name,
        schemaVersion: TABLES_SCHEMA_VERSION,
        rows: rows[table.name].length,
      });
      expect(await decodeTable(table, buffer)).toEqual(rows[table.name]);
    }
  });

  it('refuses a row without a required column, naming it', () => {
    const { rows } = callRows(resultFixture(), 'k', 'UTC');
    expect(() => encodeTable(CALLS_TABLE, [{ ...rows.calls[0], call_id: null }])).toThrow(
      /calls.call_id is required/,
    );
  });
});
