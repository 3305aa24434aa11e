/**
 * The cost meter on the real stack: a batch of two short calls through workers of this test's own,
 * started with a price table (CALLPIPE_PRICES). Its report holds the batch's Temporal actions counted
 * from the calls' histories, its service requests and audio streamed, and an amount; the night report
 * shows them; the workers count S3 requests by operation, audio streamed and CPU on /metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { outputLocation } from '../../cli/submit.ts';
import { startBackfill } from '../../cli/commands/backfill.ts';
import type { BackfillResult } from '../../workflows/backfill.ts';
import type { BatchReport } from '../../activities/backfill/report.ts';
import type { ManagedProcess } from '../../cli/stack/process.ts';
import { childWorkers, makeCall, uniquePrefix, withPrefix } from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { runId } from '../helpers/run-id.ts';
import { deltaBy, parseMetrics } from '../../bench/lib/cost-meter.ts';

const PRICES = { currency: 'USD', temporalActionPer1M: 50, serviceAudioHour: 1.2 };

describe('cost meter', () => {
  let dir: string;
  let pc: PipelineClient;
  let workers: ManagedProcess;
  let batch: BackfillResult;
  let report: BatchReport;
  let metrics: string;
  const run = runId();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'callpipe-cost-'));
    const config = withPrefix(stackConfig(), uniquePrefix('cost'));
    const log = join(dir, 'workers.log');
    workers = childWorkers(config, log, { CALLPIPE_PRICES: JSON.stringify(PRICES) });
    await workers.start();
    pc = await connectPipeline(config);
    const prefix = `cost-${run}/`;
    for (const [i, stereo] of [false, true].entries()) {
      const call = await makeCall(dir, `c${i}.wav`, {
        durationSeconds: 4,
        stereo,
        seed: 700 + i,
        sampleRate: 8000,
      });
      await pc.store.putFile(`${prefix}c${i}.wav`, call.path);
    }
    const started = await startBackfill(pc, {
      batchId: `test-cost-${run}`,
      source: { kind: 'prefix', bucket: pc.store.bucket, prefix },
      output: outputLocation(undefined, pc.config),
    });
    batch = (await started.handle.result()) as BackfillResult;
    report = JSON.parse(await pc.store.getText(batch.reportJsonKey)) as BatchReport;
    const url = /"msg":"metrics ready","url":"([^"]+)"/.exec(readFileSync(log, 'utf8'))![1]!;
    metrics = await (await fetch(url)).text();
  });

  afterAll(async () => {
    await workers?.stop();
    await pc?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("counts the batch's actions from its calls' histories and prices them", () => {
    expect(batch.done).toBe(2);
    const cost = report.cost!;
    expect(cost.figures.historiesRead).toBe(2);
    const actions = cost.figures.actions;
    expect(actions.workflowStarted).toBe(2);
    // Each call probes, plans (staging its tracks), recognizes (a session a channel) and analyses its text.
    expect(actions.activityStarted).toBeGreaterThanOrEqual(2 * 8);
    expect(actions.searchAttributesUpsert).toBeGreaterThan(0);
    expect(cost.figures.historyEventsPerCall!.mean).toBeGreaterThan(actions.activityStarted! / 2);
    expect(cost.figures.serviceRequests!.recognition).toBeGreaterThan(0);
    // Every channel's speech, as the sessions streamed it.
    expect(cost.figures.audioSecondsStreamed).toBeGreaterThan(0);
    expect(cost.amount).toMatchObject({ currency: 'USD', unpriced: ['s3Put', 's3Get', 'cpu'] });
    const actionLine = cost.amount!.lines.find((l) => l.item === 'temporalActions')!;
    expect(actionLine.amount).toBeCloseTo((actionLine.quantity * 50) / 1e6, 9);
    expect(cost.amount!.total).toBeGreaterThan(0);
  });

  it('shows the cost in the night report', async () => {
    const html = await pc.store.getText(batch.reportHtmlKey!);
    expect(html).toContain('id="cost"');
    expect(html).toContain('Temporal actions');
    expect(html).toMatch(/id="fact-cost-per-audio-hour"><b>\$/);
    expect(html).toContain('a month of');
  });

  it('has the workers count S3 requests by operation, audio streamed and CPU', () => {
    const samples = parseMetrics(metrics);
    const s3 = deltaBy(new Map(), samples, 'callpipe_s3_requests_total', 'operation');
    expect(s3.PutObject).toBeGreaterThan(0);
    expect(s3.GetObject).toBeGreaterThan(0);
    // These workers streamed this batch alone: their count is the results' own, to the second.
    const streamed = deltaBy(new Map(), samples, 'callpipe_asr_audio_seconds_streamed_total').total!;
    expect(Math.abs(streamed - report.cost!.figures.audioSecondsStreamed!)).toBeLessThanOrEqual(1);
    const cpu = deltaBy(new Map(), samples, 'callpipe_process_cpu_seconds', 'part');
    expect(cpu.self).toBeGreaterThan(0);
    // ffmpeg ran as the workers' children.
    expect(cpu.children).toBeGreaterThan(0);
    const byActivity = deltaBy(new Map(), samples, 'callpipe_activity_cpu_seconds_total', 'activity_type');
    // The plan's decode, which also stages the tracks: no session is transcoded on its own.
    expect(Object.keys(byActivity)).toContain('planSource');
    expect(Object.keys(byActivity)).not.toContain('transcodeSource');
  });
});
