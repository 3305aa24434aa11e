/**
 * The stack's worker process serves Prometheus metrics on the configured port: callpipe's counters
 * (after a small backfill has run through it) and Temporal's runtime metrics; its logs are JSON lines
 * with workflow ids and no secrets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { outputLocation } from '../../cli/submit.ts';
import { startBackfill } from '../../cli/commands/backfill.ts';
import type { BackfillResult } from '../../workflows/backfill.ts';
import { makeCall } from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { runId } from '../helpers/run-id.ts';

function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line ? Number(line.split(' ').pop()) : undefined;
}

describe('worker metrics and logs', () => {
  let dir: string;
  let pc: PipelineClient;
  let batch: BackfillResult;
  const run = runId();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'callpipe-metrics-'));
    pc = await connectPipeline(stackConfig());
    const prefix = `metrics-${run}/`;
    const call = await makeCall(dir, 'm.wav', { durationSeconds: 3, seed: 500, sampleRate: 8000 });
    await pc.store.putFile(`${prefix}m.wav`, call.path);
    const started = await startBackfill(pc, {
      batchId: `test-metrics-${run}`,
      source: { kind: 'prefix', bucket: pc.store.bucket, prefix },
      output: outputLocation(undefined, pc.config),
    });
    batch = (await started.handle.result()) as BackfillResult;
  });

  afterAll(async () => {
    await pc?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers on the metrics port with our counters and Temporal runtime metrics', async () => {
    expect(batch.done).toBe(1);
    const url = inject('stack').metricsUrl!;
    const res = await fetch(url);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(
      sample(text, 'callpipe_service_requests_total', 'endpoint="asr/stream",outcome="ok"'),
    ).toBeGreaterThan(0);
    expect(
      sample(text, 'callpipe_service_requests_total', 'endpoint="nlp/summary",outcome="ok"'),
    ).toBeGreaterThan(0);
    expect(sample(text, 'callpipe_asr_audio_seconds_recognized_total')).toBeGreaterThan(0);
    expect(sample(text, 'callpipe_asr_open_streams')).toBe(0);
    expect(sample(text, 'callpipe_asr_session_restarts_total')).toBeGreaterThanOrEqual(0);
    expect(text).toContain('# TYPE callpipe_service_99997_total counter');
    // Temporal's own (core) metrics, folded into the same endpoint.
    expect(text).toMatch(/^temporal_\w+/m);
    expect((await fetch(url.replace(/\/metrics$/, '/other'))).status).toBe(404);
  });

  it('logs JSON lines with workflow ids and never the service secret', () => {
    const log = readFileSync(join(inject('stack').home, 'logs', 'workers.log'), 'utf8');
    const lines = log.split('\n').filter((l) => l.startsWith('{'));
    const finished = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((e) => e.msg === 'backfill finished' && e.batchId === `test-metrics-${run}`);
    expect(finished).toMatchObject({ workflowType: 'backfill', workflowId: `backfill-test-metrics-${run}` });
    expect(finished?.runId).toBeTruthy();
    expect(log).not.toContain(inject('stackEnv').CALLPIPE_CLIENT_SECRET!);
  });
});
