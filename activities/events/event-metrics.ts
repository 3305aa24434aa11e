/**
 * Metrics of call events, on callpipe's registry (activities/metrics.ts), served with the others by every
 * worker. Labels are bounded: the event types, the sinks' names (`webhook:<n>`, `slack`), the outcomes.
 */
import { Counter } from 'prom-client';
import { registry } from '../metrics.ts';
import type { SinkName } from '../../schemas/events.ts';

const emitted = new Counter({
  name: 'callpipe_events_emitted_total',
  help: 'Call and batch events written to the NDJSON sink in S3 (every event is), by type',
  labelNames: ['type'],
  registers: [registry],
});
const deliveries = new Counter({
  name: 'callpipe_event_deliveries_total',
  help: 'Attempts to deliver an event to a sink, by sink (webhook:<n>, slack) and outcome (delivered, failed-attempt: retried, gave-up: recorded as failed)',
  labelNames: ['sink', 'outcome'],
  registers: [registry],
});

export type DeliveryOutcome = 'delivered' | 'failed-attempt' | 'gave-up';

export const eventMetrics = {
  emitted(type: string): void {
    emitted.inc({ type });
  },
  delivery(sink: SinkName, outcome: DeliveryOutcome): void {
    deliveries.inc({ sink, outcome });
  },
};
