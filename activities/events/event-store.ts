/**
 * The NDJSON sink in S3, and the claim check of every delivery: each event is one object
 * `<output prefix>events/<yyyy-mm-dd>/<call id>/<event id>.ndjson` for a call's event and
 * `<output prefix>events/<yyyy-mm-dd>/<event id>.ndjson` for a batch's (one line, its structured
 * CloudEvent), written before any other sink is tried, so nothing a receiver misses is lost. Keys hold the
 * day, the (pseudonymous) call id and the event's id (letters only), never a customer's data. The call id
 * folder is what lets `forget`, retention and `export` find a call's events (activities/lifecycle/call-objects.ts);
 * a day's events are still one prefix listing, and the objects concatenate into one NDJSON file
 * (`aws s3 cp --recursive` then `cat`).
 *
 * Deliveries given up are recorded beside them, in the same shape:
 * `<output prefix>events/failed/<yyyy-mm-dd>/[<call id>/]<event id>.<sink>.json`
 * (schemas/events.ts deliveryFailureSchema), for `callpipe events status` and the night report.
 */
import { normalizePrefix } from '../../schemas/call-keys.ts';
import { deliveryFailureSchema, type DeliveryFailure, type SinkName } from '../../schemas/events.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import { listObjectsUnder, onBucket, type ObjectStore } from '../storage/object-store.ts';

const EVENTS_FOLDER = 'events/';
const FAILED_FOLDER = 'failed/';
const DAY = /^\d{4}-\d{2}-\d{2}$/;

function day(time: string): string {
  const d = time.slice(0, 10);
  if (!DAY.test(d)) throw new RangeError(`not an ISO time: ${time}`);
  return d;
}

export function eventsPrefix(output: OutputLocation): string {
  return `${normalizePrefix(output.prefix)}${EVENTS_FOLDER}`;
}

/** A call's event (with `callId`) goes in the call's folder of the day; a batch's in the day's folder. */
export function eventKey(output: OutputLocation, time: string, id: string, callId?: string): string {
  return `${eventsPrefix(output)}${day(time)}/${callId ? `${callId}/` : ''}${id}.ndjson`;
}

export function failuresPrefix(output: OutputLocation): string {
  return `${eventsPrefix(output)}${FAILED_FOLDER}`;
}

/** The events folder of a stored event's key, and the call folder it is in (`<call id>/`, or none). */
function placeOfKey(key: string): { prefix: string; callFolder: string } {
  const m = /^(.*events\/)\d{4}-\d{2}-\d{2}\/((?:[A-Za-z0-9._-]+\/)?)[a-z_]+\.ndjson$/.exec(key);
  if (!m) throw new RangeError(`not an event's key: ${key}`);
  return { prefix: m[1]!, callFolder: m[2]! };
}

export function failureKey(eventKeyOf: string, gaveUpAt: string, id: string, sink: SinkName): string {
  const { prefix, callFolder } = placeOfKey(eventKeyOf);
  return `${prefix}${FAILED_FOLDER}${day(gaveUpAt)}/${callFolder}${id}.${sink.replace(':', '-')}.json`;
}

export function eventStore(store: ObjectStore) {
  const on = (bucket: string) => onBucket(store, bucket);
  return {
    /** Writes the event's line (the same line again on a retry: the id and time come from history). */
    async write(bucket: string, key: string, line: string): Promise<void> {
      await on(bucket).put(key, `${line}\n`, { contentType: 'application/x-ndjson; charset=utf-8' });
    },
    async read(bucket: string, key: string): Promise<string> {
      return (await on(bucket).getText(key)).trim();
    },
    async recordFailure(bucket: string, failure: DeliveryFailure): Promise<string> {
      const key = failureKey(failure.eventKey, failure.gaveUpAt, failure.eventId, failure.sink as SinkName);
      await on(bucket).put(key, `${JSON.stringify(failure, null, 2)}\n`, {
        contentType: 'application/json; charset=utf-8',
      });
      return key;
    },
    /** Failures recorded on the given days (yyyy-mm-dd), oldest day first. */
    async failures(output: OutputLocation, days: string[]): Promise<DeliveryFailure[]> {
      const out = on(output.bucket);
      const found: DeliveryFailure[] = [];
      for (const d of days) {
        const objects = await listObjectsUnder(out, `${failuresPrefix(output)}${d}/`);
        for (const o of objects.filter((x) => x.key.endsWith('.json'))) {
          const parsed = deliveryFailureSchema.safeParse(JSON.parse(await out.getText(o.key)));
          if (parsed.success) found.push(parsed.data);
        }
      }
      return found;
    },
  };
}

/** The days from `from` to `to` (ISO times), as yyyy-mm-dd, at most `max` of them (the latest). */
export function daysBetween(from: string, to: string, max = 7): string[] {
  const days: string[] = [];
  const end = Date.parse(`${day(to)}T00:00:00Z`);
  for (let t = Date.parse(`${day(from)}T00:00:00Z`); t <= end; t += 86_400_000)
    days.push(new Date(t).toISOString().slice(0, 10));
  return days.slice(-max);
}
