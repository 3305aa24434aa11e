/**
 * Fails by id the recognition activities of an asr worker the session budget lost (workflows/session-budget.ts),
 * so Temporal retries them elsewhere at once instead of after their heartbeat timeout. Runs on the
 * workflows queue, with the workers' Temporal client.
 *
 * Only the very attempt the worker said it runs is failed: a failure by id names no attempt, so each one
 * is first checked against the workflow's pending activities. One that finished, or was retried meanwhile
 * (its heartbeat timeout came first), is left alone.
 */
import { ActivityNotFoundError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { failureOf } from '../failure.ts';
import { FAILURE } from '../../schemas/retry-table.ts';
import protos from '@temporalio/proto';
import type { RunningActivity } from '../../schemas/running-activity.ts';

/** The failure type a lost worker's attempt is failed with (retryable: its session resumes elsewhere). */
export const WORKER_LOST = 'WorkerLost';

export interface FailLostSessionsInput {
  activities: RunningActivity[];
}

export interface FailLostSessionsOutput {
  /** Attempts failed now, and attempts that had ended or moved on already. */
  failed: number;
  gone: number;
}

/** What this needs of Temporal's client (a fake in unit tests). */
export type LivenessTemporal = Pick<Client, 'workflow' | 'activity'>;

const STARTED = protos.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;

/** The attempt each started activity of an execution is at; empty when the execution is gone. */
async function startedAttempts(temporal: LivenessTemporal, workflowId: string, runId: string) {
  try {
    const { raw } = await temporal.workflow.getHandle(workflowId, runId).describe();
    return new Map(
      (raw.pendingActivities ?? [])
        .filter((a) => a.state === STARTED && a.activityId)
        .map((a) => [a.activityId!, a.attempt ?? 1]),
    );
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return new Map<string, number>();
    throw err;
  }
}

export function createLivenessActivities({ temporal }: { temporal?: LivenessTemporal }) {
  async function failLostSessions({ activities }: FailLostSessionsInput): Promise<FailLostSessionsOutput> {
    if (!temporal) throw new Error('failLostSessions runs on a worker with a Temporal client');
    const byExecution = new Map<string, RunningActivity[]>();
    for (const a of activities) {
      const key = JSON.stringify([a[0], a[1]]);
      byExecution.set(key, [...(byExecution.get(key) ?? []), a]);
    }
    let failed = 0;
    let gone = 0;
    for (const list of byExecution.values()) {
      const [workflowId, runId] = list[0]!;
      const attempts = await startedAttempts(temporal, workflowId, runId);
      for (const [, , activityId, attempt] of list) {
        if (attempts.get(activityId) !== attempt) {
          gone += 1;
          continue;
        }
        try {
          await temporal.activity.fail(
            { workflowId, runId, activityId },
            failureOf(
              FAILURE.WorkerLost,
              'the worker running this attempt stopped renewing with the session budget',
            ),
          );
          failed += 1;
        } catch (err) {
          if (!(err instanceof ActivityNotFoundError)) throw err;
          gone += 1;
        }
      }
    }
    return { failed, gone };
  }
  return { failLostSessions };
}

export type LivenessActivities = ReturnType<typeof createLivenessActivities>;
