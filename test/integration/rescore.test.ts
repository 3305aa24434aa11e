/**
 * `callpipe rescore` on the shared test stack: 200 finished calls under a prefix scored again with a
 * changed rule file, over several pages and runs (continue-as-new), every result written exactly once,
 * and not one request to the service (the request log of an emulator of this file's own is the evidence,
 * so the file shares the stack with others).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { outputLocation, resolveSource, submitRecording } from '../../cli/submit.ts';
import { readRulesFile } from '../../activities/insights/rule-file.ts';
import { makeCall } from '../helpers/pipeline.ts';
import { ownService, type OwnService } from '../helpers/own-service.ts';
import { resultDocumentSchema, type ResultDocument } from '../../schemas/result.ts';
import { rescoreRowSchema } from '../../schemas/rescore.ts';
import { runId } from '../helpers/run-id.ts';

const CALLS = 200;
const RULES = `format: 1
name: rescore-test
version: "2026.11.2"
categories:
  - name: spoke
    rules: [{ kind: phrase, terms: [です, ます], minCount: 1 }]
  - name: long_call
    rules: [{ kind: metric, metric: durationSeconds, above: 5 }]
scorecard:
  name: test
  questions:
    - { id: spoke, text: spoke, weight: 2, answer: { category: spoke } }
    - { id: never, text: never, weight: 1, answer: { rule: { kind: phrase, terms: [存在しない言葉] } } }
`;

/** The finished calls' ids, in order. */
const callIds = () => Array.from({ length: CALLS }, (_, i) => `call-${String(i).padStart(3, '0')}-0a1b2c3d`);

let dir: string;
let pc: PipelineClient;
let service: OwnService;
const callpipe = (...args: string[]) => service.callpipe(...args);
const requestsSoFar = () => service.requests().length;
const prefix = `rescore-${runId()}/`;
let original: ResultDocument;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-rescore-'));
  service = await ownService('rescore', dir);
  pc = await connectPipeline(service.config);
  // One call through the whole pipeline; its result.json copied to 200 finished calls.
  const call = await makeCall(dir, 'call.wav', {
    durationSeconds: 20,
    stereo: true,
    seed: 5,
    sampleRate: 8000,
  });
  const source = await resolveSource(call.path, pc.store, pc.config);
  const submitted = await submitRecording(pc, source, { output: outputLocation(undefined, pc.config) });
  const done = await submitted.handle.result();
  expect(done.status, done.reason).toBe('done');
  original = resultDocumentSchema.parse(JSON.parse(await pc.store.getText(done.resultKey!)));
  // Written at once: the S3 client's pool queues what it cannot send yet.
  await Promise.all(
    callIds().map((callId) =>
      Promise.all([
        pc.store.put(`${prefix}${callId}/result.json`, JSON.stringify({ ...original, callId })),
        pc.store.put(`${prefix}${callId}/transcript.vtt`, 'WEBVTT\n'),
      ]),
    ),
  );
  writeFileSync(join(dir, 'rules.yaml'), RULES);
}, 300_000);

afterAll(async () => {
  await pc?.close();
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('callpipe rescore', () => {
  it('scores 200 finished calls again with changed rules: every result written once, 0 service requests', async () => {
    const rules = readRulesFile(join(dir, 'rules.yaml'));
    expect(original.rules!.digest).not.toBe(rules.digest);
    const before = requestsSoFar();
    // 150 objects a page (result.json and transcript.vtt): 3 pages, one per run.
    const out = await callpipe(
      'rescore',
      `s3://${pc.config.s3.bucket}/${prefix}`,
      ...['--rules', join(dir, 'rules.yaml'), '--page-size', '150', '--pages-per-run', '1', '--json'],
    );
    expect(out.code, out.stderr).toBe(0);
    const result = JSON.parse(out.stdout) as {
      batchId: string;
      updated: number;
      current: number;
      run: number;
      reportJsonKey: string;
    };
    expect(result).toMatchObject({ updated: CALLS, current: 0, missing: 0, failed: 0 });
    expect(result.run).toBeGreaterThanOrEqual(2); // continued as new
    expect(requestsSoFar() - before).toBe(0);

    const report = JSON.parse(await pc.store.getText(result.reportJsonKey)) as { rows: unknown[] };
    const rows = rescoreRowSchema.array().parse(report.rows);
    expect(rows).toHaveLength(CALLS);
    expect(new Set(rows.map((r) => r.callId)).size).toBe(CALLS);
    const docs = await Promise.all(
      callIds().map(async (callId) =>
        resultDocumentSchema.parse(JSON.parse(await pc.store.getText(`${prefix}${callId}/result.json`))),
      ),
    );
    for (const doc of docs) {
      expect(doc.rules).toMatchObject({
        name: 'rescore-test',
        version: '2026.11.2',
        digest: rules.digest,
        rescoreBatchId: result.batchId,
      });
      expect(doc.categories!.map((c) => c.name)).toEqual(['spoke', 'long_call']);
      expect(doc.scorecard).toMatchObject({ name: 'test', max: 3 });
      expect(doc.utterances).toEqual(original.utterances);
    }

    // The same rules again: every call is current, nothing is written, still no request.
    const again = await callpipe(
      'rescore',
      `s3://${pc.config.s3.bucket}/${prefix}`,
      '--rules',
      join(dir, 'rules.yaml'),
      '--json',
    );
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ updated: 0, current: CALLS });
    expect(requestsSoFar() - before).toBe(0);
  });

  it('refuses a rule file with a mistake before starting anything, naming the line', async () => {
    writeFileSync(join(dir, 'bad.yaml'), RULES.replace('above: 5', 'above: "five"'));
    const out = await callpipe(
      'rescore',
      `s3://${pc.config.s3.bucket}/${prefix}`,
      '--rules',
      join(dir, 'bad.yaml'),
    );
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/bad\.yaml: line 8: categories\.1\.rules\.0\.above: /);
  });
});
