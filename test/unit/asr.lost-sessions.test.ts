/**
 * Recognition liveness through the session budget, the parts outside the workflow: what a worker tells
 * the budget on each renew (workers/running-activities.ts), and how the lost worker's attempts are failed
 * by id, only the attempt it ran (activities/asr/liveness-activities.ts, with a fake Temporal client).
 */
import { describe, expect, it } from 'vitest';
import { ActivityNotFoundError, WorkflowNotFoundError } from '@temporalio/client';
import protos from '@temporalio/proto';
import { RunningActivities } from '../../workers/running-activities.ts';
import {
  createLivenessActivities,
  WORKER_LOST,
  type LivenessTemporal,
} from '../../activities/asr/liveness-activities.ts';
import type { RunningActivity } from '../../schemas/running-activity.ts';

const a: RunningActivity = ['call-a', 'run-a', '5', 1];
const b: RunningActivity = ['call-a', 'run-a', '6', 2];
const c: RunningActivity = ['call-c', 'run-c', '5', 1];

describe('RunningActivities', () => {
  it('tells what started and ended since the last renew, never an end of a start never told', () => {
    const running = new RunningActivities();
    let starts = 0;
    running.onStart = () => (starts += 1);
    running.start(a);
    running.start(b);
    expect(starts).toBe(2);
    expect(running.take()).toEqual({ started: [a, b], ended: [] });
    running.end(a);
    running.start(c);
    running.end(c);
    expect(running.take()).toEqual({ started: [], ended: [a] });
    expect(running.take()).toEqual({ started: [], ended: [] });
    expect(running.size).toBe(1);
  });

  it('tells again what a failed renew carried, as it stands now', () => {
    const running = new RunningActivities();
    running.start(a);
    running.start(b);
    const lost = running.take();
    // While the renew was under way: `b` ended (its end is told; its start need not be).
    running.end(b);
    running.restore(lost);
    expect(running.take()).toEqual({ started: [a], ended: [b] });
  });
});

const STARTED = protos.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
const SCHEDULED = protos.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED;

/** Temporal as the fake sees it: each execution's pending activities (absent: the execution is gone). */
function fakeTemporal(pending: Record<string, { activityId: string; attempt: number; state: number }[]>) {
  const failed: unknown[] = [];
  const temporal = {
    workflow: {
      getHandle: (workflowId: string, runId: string) => ({
        async describe() {
          const list = pending[`${workflowId}/${runId}`];
          if (!list) throw new WorkflowNotFoundError('gone', workflowId, runId);
          return { raw: { pendingActivities: list } };
        },
      }),
    },
    activity: {
      async fail(id: { workflowId: string; activityId: string }, err: Error & { type?: string }) {
        if (id.activityId === 'vanished') throw new ActivityNotFoundError('not found');
        failed.push({ ...id, type: err.type });
      },
    },
  } as unknown as LivenessTemporal;
  return { temporal, failed };
}

describe('failLostSessions', () => {
  it('fails by id only the attempts the lost worker ran that are still running', async () => {
    const { temporal, failed } = fakeTemporal({
      'call-a/run-a': [
        { activityId: '5', attempt: 1, state: STARTED },
        // Retried meanwhile (its heartbeat timeout came first): attempt 3 runs elsewhere.
        { activityId: '6', attempt: 3, state: STARTED },
        { activityId: 'vanished', attempt: 1, state: STARTED },
        { activityId: '8', attempt: 1, state: SCHEDULED },
      ],
    });
    const { failLostSessions } = createLivenessActivities({ temporal });
    const out = await failLostSessions({
      activities: [a, b, ['call-a', 'run-a', 'vanished', 1], ['call-a', 'run-a', '8', 1], c],
    });
    expect(failed).toEqual([{ workflowId: 'call-a', runId: 'run-a', activityId: '5', type: WORKER_LOST }]);
    expect(out).toEqual({ failed: 1, gone: 4 });
  });
});
