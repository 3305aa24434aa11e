import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import {
  HeartbeatThrottle,
  estimatedHeartbeats,
  heartbeatThrottleMs,
} from '../../activities/cost/heartbeat-throttle.ts';
import { historyActions } from '../../activities/cost/history-actions.ts';
import { costAmount } from '../../activities/cost/amount.ts';
import { pricesInputSchema, s3ClassOf } from '../../schemas/cost.ts';
import { loadConfig } from '../../schemas/config-loader.ts';

const history = (file: string) =>
  historyFromJSON(
    JSON.parse(
      readFileSync(fileURLToPath(new URL(`../fixtures/histories/${file}`, import.meta.url)), 'utf8'),
    ),
  );

describe('heartbeats that reach the server', () => {
  it('throttles to 80 % of the heartbeat timeout, capped at 60 s, 30 s without a timeout', () => {
    expect(heartbeatThrottleMs(30_000)).toBe(24_000);
    expect(heartbeatThrottleMs(300_000)).toBe(60_000);
    expect(heartbeatThrottleMs(undefined)).toBe(30_000);
  });

  it('sends the first at once, then the last of each window when it closes, nothing for an empty window', () => {
    const t = new HeartbeatThrottle(24_000);
    // Every 10 s for a minute: sent at 0, at 24 (the one of 20), at 48 (the one of 40); 50 waits.
    for (const at of [0, 10, 20, 30, 40, 50]) t.beat(at * 1000);
    t.settle(60_000);
    expect(t.sent).toBe(3);
    // The attempt ends at 60 s: the heartbeat of 50 s was still waiting for its window (72 s).
    const idle = new HeartbeatThrottle(24_000);
    idle.beat(0);
    idle.settle(100_000);
    idle.beat(100_000);
    expect(idle.sent).toBe(2);
  });

  it('estimates the first at a third of the timeout, then one per interval', () => {
    expect(estimatedHeartbeats(9_000, 30_000)).toBe(0);
    // At 10 s, then 34 s and 58 s (the last of each 24-s window).
    expect(estimatedHeartbeats(59_000, 30_000)).toBe(3);
    expect(estimatedHeartbeats(59_000, undefined)).toBe(0);
  });

  it('estimates a recognition session by its own interval: with a 150-s timeout, one per 120 s', () => {
    expect(estimatedHeartbeats(119_000, 150_000, 120_000)).toBe(0);
    expect(estimatedHeartbeats(3_600_000, 150_000, 120_000)).toBe(30);
  });
});

describe('actions of a history', () => {
  it("counts a recorded call's start, activities and upserts", () => {
    const { actions, events, activityAttempts } = historyActions(
      history('process-recording-redacted-audio.json').events ?? [],
    );
    expect(events).toBe(115);
    expect(actions).toEqual({ workflowStarted: 1, activityStarted: 19, searchAttributesUpsert: 2 });
    expect(Object.values(activityAttempts).reduce((a, b) => a + b, 0)).toBe(19);
  });

  it('counts an attempt beyond the first as a retry and estimates heartbeats from the run time', () => {
    const t0 = Date.parse('2026-11-26T00:00:00Z');
    const at = (s: number) => ({ seconds: Math.floor((t0 + s * 1000) / 1000), nanos: 0 });
    const events = [
      {
        eventId: 5,
        eventTime: at(0),
        activityTaskScheduledEventAttributes: {
          activityType: { name: 'recognizeSession' },
          heartbeatTimeout: { seconds: 30 },
        },
      },
      {
        eventId: 6,
        eventTime: at(1),
        activityTaskStartedEventAttributes: { scheduledEventId: 5, attempt: 3 },
      },
      { eventId: 7, eventTime: at(101), activityTaskCompletedEventAttributes: { scheduledEventId: 5 } },
      { eventId: 8, eventTime: at(102), timerStartedEventAttributes: {} },
      { eventId: 9, eventTime: at(200), workflowExecutionSignaledEventAttributes: {} },
    ];
    const counted = historyActions(events as never);
    expect(counted.actions).toEqual({ activityStarted: 1, activityRetried: 2, timerStarted: 1, signal: 1 });
    // 100 s at a 24-s throttle: at 10, 34, 58, 82.
    expect(counted.estimatedHeartbeats).toEqual({ recognizeSession: 4 });
    // A window holds only its own events.
    expect(historyActions(events as never, { fromMs: t0 + 150_000, toMs: t0 + 300_000 }).actions).toEqual({
      signal: 1,
    });
  });
});

describe('priced cost', () => {
  const figures = {
    audioHours: 10,
    calls: 20,
    actions: { workflowStarted: 20, activityStarted: 980 },
    historiesRead: 20,
    s3Requests: { PutObject: 600, ListObjectsV2: 400, GetObject: 5000, HeadObject: 5000, DeleteObject: 99 },
    audioSecondsStreamed: 72_000,
    cpuSeconds: 7200,
  };

  it('prices each item, per audio hour and for a month, naming what has no price', () => {
    const cost = costAmount(figures, {
      currency: 'USD',
      temporalActionPer1M: 50,
      s3PutPer1k: 0.005,
      s3GetPer1k: 0.0004,
      serviceAudioHour: 1,
    });
    const amount = Object.fromEntries(cost.lines.map((l) => [l.item, l.amount]));
    expect(amount.temporalActions).toBeCloseTo(0.05);
    expect(amount.s3Put).toBeCloseTo(0.005);
    expect(amount.s3Get).toBeCloseTo(0.004);
    expect(amount.serviceAudio).toBeCloseTo(20);
    expect(cost.unpriced).toEqual(['cpu']);
    expect(cost.total).toBeCloseTo(20.059);
    expect(cost.perAudioHour).toBeCloseTo(2.0059);
    expect(cost.month.audioHours).toBe(300);
    expect(cost.month.amount).toBeCloseTo(601.77);
  });

  it('forecasts the month the deployment names', () => {
    const cost = costAmount(figures, { currency: 'EUR', cpuCoreHour: 0.1, audioHoursPerMonth: 1000 });
    expect(cost.total).toBeCloseTo(0.2);
    expect(cost.month.amount).toBeCloseTo(20);
  });

  it('classes S3 operations as they are priced', () => {
    expect(['PutObject', 'ListObjectsV2', 'GetObject', 'DeleteObject'].map(s3ClassOf)).toEqual([
      'put',
      'put',
      'get',
      'free',
    ]);
  });
});

describe('CALLPIPE_PRICES', () => {
  const env = (prices: string) => ({
    CALLPIPE_PRICES: prices,
    CALLPIPE_CLIENT_ID: 'x',
    CALLPIPE_CLIENT_SECRET: 'y',
  });

  it('reads a JSON price table', () => {
    expect(pricesInputSchema.parse('{"currency":"JPY","s3GetPer1k":0.06}')).toEqual({
      currency: 'JPY',
      s3GetPer1k: 0.06,
    });
    expect(
      loadConfig({ env: env('{"currency":"USD","temporalActionPer1M":50}'), file: undefined }).prices,
    ).toEqual({ currency: 'USD', temporalActionPer1M: 50 });
  });

  it.each([
    ['not json', /CALLPIPE_PRICES/],
    ['{"currency":"dollars"}', /three-letter/],
    ['{"currency":"USD","temporalActionPer1M":-1}', /CALLPIPE_PRICES/],
    ['{"currency":"USD","s3PutPerK":1}', /s3PutPerK/],
  ])('refuses %s at load, naming the variable', (value, message) => {
    expect(() => loadConfig({ env: env(value) })).toThrow(message);
  });
});
