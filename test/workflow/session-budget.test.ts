/**
 * The account's session budget (workflows/session-budget.ts) on the project's dev server, driven by the
 * workers' own client of it (workers/session-budget-client.ts) and by raw updates where a test needs a
 * worker that never heartbeats: the limit holds under contention from several workers, the line is first
 * come first served, a silent worker's leases come back, an abandoned request gives its place up, and
 * leases and the line survive continue-as-new.
 */
import { describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { SessionBudgetClient } from '../../workers/session-budget-client.ts';
import { RunningActivities } from '../../workers/running-activities.ts';
import type { RunningActivity } from '../../schemas/running-activity.ts';
import {
  acquireSessionsUpdate,
  releaseSessionsSignal,
  renewSessionsSignal,
  sessionBudget,
  sessionBudgetQuery,
  type AcquireResult,
} from '../../workflows/session-budget.ts';
import { sleep, uniqueQueue, useTestEnv, waitFor, withWorker } from './helpers.ts';

const testEnv = useTestEnv();

function budgetClient(client: Client, queue: string, limit: number, leaseTtlMs = 60_000) {
  return new SessionBudgetClient({
    client,
    limit,
    leaseTtlMs,
    workflowId: `${queue}-budget`,
    taskQueue: queue,
    acquireWaitMs: 500,
  });
}

/**
 * `fn` with `count` heartbeating workers' clients of a budget of `limit` on a queue of its own (named
 * `label`), served by a workflow worker; the clients and the budget are ended after.
 */
async function withBudget(
  label: string,
  count: number,
  limit: number,
  fn: (clients: SessionBudgetClient[], queue: string) => Promise<void>,
): Promise<void> {
  const env = testEnv();
  const queue = uniqueQueue(label);
  await withWorker(env, queue, {}, async () => {
    const clients = Array.from({ length: count }, () => budgetClient(env.client, queue, limit));
    await Promise.all(clients.map((c) => c.start()));
    try {
      await fn(clients, queue);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await env.client.workflow.getHandle(`${queue}-budget`).terminate('test over');
    }
  });
}

/** A raw request of a worker that never heartbeats (unlike SessionBudgetClient). */
function ask(client: Client, queue: string, holder: string, id: string, limit: number) {
  return client.workflow
    .getHandle(`${queue}-budget`)
    .executeUpdate(acquireSessionsUpdate, { args: [{ holder, ids: [id], limit, waitMs: 300 }] });
}

/**
 * Asks until granted (each answer waits at most 300 ms in the workflow); an update that meets the run's
 * end (continue-as-new) is asked again, as the workers' client does.
 */
async function askUntilGranted(client: Client, queue: string, holder: string, id: string, limit: number) {
  for (;;) {
    const answer: AcquireResult | undefined = await ask(client, queue, holder, id, limit).catch(
      () => undefined,
    );
    if (answer?.granted.includes(id)) return answer;
  }
}

const view = (client: Client, queue: string) =>
  client.workflow.getHandle(`${queue}-budget`).query(sessionBudgetQuery);

describe('sessionBudget: leases and the line', () => {
  it('three workers asking for 60 leases of a 4-session account: never more than 4 held, all served', async () => {
    await withBudget('budget-limit', 3, 4, async (workers, queue) => {
      const { client } = testEnv();
      let held = 0;
      let most = 0;
      const served: number[] = [];
      await Promise.all(
        workers.flatMap((w, wi) =>
          Array.from({ length: 20 }, async (_, i) => {
            const lease = await w.acquire(new AbortController().signal);
            held += 1;
            most = Math.max(most, held);
            await sleep(5 + ((i * 7 + wi * 3) % 20));
            held -= 1;
            served.push(wi);
            w.release(lease);
          }),
        ),
      );
      expect(served).toHaveLength(60);
      expect(most).toBeLessThanOrEqual(4);
      expect(most).toBe(4);
      await waitFor('every lease given back', async () => (await view(client, queue)).leased === 0);
      const v = await view(client, queue);
      expect(v).toMatchObject({ limit: 4, leased: 0, waiting: 0, grants: 60, expired: 0 });
      expect(v.peak).toBe(4);
    });
  });

  it('serves the line first come, first served across workers', async () => {
    await withBudget('budget-fifo', 3, 1, async ([a, b, c], queue) => {
      const { client } = testEnv();
      const first = await a!.acquire(new AbortController().signal);
      const order: string[] = [];
      const bLease = b!.acquire(new AbortController().signal).then((id) => (order.push('b'), id));
      await waitFor('b in line', async () => (await view(client, queue)).waiting === 1);
      const cLease = c!.acquire(new AbortController().signal).then((id) => (order.push('c'), id));
      await waitFor('c in line', async () => (await view(client, queue)).waiting === 2);
      a!.release(first);
      b!.release(await bLease);
      c!.release(await cLease);
      expect(order).toEqual(['b', 'c']);
    });
  });

  it('takeFree grants only free room, never while somebody waits in line, and never joins the line', async () => {
    await withBudget('budget-free', 2, 3, async ([a, b], queue) => {
      const { client } = testEnv();
      const first = await a!.acquire(new AbortController().signal);
      const free = await b!.takeFree(5);
      expect(free).toHaveLength(2);
      expect(await b!.takeFree(1)).toEqual([]);
      expect(await view(client, queue)).toMatchObject({ leased: 3, waiting: 0 });
      // a waits in line for a session: a free one goes to it, not to the next takeFree.
      const second = a!.acquire(new AbortController().signal);
      await waitFor('a in line', async () => (await view(client, queue)).waiting === 1);
      b!.release(free[0]!);
      const lease = await second;
      expect(await b!.takeFree(1)).toEqual([]);
      b!.release(free[1]!);
      await waitFor('one free', async () => (await view(client, queue)).leased === 2);
      const again = await b!.takeFree(2);
      expect(again).toHaveLength(1);
      for (const id of [first, lease]) a!.release(id);
      b!.release(again[0]!);
      await waitFor('every lease given back', async () => (await view(client, queue)).leased === 0);
    });
  });

  it("takes back a silent worker's leases after the lease life, and gives them to the line", async () => {
    const env = testEnv();
    const queue = uniqueQueue('budget-expiry');
    await withWorker(env, queue, {}, async () => {
      // The heartbeating worker starts the budget with a 2-s lease life.
      const alive = budgetClient(env.client, queue, 2, 2000);
      await alive.start();
      // A worker that takes both sessions and is then never heard of again (SIGKILLed).
      await askUntilGranted(env.client, queue, 'killed-worker', 'k1', 2);
      await askUntilGranted(env.client, queue, 'killed-worker', 'k2', 2);
      expect((await view(env.client, queue)).leased).toBe(2);
      const lease = await alive.acquire(new AbortController().signal);
      const v = await view(env.client, queue);
      expect(v).toMatchObject({ leased: 1, expired: 2 });
      alive.release(lease);
      await alive.close();
      await env.client.workflow.getHandle(`${queue}-budget`).terminate('test over');
    });
  });
});

describe('sessionBudget: lost workers and continue-as-new', () => {
  it('an abandoned request gives its place in line up (a worker shutting down)', async () => {
    await withBudget('budget-abort', 3, 1, async ([a, b, c], queue) => {
      const { client } = testEnv();
      const held = await a!.acquire(new AbortController().signal);
      const abort = new AbortController();
      const abandoned = b!.acquire(abort.signal);
      await waitFor('b in line', async () => (await view(client, queue)).waiting === 1);
      const cLease = c!.acquire(new AbortController().signal);
      await waitFor('c in line', async () => (await view(client, queue)).waiting === 2);
      abort.abort(Object.assign(new Error('poller stopped'), { name: 'AbortError' }));
      await expect(abandoned).rejects.toThrow('poller stopped');
      await waitFor('b out of line', async () => (await view(client, queue)).waiting === 1);
      a!.release(held);
      c!.release(await cLease);
      await waitFor('all given back', async () => (await view(client, queue)).leased === 0);
      expect((await view(client, queue)).grants).toBe(2);
    });
  });

  it("fails a lost worker's running activities by id once its lease life is over, nobody else's", async () => {
    const env = testEnv();
    const queue = uniqueQueue('budget-reap');
    const failed: RunningActivity[][] = [];
    const failLostSessions = async (input: unknown) => {
      failed.push((input as { activities: RunningActivity[] }).activities);
      return { failed: 1, gone: 0 };
    };
    await withWorker(env, queue, { failLostSessions }, async () => {
      // A live worker, telling its budget what it runs through the workers' own client. Its lease life is
      // long enough that a busy machine's late renew never makes it look lost.
      const running = new RunningActivities();
      const alive = new SessionBudgetClient({
        client: env.client,
        limit: 4,
        leaseTtlMs: 10_000,
        workflowId: `${queue}-budget`,
        taskQueue: queue,
        running,
      });
      await alive.start();
      const handle = env.client.workflow.getHandle(`${queue}-budget`);
      const kept: RunningActivity = ['call-b', 'run-b', '7', 1];
      running.start(kept);
      // A worker that runs two sessions, ends one, and is never heard of again (SIGKILLed); and one that
      // runs a session and stops gracefully.
      const lost: RunningActivity = ['call-a', 'run-a', '5', 2];
      const done: RunningActivity = ['call-a', 'run-a', '6', 1];
      await handle.signal(renewSessionsSignal, { holder: 'killed', started: [lost, done] });
      await handle.signal(renewSessionsSignal, { holder: 'killed', ended: [done] });
      await handle.signal(renewSessionsSignal, { holder: 'stopped', started: [['call-c', 'run-c', '3', 1]] });
      await handle.signal(releaseSessionsSignal, { holder: 'stopped', all: true });
      await waitFor('the lost worker reaped', () => failed.length > 0, 30_000);
      expect(failed).toEqual([[lost]]);
      // One more sweep (at most half a lease life later) reaps nothing more.
      await sleep(6000);
      expect(failed).toHaveLength(1);
      expect(await view(env.client, queue)).toMatchObject({ running: 1, reaped: 1 });
      running.end(kept);
      await alive.close();
      await handle.terminate('test over');
    });
  });

  it('keeps leases and the line across continue-as-new', async () => {
    const env = testEnv();
    const queue = uniqueQueue('budget-can');
    await withWorker(env, queue, {}, async () => {
      const handle = await env.client.workflow.start(sessionBudget, {
        workflowId: `${queue}-budget`,
        taskQueue: queue,
        args: [{ limit: 2, leaseTtlMs: 600_000, maxHistoryEvents: 40 }],
      });
      await askUntilGranted(env.client, queue, 'w1', 'a', 2);
      await askUntilGranted(env.client, queue, 'w1', 'b', 2);
      // In line behind the two, asking again and again: the history grows past 40 events.
      const waiting = askUntilGranted(env.client, queue, 'w2', 'c', 2);
      await waitFor('a new run', async () => (await view(env.client, queue)).run >= 1, 30_000);
      expect(await view(env.client, queue)).toMatchObject({ leased: 2, waiting: 1 });
      await handle.signal(releaseSessionsSignal, { holder: 'w1', ids: ['a'] });
      await expect(waiting).resolves.toMatchObject({ granted: ['c'] });
      expect(await view(env.client, queue)).toMatchObject({ leased: 2, waiting: 0, grants: 3 });
      await handle.terminate('test over');
    });
  });
});
