/**
 * eventDelivery: one stored event to each of its sinks (schemas/events.ts), at least once, retried with
 * backoff until the delivery's time is up (docs/events.md).
 *
 * Why a workflow of its own per event, started by the call (or batch) with `ParentClosePolicy.ABANDON`:
 * the call's workflow only waits for the child to *start*, then completes, so a receiver that is down,
 * slow or hanging delays no call; each event's retries are independent (one dead receiver holds no other
 * event back, as a per-sink queue would); the workflow id is the event's (`event-<id>`), so emitting the
 * same event twice starts it once; and its state is visible where operators look already (the Web UI,
 * `callpipe events status`: running = still being delivered, failed = given up). A workflow per event
 * costs a start and an activity per sink: small beside the call's own.
 *
 * The backoff is Temporal's retry policy (from the emitting worker's configuration, carried in the
 * input); the attempt that would wait past the deadline gives up (`EventDeliveryGaveUp`), and the
 * give-up is recorded beside the events in S3 (the event itself is there already, nothing is lost).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  proxyActivities,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { EventActivities } from '../activities/events/event-activities.ts';
import type { EmittedEvent, SinkName } from '../schemas/events.ts';
import { reasonOf, workflowFailureOf } from './failure-reason.ts';
import { FAILURE } from '../schemas/retry-table.ts';
import { SEARCH_ATTRIBUTE_KEYS } from './search-attribute-keys.ts';
import { eventDeliveryRetry, RETRY_POLICIES } from './activity-policies.ts';

/** Redirects followed per request (activities/events/http-post.ts MAX_REDIRECTS), for the attempt's bound. */
const REQUESTS_PER_ATTEMPT = 4;

export interface EventDeliveryResult {
  eventId: string;
  delivered: SinkName[];
  failed: { sink: SinkName; reason: string }[];
}

export function eventDeliveryWorkflowId(eventId: string): string {
  return `event-${eventId}`;
}

export async function eventDelivery({ event, sinks, policy }: EmittedEvent): Promise<EventDeliveryResult> {
  const deliver = proxyActivities<EventActivities>({
    taskQueue: workflowInfo().taskQueue,
    startToCloseTimeout: `${policy.requestTimeoutSeconds * REQUESTS_PER_ATTEMPT + 30} seconds`,
    // A backstop only: the activity gives up itself at the deadline, with its reason.
    scheduleToCloseTimeout: `${policy.forSeconds + policy.maxSeconds + 3600} seconds`,
    retry: eventDeliveryRetry(policy),
  });
  const record = proxyActivities<EventActivities>({
    taskQueue: workflowInfo().taskQueue,
    startToCloseTimeout: '1 minute',
    retry: RETRY_POLICIES.recordDeliveryFailure,
  });
  const deadline = new Date(Date.now() + policy.forSeconds * 1000).toISOString();
  const result: EventDeliveryResult = { eventId: event.id, delivered: [], failed: [] };
  await Promise.all(
    sinks.map(async (sink) => {
      try {
        await deliver.deliverEvent.executeWithOptions({ summary: `${event.type} to ${sink}` }, [
          { event, sink, policy, deadline },
        ]);
        result.delivered.push(sink);
      } catch (err) {
        // Anything but an activity's failure is a bug of this code: failing the workflow task (retried
        // once fixed) keeps the event, where a recorded give-up would hide it.
        if (!(err instanceof ActivityFailure)) throw err;
        const { attempts, reason } = gaveUp(err);
        result.failed.push({ sink, reason });
        await record.recordDeliveryFailure({ event, sink, attempts, reason });
      }
    }),
  );
  upsertSearchAttributes([
    { key: SEARCH_ATTRIBUTE_KEYS.outcome, value: result.failed.length ? 'failed' : 'delivered' },
  ]);
  if (result.failed.length)
    throw workflowFailureOf(
      FAILURE.EventDeliveryGaveUp,
      `event ${event.id} (${event.type}) not delivered to ${result.failed.map((f) => f.sink).join(', ')}: ${result.failed[0]!.reason}`,
    );
  return result;
}

/** Attempts and reason of a delivery given up (the activity's details), or of the backstop's timeout. */
function gaveUp(err: ActivityFailure): { attempts: number; reason: string } {
  const cause = err.cause;
  if (cause instanceof ApplicationFailure && cause.type === FAILURE.EventDeliveryGaveUp) {
    const details = cause.details?.[0] as { attempts?: number; reason?: string } | undefined;
    return { attempts: details?.attempts ?? 1, reason: details?.reason ?? cause.message };
  }
  return { attempts: 1, reason: reasonOf(err) };
}
