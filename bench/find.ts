/**
 * `callpipe find` over a large deployment: generated `personal_values` rows of many calls (each with
 * values said in the call and personal manifest columns), in the tables' real layout after compaction
 * (`personal_values/dt=YYYY-MM-DD/part-….parquet`, one part a day, written by the tables' own encoder),
 * then the lookup `find` runs (DuckDB over the folder, activities of cli/commands/find.ts) timed: the
 * database opened and the digest of a phone number looked up, as the command does after its mirror.
 *
 *   npm run bench:find                       # 100,000 calls over 90 days
 *   npm run bench:find -- --calls 20000 --days 30
 *   npm run bench:find -- --per-call --calls 20000   # one file a call: days not compacted yet
 *
 * Prints the rows, the files, the time to generate them, and the lookup's first (cold) and median time.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { encodeTable } from '../activities/tables/parquet.ts';
import { callsWithDigest } from '../cli/commands/find.ts';
import { openTablesDatabase } from '../cli/query/duckdb.ts';
import { tableFiles } from '../cli/query/tables-mirror.ts';
import { digestKeyFrom, personalDigest } from '../schemas/personal-digest.ts';
import { PERSONAL_VALUES_TABLE, TABLES_SCHEMA_VERSION, type TableRow } from '../schemas/tables.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '100000' },
    days: { type: 'string', default: '90' },
    runs: { type: 'string', default: '5' },
    'per-call': { type: 'boolean', default: false },
  },
});
const calls = Number(values.calls);
const days = Number(values.days);
const runs = Number(values.runs);

const key = digestKeyFrom('bench-digest-key-not-a-secret', 'bench');
/** The number asked: said in every 20,000th call, so the answer has a handful of calls. */
const ASKED = '09012345678';
const phoneOf = (i: number) => (i % 20_000 === 7 ? ASKED : `090${String(10_000_000 + i).slice(-8)}`);

function dayOf(d: number): string {
  return new Date(Date.UTC(2026, 0, 1) + d * 86_400_000).toISOString().slice(0, 10);
}

const dir = mkdtempSync(join(tmpdir(), 'bench-find-'));
try {
  const t0 = performance.now();
  const byDay: TableRow[][] = Array.from({ length: days }, () => []);
  const perCall = values['per-call'];
  let rows = 0;
  const processedAt = new Date('2026-06-01T00:00:00Z');
  for (let i = 0; i < calls; i++) {
    const callId = `call-${String(i).padStart(6, '0')}-a1b2c3d4`;
    const common = { call_id: callId, processed_at: processedAt, schema_version: TABLES_SCHEMA_VERSION };
    const said = (kind: string, value: string, utterance: number) => ({
      ...common,
      kind,
      digest: personalDigest(key, kind, value)!,
      origin: 'speech',
      column: null,
      utterance_index: utterance,
      start_seconds: utterance * 4.5,
    });
    const column = (name: string, kind: string, value: string) => ({
      ...common,
      kind,
      digest: personalDigest(key, kind, value)!,
      origin: 'manifest',
      column: name,
      utterance_index: null,
      start_seconds: null,
    });
    const list: TableRow[] = perCall ? [] : byDay[i % days]!;
    list.push(
      said('phone', phoneOf(i), 3),
      said('name', `顧客${i}`, 5),
      said('email', `user${i}@example.jp`, 9),
      column('customer_id', 'customer', `C-${i}`),
      column('caller_number', 'phone', `03${String(i).padStart(8, '0')}`),
    );
    rows += 5;
    if (perCall) {
      const folder = join(dir, 'personal_values', `dt=${dayOf(i % days)}`);
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, `call-${callId}.parquet`), encodeTable(PERSONAL_VALUES_TABLE, list));
    }
  }
  for (const [d, list] of perCall ? [] : byDay.entries()) {
    const folder = join(dir, 'personal_values', `dt=${dayOf(d)}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'part-bench-000.parquet'), encodeTable(PERSONAL_VALUES_TABLE, list));
  }
  const generatedMs = performance.now() - t0;

  const digest = personalDigest(key, 'phone', '090-1234-5678')!;
  const times: number[] = [];
  let found = 0;
  for (let r = 0; r < runs; r++) {
    const start = performance.now();
    const db = await openTablesDatabase((t) => tableFiles(dir, t).map((f) => join(dir, t, f)), 'UTC');
    try {
      found = (await callsWithDigest(db, digest)).length;
    } finally {
      db.close();
    }
    times.push(performance.now() - start);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  const expected = Array.from({ length: calls }, (_, i) => phoneOf(i)).filter((p) => p === ASKED).length;
  console.log(
    `find over ${calls.toLocaleString('en')} calls (${rows.toLocaleString('en')} personal_values rows,`,
  );
  console.log(
    `  ${tableFiles(dir, 'personal_values').length} Parquet files, one a ${perCall ? 'call' : 'day'}; generated in ${(generatedMs / 1000).toFixed(1)} s)`,
  );
  console.log(`  calls found: ${found} (expected ${expected})`);
  console.log(
    `  first lookup: ${(times[0]! / 1000).toFixed(2)} s; median of ${runs}: ${(median / 1000).toFixed(2)} s (target ≤ 5 s)`,
  );
  if (found !== expected) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
