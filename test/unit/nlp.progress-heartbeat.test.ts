/**
 * A text step's progress heartbeats (activities/nlp/context.ts) reach the server only after the first
 * third of the heartbeat timeout: the SDK sends a first heartbeat at once, a billed Temporal action, and
 * a step that ends sooner needs none (the liveness heartbeat beats from that third on).
 */
import { describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { heartbeat } from '../../activities/nlp/context.ts';

/** The heartbeats a step gives in an attempt scheduled `agoMs` ago. */
async function heartbeatsSent(agoMs: number, heartbeatTimeoutMs: number | undefined): Promise<unknown[]> {
  const env = new MockActivityEnvironment({
    heartbeatTimeoutMs,
    currentAttemptScheduledTimestampMs: Date.now() - agoMs,
  });
  const sent: unknown[] = [];
  env.on('heartbeat', (details: unknown) => sent.push(details));
  await env.run(async () => heartbeat({ step: 'sentiment', done: 1, total: 9 }));
  return sent;
}

describe('text step progress heartbeats', () => {
  it('are not sent in the first third of the heartbeat timeout', async () => {
    expect(await heartbeatsSent(1_000, 30_000)).toEqual([]);
  });

  it('are sent from then on, with the progress', async () => {
    expect(await heartbeatsSent(11_000, 30_000)).toEqual([{ step: 'sentiment', done: 1, total: 9 }]);
  });

  it('are sent at once by an activity without a heartbeat timeout', async () => {
    expect(await heartbeatsSent(0, undefined)).toHaveLength(1);
  });

  it('are a no-op outside an activity', () => {
    expect(() => heartbeat({ step: 'sentiment' })).not.toThrow();
  });
});
