/**
 * `callpipe forget` and retention on the real stack (issue 28, Done when). Fifty calls: two really
 * processed by a backfill (so the forgotten one has a Temporal execution, a batch report and a night
 * report, and the other keeps its lines), and 48 written as a call's outputs are (result.json,
 * transcript.vtt, call.html) with their rows through the tables writer, all compacted into the same
 * day's parts. Forgetting one real call must leave the other 49 calls' objects byte-identical and their
 * rows equal (read back with pyarrow), and nothing of it in S3, the tables, the reports, Temporal's
 * visibility or history; a second forget is a no-op; a delete the S3 server refuses fails with the key
 * named. Retention, with "now" given, erases exactly the calls older than the days configured.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { callSpec } from '../../cli/submit.ts';
import { startBackfill } from '../../cli/commands/backfill.ts';
import { callpipe } from '../helpers/cli.ts';
import { makeCall } from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { localS3Config } from '../helpers/local-s3.ts';
import { readS3Tables, type PyarrowTable } from '../helpers/pyarrow.ts';
import { resultFixture } from '../helpers/result-fixture.ts';
import { recordHistory } from '../helpers/histories.ts';
import { runId } from '../helpers/run-id.ts';
import { callIdOf } from '../../activities/storage/call-id.ts';
import { createObjectStore, createS3Client } from '../../activities/storage/object-store.ts';
import { createTableActivities } from '../../activities/tables/table-activities.ts';
import { createLifecycleActivities, namedKey } from '../../activities/lifecycle/lifecycle-activities.ts';
import { taskQueues } from '../../schemas/config.ts';
import { dayIn } from '../../schemas/tables.ts';
import type { AuditRecord, ForgetInput } from '../../schemas/lifecycle.ts';
import type { TablesLocation } from '../../schemas/call-keys.ts';
import { retention } from '../../workflows/retention.ts';

const TABLES = ['calls', 'utterances', 'personal_values'];
const letters = (i: number) =>
  `${String.fromCharCode(97 + Math.floor(i / 26))}${String.fromCharCode(97 + (i % 26))}`;

const id = runId();
const prefix = `forget-${id}/`;
const tablesPrefix = `tables-forget-${id}/`;
let dir: string;
let pc: PipelineClient;
let places: ForgetInput['places'];
let tables: TablesLocation;
const env = () => ({ ...inject('stackEnv'), CALLPIPE_S3_TABLES_PREFIX: tablesPrefix });
/** The two processed calls: [0] is forgotten, [1] keeps its report line. */
const real: string[] = [];
const synthetic: string[] = [];
let forgotten: string;
let forgottenWorkflowId: string;

const bucket = () => pc.store.bucket;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function keysUnder(p: string): Promise<string[]> {
  const keys: string[] = [];
  let next: string | undefined;
  do {
    const page = await pc.store.listPage(p, next);
    keys.push(...page.objects.map((o) => o.key));
    next = page.next;
  } while (next);
  return keys.sort();
}

/** Every object of the output, the tables' locators and the staging of `callIds`: key → sha-256. */
async function snapshot(callIds: string[]): Promise<Map<string, string>> {
  const keys = [
    ...(await keysUnder(prefix)).filter((k) => !k.startsWith(`${prefix}batches/`)),
    ...(await keysUnder(`${tablesPrefix}_callpipe/calls/`)),
    ...(await Promise.all(callIds.map((c) => keysUnder(`${pc.config.s3.stagingPrefix}calls/${c}/`)))).flat(),
  ];
  const map = new Map<string, string>();
  for (const k of keys) map.set(k, sha(await pc.store.getBuffer(k)));
  return map;
}

function rowsOf(t: Record<string, PyarrowTable>, except: string): Record<string, string[]> {
  return Object.fromEntries(
    TABLES.map((name) => [
      name,
      t[name]!.rows.filter((r) => r.call_id !== except)
        .map((r) => JSON.stringify(r))
        .sort(),
    ]),
  );
}

const readTables = () => readS3Tables(pc.config.s3, { bucket: bucket(), prefix: tablesPrefix }, TABLES);

/** A call written as processing writes one: its outputs, then its rows through the tables writer. */
async function writeSynthetic(
  callId: string,
  where: { prefix: string; tables: TablesLocation },
  lastModified: string,
): Promise<void> {
  const result = resultFixture({ callId, lastModified, writtenAt: new Date().toISOString() });
  const dirKey = `${where.prefix}${callId}/`;
  result.source = {
    ...result.source,
    bucket: bucket(),
    key: `recordings/${callId}.wav`,
    uri: `s3://${bucket()}/recordings/${callId}.wav`,
  };
  await pc.store.put(`${dirKey}result.json`, JSON.stringify(result));
  await pc.store.put(`${dirKey}transcript.vtt`, `WEBVTT\n\n${callId}\n`);
  await pc.store.put(`${dirKey}call.html`, `<!doctype html><title>${callId}</title>`);
  await createTableActivities({ store: pc.store }).writeCallTables({
    callId,
    result: { bucket: bucket(), key: `${dirKey}result.json` },
    tables: where.tables,
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-forget-'));
  pc = await connectPipeline(stackConfig());
  const output = { bucket: bucket(), prefix };
  tables = { bucket: bucket(), prefix: tablesPrefix, timeZone: 'UTC' };
  places = { output, stagingPrefix: pc.config.s3.stagingPrefix, tables };
  for (let i = 0; i < 2; i++) {
    const call = await makeCall(dir, `forget-${i}.wav`, {
      durationSeconds: 6,
      stereo: true,
      seed: 500 + i,
      sampleRate: 8000,
    });
    const key = `recordings/forget-${id}/call-${i}.wav`;
    await pc.store.putFile(key, call.path);
    real.push(callIdOf({ bucket: bucket(), key }, pc.config.callIds));
  }
  const started = await startBackfill(pc, {
    batchId: `test-forget-${id}`,
    source: { kind: 'prefix', bucket: bucket(), prefix: `recordings/forget-${id}/` },
    output,
    spec: { ...callSpec(pc.config, output), tables },
  });
  await started.handle.result();
  // The other 48: today, as the processed ones (their recordings' day), then one compaction of the day.
  const now = new Date().toISOString();
  for (let i = 0; i < 48; i++) {
    const callId = `syn-${id}-${letters(i)}`;
    synthetic.push(callId);
    await writeSynthetic(callId, { prefix, tables }, now);
  }
  await createTableActivities({ store: pc.store }).compactTables({
    tables,
    days: [dayIn(new Date(), 'UTC')],
  });
  forgotten = real[0]!;
  const report = JSON.parse(await pc.store.getText(`${prefix}batches/test-forget-${id}/report.json`)) as {
    rows: { callId: string; workflowId?: string; status: string }[];
  };
  expect(report.rows.map((r) => [r.callId, r.status]).sort()).toEqual(real.map((c) => [c, 'done']).sort());
  forgottenWorkflowId = report.rows.find((r) => r.callId === forgotten)!.workflowId!;
}, 600_000);

afterAll(async () => {
  await pc?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('callpipe forget and retention: refusals and one call of fifty', () => {
  it('refuses without a terminal and without --yes, and a dry run lists what would go, erasing nothing', async () => {
    const out = `s3://${bucket()}/${prefix}`;
    const refused = await callpipe(['forget', forgotten, '--out', out], env());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes');
    const dry = await callpipe(['forget', forgotten, '--out', out, '--dry-run', '--json'], env());
    expect(dry.code, dry.stderr).toBe(0);
    const listed = JSON.parse(dry.stdout) as {
      callId: string;
      objects: { kind: string; object: string }[];
      shared: unknown[];
      workflowExecutions: number;
    }[];
    expect(listed[0]!.objects.map((o) => o.object)).toContain(
      namedKey(bucket(), `${prefix}${forgotten}/result.json`),
    );
    // The call's events (events/<day>/<callId>/) are the call's too.
    expect(listed[0]!.objects.map((o) => o.kind)).toContain('events');
    expect(listed[0]!.shared.length).toBeGreaterThan(0);
    expect(listed[0]!.workflowExecutions).toBeGreaterThan(0);
    expect(await pc.store.exists(`${prefix}${forgotten}/result.json`)).toBe(true);
  }, 120_000);

  it('forgets one call of fifty: nothing of it remains anywhere, the other 49 as they were; a repeat is a no-op', async () => {
    const others = [real[1]!, ...synthetic];
    const before = await snapshot(others);
    const rowsBefore = readTables();
    expect(rowsBefore.calls!.rows.map((r) => r.call_id).sort()).toEqual([...real, ...synthetic].sort());
    expect(rowsBefore.utterances!.rows.some((r) => r.call_id === forgotten)).toBe(true);

    const run = await callpipe(
      ['forget', forgotten, '--yes', '--json', '--out', `s3://${bucket()}/${prefix}`],
      env(),
    );
    expect(run.code, run.stderr).toBe(0);
    const audit = JSON.parse(run.stdout) as AuditRecord & { auditKey: string; repeated: boolean };
    expect(audit.repeated).toBe(false);
    expect(audit.verified).toBe(true);
    expect(audit.calls.map((c) => c.callId)).toEqual([forgotten]);
    expect(audit.totals.objects).toBeGreaterThan(0);
    expect(audit.totals.tableRows).toBeGreaterThan(0);
    expect(audit.totals.workflowExecutions).toBeGreaterThan(0);
    expect(audit.totals.reportsRewritten).toBeGreaterThan(0);
    // The audit record is in S3, as printed, with counts and no value.
    const stored = JSON.parse(await pc.store.getText(audit.auditKey)) as AuditRecord;
    expect(audit.auditKey).toMatch(/^audit\/forget\/forget-[a-z]+\.json$/);
    expect(stored.totals).toEqual(audit.totals);
    recordHistory(pc, audit.requestId, 'forget.json');

    // The other 49: every object byte-identical, their rows equal.
    const after = await snapshot(others);
    expect([...after].filter(([k]) => !k.includes(forgotten))).toEqual(
      [...before].filter(([k]) => !k.includes(forgotten)),
    );
    const rowsAfter = readTables();
    expect(rowsOf(rowsAfter, forgotten)).toEqual(rowsOf(rowsBefore, forgotten));
    // Nothing of the forgotten call: no row, no key, no text object naming it.
    for (const t of TABLES) expect(rowsAfter[t]!.rows.filter((r) => r.call_id === forgotten)).toEqual([]);
    const keys = [
      ...(await keysUnder(prefix)),
      ...(await keysUnder(tablesPrefix)),
      ...(await keysUnder(`${pc.config.s3.stagingPrefix}calls/${forgotten}/`)),
    ];
    expect(keys.filter((k) => k.includes(forgotten))).toEqual([]);
    for (const k of keys.filter((x) => /\.(json|ndjson|csv|html|vtt)$/.test(x)))
      expect((await pc.store.getText(k)).includes(forgotten), k).toBe(false);
    // The reports keep the other call's line.
    const reportPrefix = `${prefix}batches/test-forget-${id}/`;
    expect(await pc.store.getText(`${reportPrefix}report.json`)).toContain(real[1]);
    expect(await pc.store.getText(`${reportPrefix}report.csv`)).toContain(real[1]);
    expect(await pc.store.getText(`${reportPrefix}report.html`)).toContain(real[1]);
    // Temporal: neither in visibility nor as a history.
    expect((await pc.client.workflow.count(`CallpipeCallId = '${forgotten}'`)).count).toBe(0);
    await expect(pc.client.workflow.getHandle(forgottenWorkflowId).fetchHistory()).rejects.toThrow();
    expect((await pc.client.workflow.count(`CallpipeCallId = '${real[1]}'`)).count).toBeGreaterThan(0);

    // The same request again: the first one's record, nothing touched.
    const again = await callpipe(
      ['forget', forgotten, '--yes', '--json', '--out', `s3://${bucket()}/${prefix}`],
      env(),
    );
    expect(again.code, again.stderr).toBe(0);
    expect((JSON.parse(again.stdout) as { repeated: boolean; requestId: string }).repeated).toBe(true);
    expect(await snapshot(others)).toEqual(after);
  }, 600_000);
});

describe('callpipe forget and retention: refused deletes', () => {
  it('a delete the S3 server refuses fails the erasure with the key named', async () => {
    const victim = synthetic[0]!;
    // A stand-in in front of the stack's S3: passes everything through but refuses the deletes of one call.
    const upstream = new URL(pc.config.s3.endpoint!);
    const server: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (req.method === 'POST' && req.url?.includes('delete') && body.toString().includes(victim)) {
          const keys = [...body.toString().matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!);
          res.setHeader('content-type', 'application/xml');
          res.end(
            `<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${keys
              .map((k) => `<Error><Key>${k}</Key><Code>AccessDenied</Code><Message>denied</Message></Error>`)
              .join('')}</DeleteResult>`,
          );
          return;
        }
        const forward = request(
          {
            host: upstream.hostname,
            port: upstream.port,
            method: req.method,
            path: req.url,
            headers: req.headers,
          },
          (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
          },
        );
        forward.on('error', () => res.destroy());
        forward.end(body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as { port: number }).port;
      const s3 = {
        ...localS3Config(port),
        accessKeyId: pc.config.s3.accessKeyId,
        secretAccessKey: pc.config.s3.secretAccessKey,
        bucket: bucket(),
      };
      const store = createObjectStore(s3, createS3Client(s3, { maxAttempts: 1 }));
      const err = await createLifecycleActivities({ store })
        .forgetObjects({ callIds: [victim], places, recordings: false })
        .catch((e: unknown) => e as Error);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).name).toBe('StorageRefused');
      expect((err as Error).message).toContain('S3 refused to delete');
      expect((err as Error).message).toContain(namedKey(bucket(), `${prefix}${victim}/`));
      expect(await pc.store.exists(`${prefix}${victim}/result.json`)).toBe(true);
    } finally {
      await new Promise((r) => server.close(r));
    }
  }, 120_000);
});

describe('callpipe forget and retention: retention', () => {
  it('retention erases exactly the calls older than the configured days, rows included', async () => {
    const rPrefix = `retention-${id}/`;
    const rTables: TablesLocation = { bucket: bucket(), prefix: `tables-retention-${id}/`, timeZone: 'UTC' };
    const days = { old: '2026-05-01', edge: '2026-05-30', young: '2026-06-01', recent: '2026-06-25' };
    const ids = Object.fromEntries(Object.keys(days).map((k) => [k, `ret-${id}-${k}`])) as Record<
      keyof typeof days,
      string
    >;
    for (const [k, day] of Object.entries(days))
      await writeSynthetic(
        ids[k as keyof typeof days],
        { prefix: rPrefix, tables: rTables },
        `${day}T10:00:00Z`,
      );
    const rPlaces = {
      output: { bucket: bucket(), prefix: rPrefix },
      stagingPrefix: pc.config.s3.stagingPrefix,
      tables: rTables,
    };
    const result = await pc.client.workflow.execute(retention, {
      taskQueue: taskQueues(pc.config).workflows,
      workflowId: `retention-test-${id}`,
      // 30 days before this "now" is 2026-05-31: the calls of earlier days go.
      args: [{ places: rPlaces, days: { results: 30 }, now: '2026-06-30T12:00:00Z' }],
    });
    expect(result.requests.map((r) => [r.kind, r.calls, r.outcome])).toEqual([['results', 2, 'erased']]);
    recordHistory(pc, `retention-test-${id}`, 'retention.json');
    for (const k of ['old', 'edge'] as const)
      expect(await pc.store.exists(`${rPrefix}${ids[k]}/result.json`)).toBe(false);
    for (const k of ['young', 'recent'] as const)
      expect(await pc.store.exists(`${rPrefix}${ids[k]}/result.json`)).toBe(true);
    const t = readS3Tables(pc.config.s3, { bucket: bucket(), prefix: rTables.prefix }, [
      'calls',
      'utterances',
    ]);
    expect(t.calls!.rows.map((r) => r.call_id).sort()).toEqual([ids.recent, ids.young].sort());
    expect([...new Set(t.utterances!.rows.map((r) => r.call_id))].sort()).toEqual(
      [ids.recent, ids.young].sort(),
    );
    const audit = JSON.parse(
      await pc.store.getText(`audit/retention/${result.requests[0]!.requestId}.json`),
    ) as AuditRecord;
    expect(audit.calls.map((c) => c.callId).sort()).toEqual([ids.edge, ids.old].sort());
  }, 300_000);
});
