/**
 * The activities of call events (docs/events.md):
 * - `emitCallEvent` / `emitBatchEvent` build an event from what the call's or batch's outputs hold, write
 *   it to the NDJSON sink in S3 (the durable record, and the claim check of every delivery), and return
 *   where it goes next (the configured sinks, named, never their URLs) and the retry policy;
 * - `deliverEvent` sends one stored event to one sink, once per attempt: a webhook signed the Standard
 *   Webhooks way, or Slack's message of an alert; the workflow's retry policy is the backoff, and the
 *   attempt that would wait past the delivery's deadline gives up instead (`EventDeliveryGaveUp`);
 * - `recordDeliveryFailure` writes a given-up delivery beside the events, for `callpipe events status` and
 *   the night report.
 */
import { Context } from '@temporalio/activity';
import { failureOf } from '../failure.ts';
import { backoffMs, FAILURE } from '../../schemas/retry-table.ts';
import { callOutputKeys, locationUrl } from '../../schemas/call-keys.ts';
import {
  batchEventDataSchema,
  callEventDataSchema,
  deliveryBackoff,
  deliveryPolicyOf,
  EVENT_TYPES,
  sinksFor,
  type CallEventData,
  type DeliveryPolicy,
  type EmittedEvent,
  type EventsConfig,
  type EventType,
  type SinkName,
  type StoredEvent,
} from '../../schemas/events.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import type { ErrorDocument, ResultDocument } from '../../schemas/result.ts';
import { sentimentOutputSchema } from '../../schemas/result.ts';
import { callInsightsDocumentSchema } from '../../schemas/insights.ts';
import { onBucket, type ObjectStore } from '../storage/object-store.ts';
import { readStaged } from '../storage/staged-outputs.ts';
import { storedRules } from '../insights/rule-file.ts';
import { eventMetrics } from './event-metrics.ts';
import { CLOUDEVENTS_JSON, parseStructured, structuredJson } from './cloud-event.ts';
import { alertCallData, completedCallData, failedCallData } from './event-data.ts';
import { eventId } from './event-id.ts';
import { eventKey, eventStore } from './event-store.ts';
import { DeliveryAttemptError, postEvent } from './http-post.ts';
import { signedHeaders } from './webhook-signature.ts';
import { slackAlertMessage } from './slack-message.ts';

const USER_AGENT = 'callpipe-events/1';

/** Which run emits: the event id and the event's data name it. */
export interface EmitRun {
  workflowId: string;
  runId: string;
  /** The workflow's time when it emitted (the event's `time`; the same on a retry). */
  time: string;
}

export type EmitCallEventInput = EmitRun & {
  callId: string;
  batchId?: string | undefined;
  output: OutputLocation;
} & (
    | { type: typeof EVENT_TYPES.callCompleted; rulesKey?: string | null | undefined }
    | {
        type: typeof EVENT_TYPES.callAlert;
        insightsKey: string;
        sentimentKey?: string | undefined;
        durationSeconds: number;
        rulesKey?: string | null | undefined;
      }
    | { type: typeof EVENT_TYPES.callFailed; errorKey: string; durationSeconds?: number | undefined }
  );

export interface EmitBatchEventInput extends EmitRun {
  batchId: string;
  output: OutputLocation;
  status: 'done' | 'cancelled';
  reportJsonKey: string;
  reportCsvKey: string;
  reportHtmlKey?: string | undefined;
  counters: Record<string, number>;
  startedAt: string;
}

export interface DeliverEventInput {
  event: StoredEvent;
  sink: SinkName;
  policy: DeliveryPolicy;
  /** Give up once the next attempt would start after this (ISO time, from the delivery's start). */
  deadline: string;
}

export interface RecordDeliveryFailureInput {
  event: StoredEvent;
  sink: SinkName;
  attempts: number;
  reason: string;
}

export interface EventActivityDeps {
  store: ObjectStore;
  config: EventsConfig;
  fetch?: typeof fetch;
  now?: () => Date;
}

/** A call's event data, from the document its type reads: result.json, the staged insights or error.json. */
async function callEventData(
  store: ObjectStore,
  rulesOf: ReturnType<typeof storedRules>,
  input: EmitCallEventInput,
): Promise<CallEventData> {
  const keys = callOutputKeys(input.output, input.callId);
  const out = onBucket(store, keys.bucket);
  const run = { workflowId: input.workflowId, runId: input.runId, batchId: input.batchId };
  if (input.type === EVENT_TYPES.callCompleted) {
    const doc = JSON.parse(await out.getText(keys.result)) as ResultDocument;
    const { rules } = await rulesOf(input.rulesKey ?? undefined);
    const where = { bucket: keys.bucket, resultKey: keys.result, pageKey: keys.page };
    return completedCallData(doc, where, rules, run);
  }
  if (input.type === EVENT_TYPES.callAlert) {
    const [insights, sentiment, { rules }] = await Promise.all([
      store.getText(input.insightsKey).then((t) => callInsightsDocumentSchema.parse(JSON.parse(t))),
      readStaged(store, input.sentimentKey, (v) => sentimentOutputSchema.parse(v)),
      rulesOf(input.rulesKey ?? undefined),
    ]);
    const where = { bucket: keys.bucket, resultKey: keys.result, pageKey: keys.page };
    return alertCallData(insights, sentiment ?? null, input.durationSeconds, where, rules, run);
  }
  const doc = JSON.parse(await out.getText(input.errorKey)) as ErrorDocument;
  return failedCallData(doc, { bucket: keys.bucket, errorKey: input.errorKey }, input.durationSeconds, run);
}

/**
 * A failed attempt's failure: retried after the delivery's backoff (or the receiver's Retry-After), or
 * given up when that wait would pass the delivery's deadline.
 */
function failedAttempt(err: unknown, input: DeliverEventInput, attempt: number, now: Date) {
  const reason = err instanceof Error ? err.message : String(err);
  const wait = err instanceof DeliveryAttemptError ? err.retryAfterMs : undefined;
  // The wait Temporal's policy takes after this attempt (the same backoff: schemas/events.ts).
  const nextMs = Math.max(wait ?? 0, backoffMs(deliveryBackoff(input.policy), attempt, Math.random));
  if (now.getTime() + nextMs > Date.parse(input.deadline)) {
    eventMetrics.delivery(input.sink, 'gave-up');
    return failureOf(
      FAILURE.EventDeliveryGaveUp,
      `${input.sink}: given up after ${attempt} attempt(s): ${reason}`,
      {
        details: [{ attempts: attempt, reason }],
      },
    );
  }
  eventMetrics.delivery(input.sink, 'failed-attempt');
  return failureOf(FAILURE.EventDeliveryFailed, `${input.sink}: ${reason}`, {
    nextRetryDelay: wait !== undefined ? Math.min(wait, input.policy.maxSeconds * 1000) : undefined,
  });
}

/** The call's and batch's ids of an event, those it has. */
function definedIds(ids: { callId?: string; batchId?: string | undefined }) {
  return { ...(ids.callId ? { callId: ids.callId } : {}), ...(ids.batchId ? { batchId: ids.batchId } : {}) };
}

export function createEventActivities({
  store,
  config,
  fetch: fetchImpl,
  now = () => new Date(),
}: EventActivityDeps) {
  const events = eventStore(store);
  const rulesOf = storedRules(store);

  async function emit(
    type: EventType,
    subject: string,
    output: OutputLocation,
    run: EmitRun,
    data: Record<string, unknown>,
    ids: { callId?: string; batchId?: string | undefined },
  ): Promise<EmittedEvent> {
    const id = eventId({ type, subject, workflowId: run.workflowId, runId: run.runId });
    const key = eventKey(output, run.time, id, ids.callId);
    const line = structuredJson({ id, type, source: locationUrl(output), subject, time: run.time, data });
    await events.write(output.bucket, key, line);
    eventMetrics.emitted(type);
    const event: StoredEvent = { id, type, bucket: output.bucket, key, ...definedIds(ids) };
    return { event, sinks: sinksFor(config, type), policy: deliveryPolicyOf(config) };
  }

  return {
    /**
     * A call's event: completed (from result.json), failed (from error.json) or alert (from the staged
     * insights, as soon as they exist). An alert for a call that matched no alert category is not
     * emitted (undefined).
     */
    async emitCallEvent(input: EmitCallEventInput): Promise<EmittedEvent | undefined> {
      const data = await callEventData(store, rulesOf, input);
      if (input.type === EVENT_TYPES.callAlert && !data.alerts.length) return undefined;
      return emit(input.type, input.callId, input.output, input, callEventDataSchema.parse(data), {
        callId: input.callId,
        batchId: input.batchId,
      });
    },

    /** A batch's end, with its report's keys and counters. */
    async emitBatchEvent(input: EmitBatchEventInput): Promise<EmittedEvent> {
      const data = batchEventDataSchema.parse({
        batchId: input.batchId,
        status: input.status,
        bucket: input.output.bucket,
        reportJsonKey: input.reportJsonKey,
        reportCsvKey: input.reportCsvKey,
        ...(input.reportHtmlKey ? { reportHtmlKey: input.reportHtmlKey } : {}),
        counters: input.counters,
        startedAt: input.startedAt,
        workflowId: input.workflowId,
        runId: input.runId,
      });
      return emit(EVENT_TYPES.batchCompleted, input.batchId, input.output, input, data, {
        batchId: input.batchId,
      });
    },

    /** One attempt of one event to one sink. */
    async deliverEvent(input: DeliverEventInput): Promise<{ status: number }> {
      const attempt = Context.current().info.attempt;
      const line = await events.read(input.event.bucket, input.event.key);
      try {
        const request = requestFor(config, input.sink, input.event.id, line, now());
        const out = await postEvent({
          ...request,
          timeoutMs: input.policy.requestTimeoutSeconds * 1000,
          ...(fetchImpl ? { fetch: fetchImpl } : {}),
        });
        eventMetrics.delivery(input.sink, 'delivered');
        return { status: out.status };
      } catch (err) {
        throw failedAttempt(err, input, attempt, now());
      }
    },

    async recordDeliveryFailure(input: RecordDeliveryFailureInput): Promise<{ key: string }> {
      const key = await events.recordFailure(input.event.bucket, {
        eventId: input.event.id,
        type: input.event.type,
        sink: input.sink,
        ...(input.event.callId ? { callId: input.event.callId } : {}),
        ...(input.event.batchId ? { batchId: input.event.batchId } : {}),
        eventKey: input.event.key,
        attempts: input.attempts,
        reason: input.reason,
        gaveUpAt: now().toISOString(),
      });
      return { key };
    },
  };
}

/** The request of one sink: the signed CloudEvent for a webhook, the alert's message for Slack. */
function requestFor(
  config: EventsConfig,
  sink: SinkName,
  id: string,
  line: string,
  at: Date,
): { url: string; body: string; headers: Record<string, string> } {
  if (sink === 'slack') {
    if (!config.slackUrl) throw new DeliveryAttemptError('no Slack URL in this worker’s configuration');
    const data = callEventDataSchema.parse(parseStructured(line).data);
    return {
      url: config.slackUrl,
      body: JSON.stringify(slackAlertMessage(data)),
      headers: { 'content-type': 'application/json; charset=utf-8', 'user-agent': USER_AGENT },
    };
  }
  const index = Number(sink.slice('webhook:'.length));
  const url = config.webhookUrls[index];
  if (!url || !config.webhookSecret)
    throw new DeliveryAttemptError(`no webhook ${index + 1} in this worker’s configuration`);
  return {
    url,
    body: line,
    headers: {
      'content-type': CLOUDEVENTS_JSON,
      'user-agent': USER_AGENT,
      ...signedHeaders(config.webhookSecret, id, line, at),
    },
  };
}

export type EventActivities = ReturnType<typeof createEventActivities>;
