/**
 * The night report lists event deliveries given up beside the calls' failures (which event of which call,
 * to which sink, after how many attempts, why), and says nothing of deliveries when none failed.
 */
import { describe, expect, it } from 'vitest';
import { renderNightReport } from '../../activities/pages/night-report.ts';
import type { DeliveryFailure } from '../../schemas/events.ts';

const report = {
  rows: [{ callId: 'a', source: 's3://b/a.wav', status: 'done' as const, durationSeconds: 60, requests: 10 }],
  startedAt: '2026-03-01T00:00:00Z',
  finishedAt: '2026-03-01T00:30:00Z',
  batchId: 'night-1',
  source: 's3://b/',
  output: 's3://b/results/',
  status: 'done' as const,
  runs: 1,
  counters: {} as never,
  audioHours: 1 / 60,
};

const failure: DeliveryFailure = {
  eventId: 'evt_abcdefghijklmnopqrstuvwxyz',
  type: 'callpipe.call.alert',
  sink: 'webhook:0',
  callId: 'a',
  batchId: 'night-1',
  eventKey: 'results/events/2026-03-01/evt_abcdefghijklmnopqrstuvwxyz.ndjson',
  attempts: 31,
  reason: 'the receiver refused the connection (nothing listens there)',
  gaveUpAt: '2026-03-02T00:00:05Z',
};

describe('the night report and event deliveries', () => {
  const render = (deliveryFailures?: DeliveryFailure[]) =>
    renderNightReport(report as never, new Map(), {
      timeZone: 'Asia/Tokyo',
      pageHref: (id) => `../../${id}/call.html`,
      ...(deliveryFailures ? { deliveryFailures } : {}),
    });

  it('lists a delivery given up with its event, call, sink, attempts and reason', () => {
    const html = render([failure]);
    const section = html.slice(html.indexOf('id="event-delivery-failures"'), html.indexOf('<h2>Calls</h2>'));
    expect(section).toContain('Event deliveries given up (1)');
    for (const text of [
      failure.eventId,
      'callpipe.call.alert',
      '<td>a</td>',
      'webhook:0',
      '<td>31</td>',
      failure.reason,
    ])
      expect(section).toContain(text);
  });

  it('shows no delivery section when none was given up', () => {
    expect(render([])).not.toContain('event-delivery-failures');
    expect(render()).not.toContain('event-delivery-failures');
  });
});
