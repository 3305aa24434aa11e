/**
 * Call events in processRecording (workflows/call-events.ts), with mocked activities on a real Temporal
 * server: an alert as soon as the insights exist (before publish), the completed event after the call's
 * outputs, the failed event after error.json; and a delivery whose receiver never answers does not keep
 * the call from completing (its eventDelivery workflow, abandoned, is still retrying).
 */
import { describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { processRecording } from '../../workflows/process-recording.ts';
import { eventDeliveryWorkflowId } from '../../workflows/event-delivery.ts';
import {
  mockActivities,
  nonRetryable,
  pick,
  processInput,
  uniqueQueue,
  useTestEnv,
  withWorker,
  type Mocks,
} from './helpers.ts';

const testEnv = useTestEnv();

async function runCall(name: string, mocks: Mocks, extra: Record<string, () => Promise<unknown>> = {}) {
  const taskQueue = uniqueQueue(name);
  const activities = { ...mocks.activities, ...extra };
  return withWorker(testEnv(), taskQueue, activities, async () => {
    const handle = await testEnv().client.workflow.start(processRecording, {
      taskQueue,
      workflowId: `process-${taskQueue}`,
      args: [processInput(taskQueue, `${name}-call`)],
    });
    return { handle, result: await handle.result() };
  });
}

const types = (mocks: Mocks) => mocks.callsOf('emitCallEvent').map((c) => pick(c.input, 'type'));

describe('call events', () => {
  it('an alert once the insights exist, before publish; completed after the outputs', async () => {
    const mocks = mockActivities({
      computeInsights: async (input) => ({
        insightsKey: pick(input, 'outputKey'),
        categories: ['complaint'],
      }),
    });
    const { result } = await runCall('events-done', mocks);
    expect(result.status).toBe('done');
    expect(types(mocks)).toEqual(['callpipe.call.alert', 'callpipe.call.completed']);
    const order = mocks.calls.map((c) => c.activity);
    const [alertAt, completedAt] = order.flatMap((a, i) => (a === 'emitCallEvent' ? [i] : []));
    expect(alertAt).toBeGreaterThan(order.indexOf('computeInsights'));
    expect(alertAt).toBeLessThan(order.indexOf('publishResult'));
    expect(completedAt).toBeGreaterThan(order.indexOf('writeCallTables'));
    const alert = mocks.callsOf('emitCallEvent')[0]!.input;
    expect(pick(alert, 'insightsKey')).toBe(pick(mocks.callsOf('computeInsights')[0]!.input, 'outputKey'));
    expect(pick(alert, 'callId')).toBe('events-done-call');
    // The run's identity and the workflow's time travel with it (the event id and `time` come from them).
    expect(pick(alert, 'runId')).toBeTruthy();
    expect(Date.parse(String(pick(alert, 'time')))).not.toBeNaN();
  });

  it('no alert to emit when nothing matched; failed after error.json', async () => {
    const mocks = mockActivities({
      probeSource: async () => {
        throw nonRetryable('MediaError', 'not a recording');
      },
    });
    const { result } = await runCall('events-failed', mocks);
    expect(result.status).toBe('failed');
    expect(types(mocks)).toEqual(['callpipe.call.failed']);
    const order = mocks.calls.map((c) => c.activity);
    expect(order.indexOf('emitCallEvent')).toBeGreaterThan(order.indexOf('writeError'));
    expect(pick(mocks.callsOf('emitCallEvent')[0]!.input, 'errorKey')).toBeTruthy();
  });

  it('a receiver that never answers delays no call: the call completes, its delivery still retrying', async () => {
    const id = `evt_${'q'.repeat(26)}`;
    const mocks = mockActivities({
      emitCallEvent: async (input) =>
        pick(input, 'type') === 'callpipe.call.completed'
          ? {
              event: {
                id,
                type: 'callpipe.call.completed',
                bucket: 'callpipe',
                key: `r/events/2026-11-21/${id}.ndjson`,
              },
              sinks: ['webhook:0'],
              policy: { initialSeconds: 1, maxSeconds: 1, forSeconds: 3600, requestTimeoutSeconds: 1 },
            }
          : undefined,
    });
    const { result } = await runCall('events-dead', mocks, {
      deliverEvent: async () => {
        throw ApplicationFailure.create({ type: 'EventDeliveryFailed', message: 'webhook:0: refused' });
      },
    });
    expect(result.status).toBe('done');
    const delivery = testEnv().client.workflow.getHandle(eventDeliveryWorkflowId(id));
    expect((await delivery.describe()).status.name).toBe('RUNNING');
    await delivery.terminate('test over');
  });
});
