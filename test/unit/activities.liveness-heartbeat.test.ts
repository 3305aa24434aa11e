/** withLivenessHeartbeat: an activity scheduled with a heartbeat timeout heartbeats while it runs, and only then. */
import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { MockActivityEnvironment } from '@temporalio/testing';
import { withLivenessHeartbeat } from '../../activities/liveness-heartbeat.ts';

function heartbeatsOf(env: MockActivityEnvironment): unknown[] {
  const seen: unknown[] = [];
  env.on('heartbeat', (details: unknown) => seen.push(details));
  return seen;
}

describe('withLivenessHeartbeat', () => {
  const activities = withLivenessHeartbeat({
    async slow(ms: number) {
      await sleep(ms);
      return ms;
    },
  });

  it('heartbeats every third of the heartbeat timeout while the activity runs, and stops when it ends', async () => {
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 3000 } as never);
    const seen = heartbeatsOf(env);
    expect(await env.run(activities.slow, 2500)).toBe(2500);
    // Every 1 s for 2.5 s: two heartbeats (one, should a loaded machine delay the timers), empty: they
    // carry no details.
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(seen.length).toBeLessThanOrEqual(2);
    expect(seen.every((d) => d === undefined)).toBe(true);
    const atEnd = seen.length;
    await sleep(1200);
    expect(seen).toHaveLength(atEnd);
  });

  it('does not heartbeat for an activity scheduled without a heartbeat timeout', async () => {
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: undefined } as never);
    const seen = heartbeatsOf(env);
    await env.run(activities.slow, 1500);
    expect(seen).toEqual([]);
  });

  it('passes what the activity throws through unchanged', async () => {
    const failing = withLivenessHeartbeat({
      async fail() {
        throw new Error('bad input');
      },
    });
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 3000 } as never);
    await expect(env.run(failing.fail)).rejects.toThrow('bad input');
  });
});
