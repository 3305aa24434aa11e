/**
 * The analysis tables on the shared test stack (issue 17, Done when): a manifest backfill writes each
 * call's rows and compacts the days it touched; then a `callpipe process --redo` of one call (no
 * manifest this time, so its day moves to the recording's) and a backfill `--redo` of another. After
 * each, pyarrow (not the writer's library) reads every file under the tables prefix straight from S3
 * with Hive partitions: one row per call in `calls`, each call's utterances once in `utterances`, the
 * documented columns, `dt` a date.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { outputLocation } from '../../cli/submit.ts';
import { startBackfill } from '../../cli/commands/backfill.ts';
import { callSpec } from '../../cli/submit.ts';
import { callpipe as run } from '../helpers/cli.ts';
import { makeCall } from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { readS3Tables, type PyarrowTable } from '../helpers/pyarrow.ts';
import { CALLS_TABLE, UTTERANCES_TABLE } from '../../schemas/tables.ts';
import { dayIn } from '../../schemas/tables.ts';
import { dayBefore } from '../../workflows/nightly-date.ts';
import { callIdOf } from '../../activities/storage/call-id.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import type { ResultDocument } from '../../schemas/result.ts';
import type { BackfillResult } from '../../workflows/backfill.ts';
import { runId } from '../helpers/run-id.ts';

let dir: string;
let pc: PipelineClient;
let output: OutputLocation;
const id = runId();
const tablesPrefix = `tables-${id}/`;
const timeZone = 'Asia/Tokyo';
/** Last night in Tokyo: the third call's day, for `callpipe query`'s "last night". */
const yesterday = (({ yyyy, mm, dd }) => `${yyyy}-${mm}-${dd}`)(dayBefore(new Date(), timeZone));
const env = () => ({
  ...inject('stackEnv'),
  CALLPIPE_S3_TABLES_PREFIX: tablesPrefix,
  CALLPIPE_TIME_ZONE: timeZone,
});
const keys: string[] = [];
/** Derived from the objects (no call_id column), so `callpipe process` names the same calls. */
const callIds: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-tables-'));
  pc = await connectPipeline(stackConfig());
  output = outputLocation(undefined, pc.config);
  for (let i = 0; i < 3; i++) {
    const call = await makeCall(dir, `tab-${i}.wav`, {
      durationSeconds: 6,
      stereo: true,
      seed: 300 + i,
      sampleRate: 8000,
    });
    const key = `recordings/tables-${id}/call-${i}.wav`;
    await pc.store.putFile(key, call.path);
    keys.push(key);
    callIds.push(callIdOf({ bucket: pc.store.bucket, key }));
  }
});

afterAll(async () => {
  await pc?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function manifest(name: string, rows: [number, string][]): Promise<string> {
  const csv =
    'key,agent,started_at,queue\n' +
    rows.map(([i, startedAt]) => `${keys[i]},agent-${i},${startedAt},billing`).join('\n');
  const key = `manifests/tables-${id}-${name}.csv`;
  return pc.store.put(key, `${csv}\n`).then(() => key);
}

async function backfill(name: string, manifestKey: string, redo = false): Promise<BackfillResult> {
  const started = await startBackfill(pc, {
    batchId: `test-tables-${name}-${id}`,
    source: { kind: 'manifest', bucket: pc.store.bucket, key: manifestKey },
    output,
    redo,
    spec: {
      ...callSpec(pc.config, output),
      tables: { bucket: output.bucket, prefix: tablesPrefix, timeZone },
    },
  });
  return started.handle.result();
}

function read(): Record<string, PyarrowTable> {
  return readS3Tables(pc.config.s3, { bucket: pc.store.bucket, prefix: tablesPrefix }, [
    'calls',
    'utterances',
  ]);
}

async function resultOf(callId: string): Promise<ResultDocument> {
  return JSON.parse(await pc.store.getText(`${output.prefix}${callId}/result.json`)) as ResultDocument;
}

/** The Done-when checks: one row per call, each call's utterances once and in full, columns and types. */
async function expectOneRowPerCall(
  tables: Record<string, PyarrowTable>,
): Promise<Map<string, Record<string, unknown>>> {
  const { calls, utterances } = tables as { calls: PyarrowTable; utterances: PyarrowTable };
  for (const [file, info] of [...Object.entries(calls.files), ...Object.entries(utterances.files)]) {
    expect(file).toMatch(/^(calls|utterances)\/dt=\d{4}-\d{2}-\d{2}\/(call|part)-[^/]+\.parquet$/);
    expect(info.codecs, file).toEqual(['SNAPPY']);
    expect(info.table, file).toBe(file.split('/')[0]);
  }
  expect(calls.rows.map((r) => r.call_id).sort()).toEqual([...callIds].sort());
  expect(calls.schema.dt).toBe('date32[day]');
  expect(utterances.schema.dt).toBe('date32[day]');
  for (const c of CALLS_TABLE.columns) expect(Object.keys(calls.schema), c.name).toContain(c.name);
  for (const c of UTTERANCES_TABLE.columns) expect(Object.keys(utterances.schema), c.name).toContain(c.name);
  const byId = new Map(calls.rows.map((r) => [r.call_id as string, r]));
  for (const callId of callIds) {
    const doc = await resultOf(callId);
    const row = byId.get(callId)!;
    expect(row).toMatchObject({
      duration_seconds: doc.audio.durationSeconds,
      sentiment_label: doc.sentiment?.overall.label ?? null,
      summary: doc.summary?.text ?? null,
      utterance_count: doc.utterances.length,
      categories: doc.categories?.filter((c) => c.matched).map((c) => c.name) ?? null,
      score: doc.scorecard?.score ?? null,
    });
    // The row is the version of result.json now stored (processed_at = its writtenAt).
    expect(new Date(row.processed_at as string).getTime()).toBe(new Date(doc.writtenAt).getTime());
    const own = utterances.rows.filter((u) => u.call_id === callId);
    expect(own.map((u) => u.utterance_index)).toEqual(doc.utterances.map((_, i) => i));
    expect(own.map((u) => u.text)).toEqual(doc.utterances.map((u) => u.text));
    expect(new Set(own.map((u) => u.dt))).toEqual(new Set([row.dt]));
  }
  expect(utterances.rows).toHaveLength(
    (await Promise.all(callIds.map(resultOf))).reduce((n, d) => n + d.utterances.length, 0),
  );
  return byId;
}

describe('analysis tables', () => {
  it('a backfill writes one row per call, in the days of their manifest times, compacted', async () => {
    const result = await backfill(
      'first',
      await manifest('first', [
        [0, '2026-03-01T10:00:00+09:00'],
        [1, '2026-03-01T23:30:00Z'], // 08:30 on 2 March in Tokyo
        [2, yesterday],
      ]),
    );
    expect(result).toMatchObject({ status: 'done', done: 3 });
    expect(result.tables).toEqual({ compacted: ['2026-03-01', '2026-03-02', yesterday], failed: [] });

    const tables = read();
    const byId = await expectOneRowPerCall(tables);
    expect(byId.get(callIds[0]!)).toMatchObject({
      dt: '2026-03-01',
      call_started_at_source: 'manifest',
      agent: 'agent-0',
      metadata: expect.objectContaining({ queue: 'billing' }),
    });
    expect(byId.get(callIds[1]!)!.dt).toBe('2026-03-02');
    expect(byId.get(callIds[2]!)!.dt).toBe(yesterday);
    // Compacted: one part per table and day, no call files left.
    expect(Object.keys(tables.calls!.files).sort()).toEqual(
      ['2026-03-01', '2026-03-02', yesterday].map((dt) =>
        expect.stringMatching(new RegExp(`^calls/dt=${dt}/part-`)),
      ),
    );
  });

  it('after `callpipe process --redo` of one call (its day now the recording’s) and a backfill --redo of another: still one row per call', async () => {
    const before = await resultOf(callIds[0]!);
    const redo = await run(['process', `s3://${pc.store.bucket}/${keys[0]}`, '--redo', '--json'], env());
    expect(redo.code, redo.stderr).toBe(0);
    const after = await resultOf(callIds[0]!);
    expect(after.writtenAt > before.writtenAt).toBe(true);

    let byId = await expectOneRowPerCall(read());
    // No manifest this time: the call's day is the recording object's, in Tokyo.
    const moved = dayIn(new Date(after.source.lastModified!), timeZone);
    expect(byId.get(callIds[0]!)).toMatchObject({ dt: moved, call_started_at_source: 'recording' });

    const again = await backfill('redo', await manifest('redo', [[2, yesterday]]), true);
    expect(again).toMatchObject({ status: 'done', done: 1 });
    expect(again.tables).toEqual({ compacted: [yesterday], failed: [] });
    const tables = read();
    byId = await expectOneRowPerCall(tables);
    expect(byId.get(callIds[2]!)!.dt).toBe(yesterday);
    // The redone day is compacted again into one part per table.
    const ofDay = Object.keys(tables.utterances!.files).filter((f) => f.includes(`dt=${yesterday}/`));
    expect(ofDay).toHaveLength(1);
  });

  it('`callpipe query` answers "calls with negative customer sentiment last night" from the tables', async () => {
    const query = (sql: string) => run(['query', sql, '--json'], env());
    const lastNight = await query('SELECT call_id, dt FROM calls WHERE dt = current_date - 1');
    expect(lastNight.code, lastNight.stderr).toBe(0);
    expect(JSON.parse(lastNight.stdout)).toEqual([{ call_id: callIds[2], dt: yesterday }]);

    const negative = await query(
      "SELECT call_id, customer_sentiment_label, customer_sentiment_mean FROM calls WHERE dt = current_date - 1 AND customer_sentiment_label = 'Negative' ORDER BY call_id",
    );
    expect(negative.code, negative.stderr).toBe(0);
    // What pyarrow reads from the same files, filtered the same way.
    const expected = read()
      .calls!.rows.filter((r) => r.dt === yesterday && r.customer_sentiment_label === 'Negative')
      .map((r) => ({
        call_id: r.call_id,
        customer_sentiment_label: 'Negative',
        customer_sentiment_mean: r.customer_sentiment_mean,
      }));
    expect(JSON.parse(negative.stdout)).toEqual(expected);

    // Utterances join the calls; the counts agree with the result documents.
    const counts = await query(
      'SELECT call_id, count(*) AS n FROM utterances JOIN calls USING (call_id, dt) GROUP BY call_id ORDER BY call_id',
    );
    const docs = await Promise.all(callIds.map(resultOf));
    expect(JSON.parse(counts.stdout)).toEqual(
      docs
        .filter((d) => d.utterances.length > 0)
        .map((d) => ({ call_id: d.callId, n: d.utterances.length }))
        .sort((a, b) => a.call_id.localeCompare(b.call_id)),
    );
    // A second query is served from the local mirror without fetching again; a bad one says why in one line.
    expect((await query('SELECT 1')).stderr).not.toMatch(/fetched/);
    const bad = await query('SELECT nope FROM calls');
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/callpipe: query: .*nope/);
  });
});
