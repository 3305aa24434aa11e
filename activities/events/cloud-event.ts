/**
 * CloudEvents 1.0 in JSON structured mode, through the `cloudevents` SDK (the one module that knows it):
 * the event, its attributes and its data, as one JSON document that every sink sends as it is.
 */
import { CloudEvent } from 'cloudevents';
import { EVENT_DATA_VERSION, type EventType } from '../../schemas/events.ts';

/** The media type of a structured-mode CloudEvent in JSON (CloudEvents' JSON format, section 3). */
export const CLOUDEVENTS_JSON = 'application/cloudevents+json; charset=utf-8';

export interface CallpipeEvent {
  id: string;
  type: EventType;
  /** Where the event comes from: the output location (`s3://bucket/prefix/`). */
  source: string;
  /** The call's or the batch's id. */
  subject: string;
  /** When it happened (the workflow's time, so a retried emission says the same). */
  time: string;
  data: Record<string, unknown>;
}

/** The event as one line of JSON (structured mode), validated by the SDK. */
export function structuredJson(event: CallpipeEvent): string {
  const ce = new CloudEvent(
    {
      specversion: '1.0',
      id: event.id,
      type: event.type,
      source: event.source,
      subject: event.subject,
      time: event.time,
      datacontenttype: 'application/json',
      dataschema: `https://callpipe.dev/schemas/events.v${EVENT_DATA_VERSION}.json`,
      data: event.data,
    },
    true,
  );
  return JSON.stringify(ce.toJSON());
}

/** A stored line back as an event (the SDK validates it again). */
export function parseStructured(line: string): CallpipeEvent {
  const ce = new CloudEvent(JSON.parse(line) as Record<string, unknown>, true);
  return {
    id: ce.id,
    type: ce.type as EventType,
    source: ce.source,
    subject: ce.subject ?? '',
    time: ce.time ?? '',
    data: (ce.data ?? {}) as Record<string, unknown>,
  };
}
