/**
 * The forget and retention workflows with mocked activities on the project's dev server: the steps in
 * their order (objects, rows, reports, executions, verification, audit), a kind's retention touching
 * objects only, a refused delete failing the request with the activity's message, and retention running
 * one forget child per request, a finished request not run twice.
 */
import { describe, expect, it } from 'vitest';
import { WorkflowFailedError } from '@temporalio/client';
import { forget } from '../../workflows/forget.ts';
import { retention } from '../../workflows/retention.ts';
import type { ForgetInput } from '../../schemas/lifecycle.ts';
import { nonRetryable, uniqueQueue, useTestEnv, withWorker, type ActivityImpl } from './helpers.ts';

const testEnv = useTestEnv();

const places: ForgetInput['places'] = {
  output: { bucket: 'out', prefix: 'results/' },
  stagingPrefix: 'staging/',
  tables: { bucket: 'out', prefix: 'tables/', timeZone: 'UTC' },
};

function lifecycleMocks(overrides: Record<string, ActivityImpl> = {}) {
  const steps: string[] = [];
  const ids = (input: unknown) => (input as { callIds: string[] }).callIds;
  const impl: Record<string, ActivityImpl> = {
    forgetObjects: async (input) =>
      Object.fromEntries(ids(input).map((id) => [id, { results: 4, staging: 2 }])),
    forgetTableRows: async (input) => ({
      rows: Object.fromEntries(ids(input).map((id) => [id, { calls: 1, utterances: 9 }])),
      days: ['2026-11-24'],
    }),
    forgetReportLines: async (input) => Object.fromEntries(ids(input).map((id) => [id, 3])),
    forgetExecutions: async (input) => Object.fromEntries(ids(input).map((id) => [id, 1])),
    verifyForgotten: async () => ({ verified: true }),
    writeAudit: async (input) =>
      `audit/${(input as { record: { reason: string; requestId: string } }).record.reason}/${(input as { record: { requestId: string } }).record.requestId}.json`,
    retentionRequests: async () => [],
    ...overrides,
  };
  const activities = Object.fromEntries(
    Object.entries(impl).map(([name, f]) => [
      name,
      async (input: unknown) => {
        steps.push(name);
        return f(input);
      },
    ]),
  );
  return { steps, activities };
}

describe('forget workflow', () => {
  it('erases objects, rows, report lines and executions, verifies, then writes the audit record', async () => {
    const queue = uniqueQueue('forget');
    const { steps, activities } = lifecycleMocks();
    const result = await withWorker(testEnv(), queue, activities, () =>
      testEnv().client.workflow.execute(forget, {
        taskQueue: queue,
        workflowId: `forget-order-${queue}`,
        args: [
          {
            requestId: 'forget-abcdefgh',
            callIds: ['call-a', 'call-b'],
            places,
            recordings: false,
            reason: 'forget',
          },
        ],
      }),
    );
    expect(steps).toEqual([
      'forgetObjects',
      'forgetTableRows',
      'forgetReportLines',
      'forgetExecutions',
      'verifyForgotten',
      'writeAudit',
    ]);
    expect(result.auditKey).toBe('audit/forget/forget-abcdefgh.json');
    expect(result.audit.totals).toEqual({
      calls: 2,
      objects: 12,
      tableRows: 20,
      reportsRewritten: 6,
      workflowExecutions: 2,
    });
    expect(result.audit.verified).toBe(true);
  });

  it("a kind's erasure touches that kind's objects only", async () => {
    const queue = uniqueQueue('forget-kind');
    const { steps, activities } = lifecycleMocks();
    await withWorker(testEnv(), queue, activities, () =>
      testEnv().client.workflow.execute(forget, {
        taskQueue: queue,
        workflowId: `forget-kind-${queue}`,
        args: [
          {
            requestId: 'retention-staging-abcdefgh',
            callIds: ['call-a'],
            places,
            recordings: false,
            onlyKinds: ['staging'],
            reason: 'retention',
          },
        ],
      }),
    );
    expect(steps).toEqual(['forgetObjects', 'verifyForgotten', 'writeAudit']);
  });

  it('a delete S3 refused fails the request with the key named, and no audit record claims it done', async () => {
    const queue = uniqueQueue('forget-refused');
    const { steps, activities } = lifecycleMocks({
      forgetObjects: async () => {
        throw nonRetryable(
          'StorageRefused',
          'S3 refused to delete s3://out/results/call-a/call.html (AccessDenied)',
        );
      },
    });
    const err = await withWorker(testEnv(), queue, activities, () =>
      testEnv()
        .client.workflow.execute(forget, {
          taskQueue: queue,
          workflowId: `forget-refused-${queue}`,
          args: [
            {
              requestId: 'forget-refusedab',
              callIds: ['call-a'],
              places,
              recordings: false,
              reason: 'forget',
            },
          ],
        })
        .catch((e: unknown) => e),
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const activityFailure = (err as WorkflowFailedError).cause as Error & { cause?: Error };
    expect(activityFailure.cause?.message).toContain('s3://out/results/call-a/call.html');
    expect(steps).toEqual(['forgetObjects']);
  });
});

describe('retention workflow', () => {
  it('runs one forget per request, and a request done before is not run again', async () => {
    const queue = uniqueQueue('retention');
    const requests = [
      {
        requestId: `retention-results-${queue.replace(/[^a-z]/g, '')}`,
        kind: 'results',
        callIds: ['call-a', 'call-b'],
      },
      {
        requestId: `retention-staging-${queue.replace(/[^a-z]/g, '')}`,
        kind: 'staging',
        callIds: ['call-c'],
      },
    ];
    const { steps, activities } = lifecycleMocks({ retentionRequests: async () => requests });
    const run = (n: number) =>
      testEnv().client.workflow.execute(retention, {
        taskQueue: queue,
        workflowId: `retention-${n}-${queue}`,
        args: [{ places, days: { results: 30, staging: 7 }, now: '2026-06-30T12:00:00Z' }],
      });
    const [first, second] = await withWorker(testEnv(), queue, activities, async () => [
      await run(1),
      await run(2),
    ]);
    expect(first.requests.map((r) => [r.kind, r.calls, r.outcome])).toEqual([
      ['results', 2, 'erased'],
      ['staging', 1, 'erased'],
    ]);
    expect(second.requests.map((r) => r.outcome)).toEqual(['done before', 'done before']);
    // The whole calls' erasure went through rows and executions; the staging one did not.
    expect(steps.filter((s) => s === 'forgetTableRows')).toHaveLength(1);
    expect(steps.filter((s) => s === 'writeAudit')).toHaveLength(2);
  });
});
