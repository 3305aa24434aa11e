/**
 * A stored alert event of `call-a` (95 s, done, in bucket `out`), as the event activities read it from
 * S3 before delivering it: its id, its key and its line.
 */
import { structuredJson } from '../../activities/events/cloud-event.ts';
import { eventId } from '../../activities/events/event-id.ts';
import { eventKey } from '../../activities/events/event-store.ts';

export function storedAlert(
  categories: string[],
  alerts: { category: string; severity: 'warning' | 'critical' }[],
): { id: string; key: string; line: string } {
  const time = '2026-11-26T07:00:00.000Z';
  const id = eventId({ type: 'callpipe.call.alert', subject: 'call-a', workflowId: 'wf', runId: 'run' });
  const key = eventKey({ bucket: 'out', prefix: '' }, time, id);
  const line = structuredJson({
    id,
    type: 'callpipe.call.alert',
    source: 's3://out/',
    subject: 'call-a',
    time,
    data: {
      callId: 'call-a',
      outcome: 'done',
      bucket: 'out',
      pageKey: 'call-a/call.html',
      durationSeconds: 95,
      categories,
      alerts,
      scorecard: null,
      sentiment: null,
      workflowId: 'wf',
      runId: 'run',
    },
  });
  return { id, key, line };
}
