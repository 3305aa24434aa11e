import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import type { Client } from '@temporalio/client';
import { batchCost, evenSample } from '../../activities/cost/batch-cost.ts';
import { costSection } from '../../activities/pages/night-cost.ts';
import type { ObjectStore } from '../../activities/storage/object-store.ts';
import type { ReportRow } from '../../schemas/backfill.ts';

const recorded = historyFromJSON(
  JSON.parse(
    readFileSync(
      fileURLToPath(new URL('../fixtures/histories/process-recording-redacted-audio.json', import.meta.url)),
      'utf8',
    ),
  ),
);

/** A client whose every call's history is the recorded one; a store that holds each call's result. */
const temporal = {
  workflow: { getHandle: () => ({ fetchHistory: () => Promise.resolve(recorded) }) },
} as unknown as Client;
const result = JSON.stringify({
  audio: { durationSeconds: 1800 },
  sessions: [{ audioSecondsSent: 1800 }, { audioSecondsSent: 1900 }],
  processing: { requests: { recognition: { requests: 40 }, sentiment: { requests: 300 } } },
});
const store = { withBucket: () => ({ getText: () => Promise.resolve(result) }) } as unknown as ObjectStore;

const rows = (n: number): ReportRow[] =>
  Array.from({ length: n }, (_, i) => ({
    callId: `call-${String.fromCharCode(97 + (i % 26))}${i}`,
    source: `in/${i}.wav`,
    status: 'done',
    durationSeconds: 1800,
    workflowId: `wf-${i}`,
    resultKey: `out/${i}/result.json`,
  }));

describe("a batch report's cost", () => {
  it('counts every call of a small batch from its history and result', async () => {
    const cost = await batchCost({ store, bucket: 'b', rows: rows(4), temporal });
    expect(cost.figures.audioHours).toBe(2);
    expect(cost.figures.historiesRead).toBe(4);
    expect(cost.figures.actions).toEqual({
      workflowStarted: 4,
      activityStarted: 76,
      searchAttributesUpsert: 8,
      // Its activities all ended within a third of their heartbeat timeouts: none sent.
      activityHeartbeat: 0,
    });
    expect(cost.figures.historyEventsPerCall).toEqual({ mean: 115, max: 115 });
    expect(cost.figures.serviceRequests).toEqual({ recognition: 160, sentiment: 1200 });
    expect(cost.figures.audioSecondsStreamed).toBe(4 * 3700);
    expect(cost.amount).toBeUndefined();
  });

  it('reads an even sample of a large batch and scales it, and prices it when told', async () => {
    const cost = await batchCost({
      store,
      bucket: 'b',
      rows: rows(1000),
      temporal,
      prices: { currency: 'USD', temporalActionPer1M: 50, serviceAudioHour: 1 },
    });
    expect(cost.figures.historiesRead).toBe(200);
    expect(cost.figures.actions.workflowStarted).toBe(1000);
    expect(cost.figures.serviceRequests?.sentiment).toBe(300_000);
    expect(cost.amount?.unpriced).toEqual(['s3Put', 's3Get', 'cpu']);
    // 22 actions a call, and 1,027.8 audio hours streamed for 500 audio hours.
    expect(cost.amount?.total).toBeCloseTo(22_000 * 50e-6 + (1000 * 3700) / 3600, 3);
    expect(evenSample([1, 2, 3, 4, 5, 6], 3)).toEqual([1, 3, 5]);
  });

  it('says so when no history could be read, and the night report shows counts and the amount', async () => {
    const bare = await batchCost({ store, bucket: 'b', rows: rows(2) });
    expect(bare.note).toMatch(/no Temporal client/);
    expect(bare.figures.actions).toEqual({});
    const priced = await batchCost({
      store,
      bucket: 'b',
      rows: rows(2),
      temporal,
      prices: { currency: 'EUR', temporalActionPer1M: 40 },
    });
    const html = costSection(priced);
    expect(html).toContain('id="cost"');
    expect(html).toMatch(/search|upsert/i);
    expect(html).toContain('€');
    expect(html).toContain('a month of 30 audio hours');
    expect(costSection(bare)).toContain('CALLPIPE_PRICES');
    expect(costSection(undefined)).toBe('');
  });
});
