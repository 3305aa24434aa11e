/**
 * Manifests and inputs a careless user gives the real `callpipe` command, on the test stack: refused whole
 * before anything starts, with their lines (a repeated column, a call id claimed by two recordings, an
 * empty file; one missing input among several); a manifest only the workers read fails its batch with
 * the same lines, which `status` shows; a wrong S3 secret is named as such; a call cancelled on its own
 * is reported as cancelled by itself, not by its batch. No call is processed: the one call a test starts
 * waits on a queue nobody polls until it is cancelled.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { outputLocation } from '../../cli/submit.ts';
import { startBackfill } from '../../cli/commands/backfill.ts';
import { uploadKey } from '../../schemas/call-keys.ts';
import { taskQueuesOf } from '../../schemas/task-queues.ts';
import type { ReportRow } from '../../schemas/backfill.ts';
import { processRecording } from '../../workflows/process-recording.ts';
import { callpipe } from '../helpers/cli.ts';
import { inProcessWorkers, uniquePrefix, withPrefix } from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { runId } from '../helpers/run-id.ts';

const run = runId();

let dir: string;
let pc: PipelineClient;
/** The command on the stack, its workflows on a queue prefix of this file's (nothing polls it). */
const prefix = uniquePrefix('hostile-manifests');
const cli = (args: string[], env: Record<string, string> = {}) =>
  callpipe(args, { ...inject('stackEnv'), CALLPIPE_TASK_QUEUE_PREFIX: prefix, ...env });

/** Workflows started on this file's queues: none may be, when the command refuses its input. */
async function startedOnOurQueue(): Promise<string[]> {
  const ids: string[] = [];
  for await (const w of pc.client.workflow.list({ query: `TaskQueue = '${prefix}'` })) ids.push(w.workflowId);
  return ids;
}

const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const uploadedAs = (path: string, text: string) =>
  uploadKey(
    pc.config.s3.inputPrefix,
    'manifests',
    createHash('sha256').update(text).digest('hex'),
    basename(path),
  );

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-hostile-manifests-'));
  pc = await connectPipeline(stackConfig());
});

afterAll(async () => {
  await pc?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('hostile manifests and inputs: manifests', () => {
  it('refuses a repeated column, a call id of two recordings and an empty manifest, with their lines, starting nothing', async () => {
    const cases = [
      {
        name: 'repeated.csv',
        text: `uri,uri\ns3://calls/${run}/a.wav,s3://calls/${run}/b.wav\n`,
        says: [/line 1: column 'uri' is given twice \(columns 1 and 2\)/],
      },
      {
        name: 'conflict.csv',
        text: `uri,call_id\ns3://calls/${run}/a.wav,c-${run}\ns3://calls/${run}/b.wav,c-${run}\n`,
        says: [/line 3: call id of line 2, for another recording/],
      },
      { name: 'header-only.csv', text: 'uri,agent\n', says: [/line 1: a header and no rows/] },
      { name: 'empty.csv', text: '', says: [/manifest is empty/] },
    ];
    for (const c of cases) {
      const path = file(`${run}-${c.name}`, c.text);
      // --detach too: a refusal before the start is an error, not a started batch.
      const out = await cli(['backfill', '--manifest', path, '--detach']);
      expect(out.code, `${c.name}: ${out.stderr}`).toBe(1);
      for (const says of c.says) expect(out.stderr, c.name).toMatch(says);
      expect(out.stderr, c.name).toMatch(/nothing was started/);
      expect(out.stdout, c.name).toBe('');
      // Not even uploaded.
      expect(await pc.store.exists(uploadedAs(path, c.text)), c.name).toBe(false);
    }
    expect(await startedOnOurQueue()).toEqual([]);
  });

  it('fails a batch whose manifest only the workers read with its lines, and status shows them', async () => {
    const key = `manifests/${run}/workers-only.csv`;
    await pc.store.put(key, `key,key\n${run}/a.wav,${run}/b.wav\n`);
    const started = await startBackfill(pc, {
      batchId: `hostile-manifest-${run}`,
      source: { kind: 'manifest', bucket: pc.store.bucket, key },
      output: outputLocation(undefined, pc.config),
    });
    await expect(started.handle.result()).rejects.toThrow();
    const status = await callpipe(['status', started.batchId], inject('stackEnv'));
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/FAILED/);
    expect(status.stdout).toMatch(/reason: manifest refused: line 1: column 'key' is given twice/);
    // No call of that batch was started.
    const calls = [];
    for await (const w of pc.client.workflow.list({
      query: `WorkflowType = '${processRecording.name}' AND CallpipeBatchId = "${started.batchId}"`,
    }))
      calls.push(w);
    expect(calls).toEqual([]);
  });
});

describe('hostile manifests and inputs: inputs, secrets and cancellation', () => {
  it('process: one missing input among several starts none and names it', async () => {
    const a = file(`${run}-a.wav`, `RIFF a ${run}`);
    const b = file(`${run}-b.wav`, `RIFF b ${run}`);
    const missing = join(dir, `${run}-missing.wav`);
    const out = await cli(['process', a, missing, b, '--detach']);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`process: ${missing}: no such file`);
    expect(out.stderr).toMatch(/1 of 3 inputs cannot be processed .*; nothing was started/);
    expect(out.stderr).not.toMatch(/UnknownError/);
    // The good inputs before and after it were neither uploaded nor started.
    for (const [path, text] of [
      [a, `RIFF a ${run}`],
      [b, `RIFF b ${run}`],
    ] as const) {
      const key = uploadKey(
        pc.config.s3.inputPrefix,
        'local',
        createHash('sha256').update(text).digest('hex'),
        basename(path),
      );
      expect(await pc.store.exists(key)).toBe(false);
    }
    expect(await startedOnOurQueue()).toEqual([]);
  });

  it('says S3 refused the signature when the CLI has a wrong secret, never the secret', async () => {
    const secret = `wrong-secret-${run}`;
    await pc.store.put(`recordings/${run}/x.wav`, 'RIFF');
    const out = await cli(['process', `s3://${pc.store.bucket}/recordings/${run}/x.wav`, '--detach'], {
      CALLPIPE_S3_SECRET_ACCESS_KEY: secret,
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(
      new RegExp(
        `S3 at ${pc.config.s3.endpoint!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} refused the request's signature`,
      ),
    );
    expect(out.stderr).toMatch(/CALLPIPE_S3_SECRET_ACCESS_KEY/);
    expect(out.stderr).not.toContain(secret);
    expect(out.stderr).not.toMatch(/UnknownError/);
  });

  it('reports a call cancelled on its own as the call cancelled', async () => {
    // Workflows only: the call waits for its first activity on the media queue, which nobody polls.
    const own = uniquePrefix('hostile-cancel');
    const workers = await inProcessWorkers(withPrefix(stackConfig(), own), ['workflows']);
    try {
      const key = `recordings/${run}/cancel-me.wav`;
      await pc.store.put(key, 'RIFF');
      const manifest = file(`${run}-one.csv`, `uri\ns3://${pc.store.bucket}/${key}\n`);
      const backfill = callpipe(['backfill', '--manifest', manifest, '--json'], {
        ...inject('stackEnv'),
        CALLPIPE_TASK_QUEUE_PREFIX: own,
      });
      const query = `WorkflowType = '${processRecording.name}' AND TaskQueue = '${taskQueuesOf(own).workflows}'`;
      let call: string | undefined;
      for (let i = 0; !call && i < 400; i++) {
        for await (const w of pc.client.workflow.list({ query })) call = w.workflowId;
        if (!call) await new Promise((r) => setTimeout(r, 500));
      }
      expect(call).toBeDefined();
      await pc.client.workflow.getHandle(call!).cancel();

      const out = await backfill;
      expect(out.code).toBe(1); // a cancelled call is not a processed one
      const result = JSON.parse(out.stdout) as { status: string; cancelled: number; reportJsonKey: string };
      expect(result).toMatchObject({ status: 'done', cancelled: 1 });
      const report = JSON.parse(await pc.store.getText(result.reportJsonKey)) as { rows: ReportRow[] };
      expect(report.rows).toEqual([
        expect.objectContaining({
          status: 'cancelled',
          reason: 'call cancelled (its workflow was cancelled)',
        }),
      ]);
    } finally {
      await workers.stop();
    }
  });
});
