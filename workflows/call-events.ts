/**
 * Emitting call and batch events from workflow code (docs/events.md): an activity writes the event to the
 * NDJSON sink in S3 and says which sinks want it; when any does, an `eventDelivery` workflow is started for
 * it with `ParentClosePolicy.ABANDON` and not waited for (workflows/event-delivery.ts says why). An event
 * that cannot be written is logged and the call goes on: events report calls, they never fail them.
 */
import {
  CancellationScope,
  isCancellation,
  log,
  ParentClosePolicy,
  proxyActivities,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type {
  EmitBatchEventInput,
  EmitCallEventInput,
  EventActivities,
} from '../activities/events/event-activities.ts';
import type { EmittedEvent } from '../schemas/events.ts';
import { eventDelivery, eventDeliveryWorkflowId } from './event-delivery.ts';
import { reasonOf } from './failure-reason.ts';
import { SEARCH_ATTRIBUTE_KEYS } from './search-attribute-keys.ts';
import { RETRY_POLICIES } from './activity-policies.ts';

function emitters(taskQueue: string) {
  return proxyActivities<EventActivities>({
    taskQueue,
    startToCloseTimeout: '2 minutes',
    retry: RETRY_POLICIES.emitEvent,
  });
}

/** The run's identity and time, as the event's id and `time` take them. */
function emitRun() {
  const { workflowId, runId } = workflowInfo();
  return { workflowId, runId, time: new Date().toISOString() };
}

type CallEventOf<T> = T extends unknown ? Omit<T, 'workflowId' | 'runId' | 'time'> : never;
/** A call event's own fields: what the call adds (its id, batch and output) left out. */
export type CallEventFields = EmitCallEventInput extends infer T
  ? T extends unknown
    ? Omit<T, 'workflowId' | 'runId' | 'time' | 'callId' | 'batchId' | 'output'>
    : never
  : never;

/** A call's event (completed, failed, or an alert), emitted on `taskQueue`'s workers (the media queue). */
export async function emitCallEvent(
  taskQueue: string,
  input: CallEventOf<EmitCallEventInput>,
): Promise<void> {
  await deliverLater(input.type, () =>
    emitters(taskQueue).emitCallEvent.executeWithOptions({ summary: `emit ${input.type}` }, [
      { ...input, ...emitRun() } as EmitCallEventInput,
    ]),
  );
}

/** A batch's end. */
export async function emitBatchEvent(
  taskQueue: string,
  input: Omit<EmitBatchEventInput, 'workflowId' | 'runId' | 'time'>,
): Promise<void> {
  await deliverLater('callpipe.batch.completed', () =>
    emitters(taskQueue).emitBatchEvent.executeWithOptions({ summary: 'emit callpipe.batch.completed' }, [
      { ...input, ...emitRun() },
    ]),
  );
}

async function deliverLater(type: string, emit: () => Promise<EmittedEvent | undefined>): Promise<void> {
  try {
    // Not cancellable: a call that failed while being cancelled still reports it.
    await CancellationScope.nonCancellable(async () => {
      const emitted = await emit();
      if (!emitted?.sinks.length) return;
      await startDelivery(emitted);
    });
  } catch (err) {
    if (isCancellation(err)) throw err;
    log.warn('call event not emitted', { type, reason: reasonOf(err) });
  }
}

async function startDelivery(emitted: EmittedEvent): Promise<void> {
  const { event } = emitted;
  try {
    await startChild(eventDelivery, {
      workflowId: eventDeliveryWorkflowId(event.id),
      args: [emitted],
      taskQueue: workflowInfo().taskQueue,
      // The delivery outlives the call: a dead receiver delays no call.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      typedSearchAttributes: [
        ...(event.callId ? [{ key: SEARCH_ATTRIBUTE_KEYS.callId, value: event.callId }] : []),
        ...(event.batchId ? [{ key: SEARCH_ATTRIBUTE_KEYS.batchId, value: event.batchId }] : []),
        { key: SEARCH_ATTRIBUTE_KEYS.stage, value: 'delivering' },
      ],
      staticSummary: `${event.type} ${event.id}`,
    });
  } catch (err) {
    // Already being delivered: the same event emitted again.
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
