/**
 * Call ids without personal data, on the real stack: a recording named by its caller's number and time,
 * as recorders name them, processed by `callpipe process` and then listed again by `callpipe backfill`.
 * The number is in no object key (the recording's own aside), no workflow id, no search attribute, no
 * batch report, no log of the stack and no metric, nor in the call's history as Temporal stores it; the
 * result's `source.key` still holds it (by design, as the encrypted workflow input does). The CLI's id and
 * the worker's id of the same key agree (keyed alike with the stack's digest key), so the batch finds the
 * call done.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { resultDocumentSchema } from '../../schemas/result.ts';
import { callpipe as run } from '../helpers/cli.ts';
import { makeCall } from '../helpers/pipeline.ts';
import { callIdOf, callIdRuleOf } from '../../activities/storage/call-id.ts';
import { stackConfig } from '../helpers/stack.ts';
import { runId } from '../helpers/run-id.ts';

// A number of this run's own: the bucket is shared, and other tests' recordings are named by numbers too.
const NUMBER = `090${randomInt(10_000_000, 100_000_000)}`;
const NAME = `${NUMBER}_20261124-1015.wav`;

const callpipe = (...args: string[]) => run(args, inject('stackEnv'));

/** JSON of anything, byte fields (payloads) as UTF-8 text, so a value in them can be found. */
function searchable(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : typeof v === 'bigint' ? String(v) : v,
  );
}

let dir: string;
let pc: PipelineClient;
const run8 = runId();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-call-id-'));
  pc = await connectPipeline(stackConfig());
});

afterAll(async () => {
  await pc?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('call ids hold no personal data', () => {
  it('a recording named by a phone number: the number only in its own key and in result.json', async () => {
    const { path } = await makeCall(dir, NAME, { durationSeconds: 4, seed: 3 });
    const inputPrefix = `${pc.config.s3.inputPrefix}call-id-${run8}/`;
    const key = `${inputPrefix}${NAME}`;
    await pc.store.putFile(key, path);
    const output = `call-id-${run8}/results/`;
    const outUrl = `s3://${pc.store.bucket}/${output}`;

    const processed = await callpipe('process', `s3://${pc.store.bucket}/${key}`, '--out', outUrl, '--json');
    expect(processed.code, processed.stderr).toBe(0);
    const [call] = JSON.parse(processed.stdout) as {
      callId: string;
      workflowId: string;
      status: string;
      resultKey: string;
    }[];
    expect(call!.status).toBe('done');
    expect(call!.callId).toMatch(/^xxxxxxxxxxx_xxxxxxxx-xxxx-[0-9a-f]{16}$/);
    expect(call!.workflowId).not.toContain(NUMBER);
    // Keyed with the stack's digest key, as the CLI and the workers both read it.
    const source = { bucket: pc.store.bucket, key };
    expect(pc.config.redaction.digestKey ?? pc.config.redaction.digestKeyFile).toBeDefined();
    expect(call!.callId).toBe(callIdOf(source, callIdRuleOf(pc.config)));
    expect(call!.callId).not.toBe(callIdOf(source));
    expect(call!.resultKey).toBe(`${output}${call!.callId}/result.json`);
    const doc = resultDocumentSchema.parse(JSON.parse(await pc.store.getText(call!.resultKey)));
    expect(doc.callId).toBe(call!.callId);
    expect(doc.source.key).toBe(key);

    // The batch lists the same key in a worker: the same id, so the call is found done.
    const batch = await callpipe(
      'backfill',
      `s3://${pc.store.bucket}/${inputPrefix}`,
      '--out',
      outUrl,
      '--json',
    );
    expect(batch.code, batch.stderr).toBe(0);
    const result = JSON.parse(batch.stdout) as { workflowId: string; skipped: number; done: number };
    expect(result).toMatchObject({ skipped: 1, done: 0 });
    expect(result.workflowId).not.toContain(NUMBER);

    // Object keys (the recording's own aside), and the batch's reports' bodies.
    let next: string | undefined;
    const reports: string[] = [];
    do {
      const page = await pc.store.listPage('', next);
      for (const o of page.objects) {
        if (o.key === key) continue;
        expect(o.key).not.toContain(NUMBER);
        // The batch's report, its parts and the night report (report.html).
        if (o.key.startsWith(`${output}batches/`)) reports.push(o.key);
      }
      next = page.next;
    } while (next);
    expect(reports.filter((k) => /report\.(json|csv|html)$/.test(k))).toHaveLength(3);
    for (const k of reports) {
      const body = await pc.store.getText(k);
      if (k.endsWith('report.json')) {
        expect(body).toContain(call!.callId);
        expect(body).toContain('xxxxxxxxxxx_xxxxxxxx-xxxx.wav');
      }
      expect(body, k).not.toContain(NUMBER);
    }

    // Workflow ids and search attributes of the call's and the batch's workflows.
    const executions = [];
    for await (const wf of pc.client.workflow.list({
      query: `CallpipeCallId = '${call!.callId}' OR WorkflowId = '${result.workflowId}'`,
    }))
      executions.push(wf);
    expect(executions.map((e) => e.workflowId).sort()).toEqual([call!.workflowId, result.workflowId].sort());
    for (const e of executions) {
      expect(e.workflowId).not.toContain(NUMBER);
      expect(searchable(e.typedSearchAttributes)).not.toContain(NUMBER);
      expect(searchable(e.searchAttributes)).not.toContain(NUMBER);
      expect(searchable(e.memo ?? {})).not.toContain(NUMBER);
    }
    const described = await pc.client.workflow.getHandle(call!.workflowId).describe();
    expect(searchable(described.searchAttributes)).toContain(call!.callId);
    expect(searchable(described.searchAttributes)).not.toContain(NUMBER);

    // The history as Temporal stores it: the input (the source key) is ciphertext, the id pseudonymous.
    const history = searchable(await pc.client.workflow.getHandle(call!.workflowId).fetchHistory());
    expect(history).toContain(call!.callId);
    expect(history).not.toContain(NUMBER);

    // The stack's logs and metrics.
    const logs = join(inject('stack').home, 'logs');
    for (const file of readdirSync(logs))
      expect(readFileSync(join(logs, file), 'utf8'), file).not.toContain(NUMBER);
    const metrics = await (await fetch(inject('stack').metricsUrl!)).text();
    expect(metrics).not.toContain(NUMBER);
  });
});
