/**
 * The nightly Schedule on the shared test stack: create-or-update, a manual trigger, and the run it
 * starts processing the previous day's prefix (resolved from the action's time inside the workflow).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { upsertNightlySchedule } from '../../cli/commands/schedule.ts';
import { dayBefore } from '../../workflows/nightly-date.ts';
import type { NightlyInput, NightlyResult } from '../../workflows/nightly.ts';
import { makeCall } from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { runId } from '../helpers/run-id.ts';

describe('nightly schedule', () => {
  let dir: string;
  let pc: PipelineClient;
  const run = runId();
  const scheduleId = `test-nightly-${run}`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'callpipe-schedule-'));
    pc = await connectPipeline(stackConfig());
  });

  afterAll(async () => {
    await pc.client.schedule
      .getHandle(scheduleId)
      .delete()
      .catch(() => undefined);
    await pc?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates, updates and triggers the nightly run, which processes the previous day', async () => {
    const day = dayBefore(new Date(), 'UTC');
    const root = `nightly-${run}`;
    const dayPrefix = `${root}/${day.yyyy}/${day.mm}/${day.dd}/`;
    for (let i = 0; i < 2; i++) {
      const call = await makeCall(dir, `n-${i}.wav`, { durationSeconds: 3, seed: 300 + i, sampleRate: 8000 });
      await pc.store.putFile(`${dayPrefix}call-${i}.wav`, call.path);
    }
    // Another day's recording: not tonight's work.
    const other = await makeCall(dir, 'other.wav', { durationSeconds: 3, seed: 399, sampleRate: 8000 });
    await pc.store.putFile(`${root}/2001/01/01/old.wav`, other.path);

    const options = {
      id: scheduleId,
      cron: '0 3 * * *',
      sourceTemplate: `s3://${pc.store.bucket}/${root}/{yyyy}/{mm}/{dd}/`,
      timeZone: 'UTC',
      concurrency: 3,
      catchupWindow: '1d',
    };
    expect(await upsertNightlySchedule(pc, { ...options, cron: '0 4 * * *' })).toBe('created');
    expect(await upsertNightlySchedule(pc, options)).toBe('updated');
    const handle = pc.client.schedule.getHandle(scheduleId);
    const described = await handle.describe();
    expect(described.policies.overlap).toBe(ScheduleOverlapPolicy.BUFFER_ONE);
    expect(described.policies.catchupWindow).toBe(86_400_000);
    expect(described.spec.calendars?.[0]?.hour).toEqual([{ start: 3, end: 3, step: 1 }]);
    // The night's backfill input says `concurrency` (0.1 wrote `window`), as the backfill reads it.
    const [nightly] = (described.action as { args?: NightlyInput[] }).args ?? [];
    expect(nightly?.backfill).toMatchObject({ concurrency: 3 });
    expect(nightly?.backfill).not.toHaveProperty('window');

    await handle.trigger();
    let workflowId: string | undefined;
    for (let i = 0; i < 100 && !workflowId; i++) {
      workflowId = (await handle.describe()).info.recentActions[0]?.action.workflow.workflowId;
      if (!workflowId) await new Promise((r) => setTimeout(r, 200));
    }
    expect(workflowId).toMatch(new RegExp(`^nightly-${scheduleId}-`));
    const result = (await pc.client.workflow.getHandle(workflowId!).result()) as NightlyResult;
    expect(result.day).toBe(`${day.yyyy}-${day.mm}-${day.dd}`);
    expect(result.source).toBe(`s3://${pc.store.bucket}/${dayPrefix}`);
    expect(result.status).toBe('done');
    expect(result.backfill).toMatchObject({ listed: 2, done: 2, failed: 0 });
    expect(result.batchId).toBe(`nightly-${scheduleId}-${result.day}`);
  });
});
