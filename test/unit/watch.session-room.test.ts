/**
 * The session room a latency plan is cut to (activities/watch/session-room.ts): the account budget's free
 * leases and the asr queue's backlog, or one process's cap when no budget runs. Temporal is faked here;
 * the watch integration test runs it against the real server.
 */
import { describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { SESSION_BUDGET_QUERY, sessionRoom } from '../../activities/watch/session-room.ts';
import { sessionBudgetQuery } from '../../workflows/session-budget.ts';

function fakeTemporal(backlog: number, budget: { limit: number; leased: number; running?: number } | 'none') {
  const asked: unknown[] = [];
  const client = {
    options: { namespace: 'default' },
    workflowService: {
      describeTaskQueue: (request: unknown) => {
        asked.push(request);
        return Promise.resolve({ stats: { approximateBacklogCount: backlog } });
      },
    },
    workflow: {
      getHandle: (id: string) => ({
        query: (name: string) =>
          budget === 'none'
            ? Promise.reject(new WorkflowNotFoundError('not found', id, undefined))
            : name === SESSION_BUDGET_QUERY
              ? Promise.resolve(budget)
              : Promise.reject(new Error(`no query ${name}`)),
      }),
    },
  };
  return { client: client as unknown as Client, asked };
}

describe('sessionRoom', () => {
  it("reads the budget's existing query by its name", () => {
    expect(sessionBudgetQuery.name).toBe(SESSION_BUDGET_QUERY);
  });

  it("is the account's limit less the sessions running, and the asr queue's backlog as waiting", async () => {
    // 20 leases, of which 15 are idle polls: 5 sessions stream.
    const { client, asked } = fakeTemporal(3, { limit: 64, leased: 20, running: 5 });
    const room = await sessionRoom(
      { temporal: client, budgetWorkflowId: 'budget', accountLimit: true },
      { asrQueue: 'callpipe-asr', workerSessions: 16 },
    );
    expect(room).toEqual({ free: 59, waiting: 3, limit: 64, source: 'account' });
    expect(asked).toEqual([
      expect.objectContaining({ taskQueue: { name: 'callpipe-asr' }, reportStats: true }),
    ]);
  });

  it('falls back to the leases with a budget that does not report running sessions', async () => {
    const { client } = fakeTemporal(0, { limit: 64, leased: 20 });
    const room = await sessionRoom(
      { temporal: client, budgetWorkflowId: 'budget', accountLimit: true },
      { asrQueue: 'callpipe-asr', workerSessions: 16 },
    );
    expect(room).toMatchObject({ free: 44, source: 'account' });
  });

  it('is one process cap without an account limit, though the budget runs for liveness', async () => {
    const { client } = fakeTemporal(0, { limit: 16, leased: 0, running: 3 });
    const room = await sessionRoom(
      { temporal: client, budgetWorkflowId: 'budget', accountLimit: false },
      { asrQueue: 'callpipe-asr', workerSessions: 16 },
    );
    expect(room).toEqual({ free: 16, waiting: 0, limit: 16, source: 'worker' });
  });

  it('is one process cap when no budget runs', async () => {
    const { client } = fakeTemporal(0, 'none');
    const room = await sessionRoom(
      { temporal: client, budgetWorkflowId: 'budget', accountLimit: true },
      { asrQueue: 'callpipe-asr', workerSessions: 16 },
    );
    expect(room).toEqual({ free: 16, waiting: 0, limit: 16, source: 'worker' });
  });

  it('has no room without a Temporal client (the throughput plan)', async () => {
    expect(await sessionRoom({}, { asrQueue: 'q', workerSessions: 16 })).toMatchObject({ free: 0 });
  });
});
