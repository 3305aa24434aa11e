/**
 * backfill on the shared test stack's Temporal and S3, with an emulator (speed 100) and workers of this
 * file's own, whose request log only this file adds to: continue-as-new with every
 * call done exactly once and a second run that starts no recognition; pause, resume and cancel mid-batch;
 * a manifest whose columns reach the results.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { outputLocation } from '../../cli/submit.ts';
import { startBackfill } from '../../cli/commands/backfill.ts';
import { makeCall } from '../helpers/pipeline.ts';
import { ownService, type OwnService } from '../helpers/own-service.ts';
import { streamStarts } from '../helpers/request-log.ts';
import {
  backfillProgressQuery,
  cancelUpdate,
  pauseUpdate,
  resumeUpdate,
  type BackfillProgress,
  type BackfillResult,
} from '../../workflows/backfill.ts';
import { processRecording } from '../../workflows/process-recording.ts';
import type { ReportRow } from '../../schemas/backfill.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import { runId } from '../helpers/run-id.ts';
import { until } from '../helpers/until.ts';

let dir: string;
let pc: PipelineClient;
let output: OutputLocation;
let service: OwnService;
const run = runId();
/** The `callpipe` command against the stack, with this file's emulator and workers. */
const callpipe = (...args: string[]) => service.callpipe(...args);
const startsSoFar = () => streamStarts(service.requests());

/** Uploads `count` short generated calls under a fresh prefix; returns the prefix and the keys. */
async function recordings(
  label: string,
  count: number,
  seconds = 4,
): Promise<{ prefix: string; keys: string[] }> {
  const prefix = `recordings/${label}-${run}/`;
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const call = await makeCall(dir, `${label}-${i}.wav`, {
      durationSeconds: seconds,
      seed: 100 + i,
      sampleRate: 8000,
    });
    const key = `${prefix}call-${i}.wav`;
    await pc.store.putFile(key, call.path);
    keys.push(key);
  }
  // Not a recording: left out by the default extension filter.
  await pc.store.put(`${prefix}notes.txt`, 'not audio');
  return { prefix, keys };
}

async function report(result: BackfillResult): Promise<{ rows: ReportRow[]; csv: string }> {
  const json = JSON.parse(await pc.store.getText(result.reportJsonKey)) as { rows: ReportRow[] };
  return { rows: json.rows, csv: await pc.store.getText(result.reportCsvKey) };
}

async function callWorkflows(batchId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const w of pc.client.workflow.list({
    query: `WorkflowType = '${processRecording.name}' AND CallpipeBatchId = "${batchId}"`,
  }))
    ids.push(w.workflowId);
  return ids;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-backfill-'));
  service = await ownService('backfill', dir);
  pc = await connectPipeline(service.config);
  output = outputLocation(undefined, pc.config);
});

afterAll(async () => {
  await pc?.close();
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('backfill: continue-as-new', () => {
  it('continues as new with every call done exactly once; a second run skips all without recognizing', async () => {
    const { prefix, keys } = await recordings('can', 5);
    const batchId = `test-can-${run}`;
    const request = {
      batchId,
      source: { kind: 'prefix' as const, bucket: pc.store.bucket, prefix },
      output,
      concurrency: 3,
      pageSize: 2,
      childrenPerRun: 2,
    };
    const first = await startBackfill(pc, request);
    const result = await first.handle.result();
    expect(result.status).toBe('done');
    expect(result.done).toBe(5);
    expect(result.failed).toBe(0);
    expect(result.listed).toBe(6);
    expect(result.filtered).toBe(1);
    expect(result.run).toBeGreaterThanOrEqual(2); // 5 children, 2 per run: three runs
    expect(result.maxHistoryEvents).toBeGreaterThan(0);
    expect(result.audioHours).toBeGreaterThan(0);

    // Exactly once: one workflow per call, and one result.json per call naming this batch.
    const ids = await until(
      "the batch's five call workflows in visibility",
      () => callWorkflows(batchId),
      (v) => v.length >= 5,
      60_000,
      250,
    );
    expect(ids.length).toBe(5);
    expect(new Set(ids).size).toBe(5);
    const { rows, csv } = await report(result);
    expect(rows.map((r) => r.status)).toEqual(['done', 'done', 'done', 'done', 'done']);
    expect(rows.map((r) => r.source)).toEqual(keys.map((k) => `s3://${pc.store.bucket}/${k}`));
    for (const row of rows) {
      expect(row.sessions).toBeGreaterThanOrEqual(1);
      expect(row.requests).toBeGreaterThan(0);
      expect(row.wallSeconds).toBeGreaterThan(0);
      const doc = JSON.parse(await pc.store.getText(row.resultKey!)) as { processing: { batchId?: string } };
      expect(doc.processing.batchId).toBe(batchId);
    }
    expect(csv.split('\n')[0]).toMatch(/^callId,source,status,reason/);

    // The same batch again: a new execution of the same workflow id, every call skipped in the listing.
    const before = startsSoFar();
    const again = await startBackfill(pc, request);
    const second = await again.handle.result();
    expect(second.status).toBe('done');
    expect(second.skipped).toBe(5);
    expect(second.started).toBe(0);
    expect(startsSoFar()).toBe(before);
    expect((await report(second)).rows.map((r) => r.status)).toEqual(Array(5).fill('skipped'));
    expect((await callWorkflows(batchId)).length).toBe(5);
  });
});

describe('backfill: pause, resume and cancel', () => {
  it('pauses, resumes and cancels mid-batch', async () => {
    const { prefix } = await recordings('ctl', 5, 6);
    const started = await startBackfill(pc, {
      batchId: `test-ctl-${run}`,
      source: { kind: 'prefix', bucket: pc.store.bucket, prefix },
      output,
      concurrency: 1,
      paused: true,
    });
    const h = started.handle;
    const progress = () => h.query(backfillProgressQuery);

    // Paused from the start: listed, nothing started.
    await until('the paused batch to list its six objects', progress, (p) => p.listed === 6, 60_000, 250);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await progress()).started).toBe(0);
    expect((await progress()).phase).toBe('paused');

    // Resume: calls start one at a time.
    const resumed = await h.executeUpdate(resumeUpdate);
    expect(resumed.phase).not.toBe('paused');
    await until('a call done after resuming', progress, (p) => p.done >= 1, 60_000, 250);

    // Pause mid-batch: the running call finishes, no new one starts.
    await h.executeUpdate(pauseUpdate);
    const paused = await until('no call running once paused', progress, (p) => p.running === 0, 60_000, 250);
    await new Promise((r) => setTimeout(r, 2000));
    const still = await progress();
    expect(still.started).toBe(paused.started);
    expect(still.started).toBeLessThan(5);

    // Resume, then cancel while a call runs: it is cancelled, the rest never start, the report is written.
    await h.executeUpdate(resumeUpdate);
    await until(
      'a new call running after resuming',
      progress,
      (p) => p.running === 1 && p.started > still.started,
      60_000,
      250,
    );
    await h.executeUpdate(cancelUpdate);
    const result = await h.result();
    expect(result.status).toBe('cancelled');
    expect(result.cancelled).toBeGreaterThanOrEqual(1);
    expect(result.done + result.partial + result.failed + result.cancelled).toBe(5);
    expect(result.failed).toBe(0);
    const { rows } = await report(result);
    expect(rows).toHaveLength(5);
    expect(rows.filter((r) => r.status === 'cancelled').length).toBe(result.cancelled);
  });
});

describe('backfill: manifests and the command', () => {
  it('reads a manifest and carries its columns into the results; missing objects are reported', async () => {
    const { keys } = await recordings('man', 2);
    const csv =
      'key,call_id,agent,direction,started_at,channels,queue\n' +
      `${keys[0]},man-a-${run},alice,inbound,2024-05-01T09:00:00Z,customer,vip\n` +
      `s3://${pc.store.bucket}/${keys[1]},,bob,outbound,2024-05-01T10:00:00Z,,\n` +
      `recordings/nowhere-${run}.wav,,carol,inbound,,,\n`;
    const manifestKey = `manifests/test-${run}.csv`;
    await pc.store.put(manifestKey, csv);
    const started = await startBackfill(pc, {
      batchId: `test-man-${run}`,
      source: { kind: 'manifest', bucket: pc.store.bucket, key: manifestKey },
      output,
    });
    const result = await started.handle.result();
    expect(result, JSON.stringify(await report(result))).toMatchObject({ done: 2 });
    expect(result.missing).toBe(1);
    const { rows } = await report(result);
    expect(rows.map((r) => r.status).sort()).toEqual(['done', 'done', 'missing']);
    const a = rows.find((r) => r.callId === `man-a-${run}`)!;
    const doc = JSON.parse(await pc.store.getText(a.resultKey!)) as {
      source: { metadata?: Record<string, string> };
      utterances: { speaker: string }[];
    };
    expect(doc.source.metadata).toMatchObject({ agent: 'alice', direction: 'inbound', queue: 'vip' });
    // channels=customer: channel 0 is the customer.
    expect(new Set(doc.utterances.map((u) => u.speaker))).toEqual(new Set(['customer']));
  });

  it('callpipe backfill runs a prefix with a report; status lists the batch and its calls', async () => {
    const { prefix } = await recordings('cli', 2, 3);
    const url = `s3://${pc.store.bucket}/${prefix}`;
    const first = await callpipe('backfill', url, '--concurrency', '2', '--json');
    expect(first.code, first.stderr).toBe(0);
    const result = JSON.parse(first.stdout) as BackfillResult & { workflowId: string };
    expect(result).toMatchObject({ status: 'done', done: 2, filtered: 1 });
    // The same command again: the same batch (id from the input), every call skipped.
    const again = JSON.parse((await callpipe('backfill', url, '--json')).stdout) as BackfillResult & {
      workflowId: string;
    };
    expect(again.workflowId).toBe(result.workflowId);
    expect(again.skipped).toBe(2);

    const status = await callpipe('status', result.workflowId, '--json');
    expect(status.code, status.stderr).toBe(0);
    const shown = JSON.parse(status.stdout) as {
      batch: { progress: BackfillProgress };
      calls: { outcome?: string }[];
    };
    expect(shown.batch.progress.skipped).toBe(2);
    expect(shown.calls.map((c) => c.outcome)).toEqual(['done', 'done']);
    const overview = JSON.parse((await callpipe('status', '--json')).stdout) as {
      batches: { workflowId: string }[];
    };
    expect(overview.batches.map((b) => b.workflowId)).toContain(result.workflowId);
    expect((await callpipe('backfill')).stderr).toMatch(/either an s3:\/\/bucket\/prefix or --manifest/);
  });
});
