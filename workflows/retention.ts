/**
 * retention: what the nightly retention Schedule starts (`callpipe schedule retention`). It asks which
 * calls are older than the configured days per kind (activities/lifecycle/retention.ts) and erases them
 * through forget, one child per request: whole calls for `results` (table rows included), one kind of
 * object for the others. A request's id is derived from its calls, so a night run twice erases once.
 */
import { ParentClosePolicy, executeChild, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import type { LifecycleActivities } from '../activities/lifecycle/lifecycle-activities.ts';
import type { CallObjectKind, ForgetInput, RetentionDays, RetentionKind } from '../schemas/lifecycle.ts';
import { forget } from './forget.ts';
import { RETRY_POLICIES } from './activity-policies.ts';

/** The objects a kind's retention erases (the workflow bundle keeps zod out: no schema import here). */
const OBJECT_KIND: Record<Exclude<RetentionKind, 'results'>, CallObjectKind> = {
  unredacted: 'unredacted',
  'redacted-audio': 'redacted-audio',
  staging: 'staging',
  recordings: 'recording',
};

export interface RetentionWorkflowInput {
  places: ForgetInput['places'];
  days: RetentionDays;
  /** ISO time ages are counted from; default the workflow's start (tests give another "now"). */
  now?: string;
}

export interface RetentionResult {
  now: string;
  requests: { requestId: string; kind: string; calls: number; outcome: 'erased' | 'done before' }[];
}

export async function retention(input: RetentionWorkflowInput): Promise<RetentionResult> {
  const info = workflowInfo();
  const a = proxyActivities<LifecycleActivities>({
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '2 minutes',
    retry: RETRY_POLICIES.lifecycle,
  });
  const now = input.now ?? new Date(info.startTime).toISOString();
  const requests = await a.retentionRequests({ places: input.places, days: input.days, now });
  const result: RetentionResult = { now, requests: [] };
  for (const r of requests) {
    const args: ForgetInput = {
      requestId: r.requestId,
      callIds: r.callIds,
      places: input.places,
      recordings: r.kind === 'recordings',
      ...(r.kind === 'results' ? {} : { onlyKinds: [OBJECT_KIND[r.kind]] }),
      reason: 'retention',
    };
    try {
      await executeChild(forget, {
        workflowId: r.requestId,
        taskQueue: info.taskQueue,
        args: [args],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // A finished erasure stands; a failed one may run again.
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      });
      result.requests.push({
        requestId: r.requestId,
        kind: r.kind,
        calls: r.callIds.length,
        outcome: 'erased',
      });
    } catch (err) {
      // The same request ran before (a second run of the night): its erasure stands.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      result.requests.push({
        requestId: r.requestId,
        kind: r.kind,
        calls: r.callIds.length,
        outcome: 'done before',
      });
    }
  }
  return result;
}
