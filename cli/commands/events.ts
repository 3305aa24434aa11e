/**
 * `callpipe events status`: where call events stand (docs/events.md). Every event is in S3 already (the
 * NDJSON sink); what this shows is its deliveries to the configured sinks, from Temporal's visibility of
 * the `eventDelivery` workflows (one per event): delivered, still being retried (the receiver down, slow
 * or refusing), and given up after the delivery window, with the reason.
 */
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { CliError, parseCommandArgs } from '../command.ts';
import { connectPipeline, type PipelineClient } from '../stack-client.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../workflows/search-attribute-keys.ts';
import { eventDelivery } from '../../workflows/event-delivery.ts';
import { textTable } from '../text-table.ts';
import { closeReason } from './status.ts';

export const summary = 'shows the delivery of call events to webhooks and Slack (status)';
export const help = `Usage: callpipe events status [--batch ID] [--limit N] [--json]

Every call and batch event is written to S3 (<output>/events/<day>/<call id>/<event id>.ndjson; a batch's
without the call id) before it is sent anywhere. This shows its deliveries to the sinks of CALLPIPE_EVENTS_WEBHOOK_URL and
CALLPIPE_EVENTS_SLACK_URL: how many were delivered, the ones still being retried (the receiver is
down, slow or refusing; retried with backoff for CALLPIPE_EVENTS_DELIVER_FOR_SECONDS, 24 h by default),
and the ones given up, with the reason (recorded under <output>/events/failed/ too).

  --batch ID   only the events of this batch's calls
  --limit N    rows of pending and failed deliveries to list (default 20)
  --json       one JSON document`;

const TYPE = eventDelivery.name;

export interface DeliveryRow {
  workflowId: string;
  eventId: string;
  callId?: string;
  batchId?: string;
  status: string;
  startTime: string;
  closeTime?: string;
  reason?: string;
}

export interface EventsStatus {
  delivered: number;
  pending: number;
  failed: number;
  pendingRows: DeliveryRow[];
  failedRows: DeliveryRow[];
}

type Execution = Omit<WorkflowExecutionInfo, 'raw'>;

function rowOf(w: Execution): DeliveryRow {
  const sa = w.typedSearchAttributes;
  const callId = sa.get(SEARCH_ATTRIBUTE_KEYS.callId);
  const batchId = sa.get(SEARCH_ATTRIBUTE_KEYS.batchId);
  return {
    workflowId: w.workflowId,
    eventId: w.workflowId.replace(/^event-/, ''),
    ...(callId ? { callId } : {}),
    ...(batchId ? { batchId } : {}),
    status: w.status.name,
    startTime: w.startTime.toISOString(),
    ...(w.closeTime ? { closeTime: w.closeTime.toISOString() } : {}),
  };
}

async function rows(pc: PipelineClient, query: string, limit: number): Promise<Execution[]> {
  const out: Execution[] = [];
  for await (const w of pc.client.workflow.list({ query, pageSize: Math.min(limit, 1000) })) {
    out.push(w);
    if (out.length >= limit) break;
  }
  return out;
}

export async function eventsStatus(
  pc: PipelineClient,
  options: { batchId?: string; limit: number },
): Promise<EventsStatus> {
  const scope = `WorkflowType = '${TYPE}'${
    options.batchId ? ` AND CallpipeBatchId = "${options.batchId.replaceAll('"', '')}"` : ''
  }`;
  const count = async (status: string) =>
    (await pc.client.workflow.count(`${scope} AND ExecutionStatus = '${status}'`)).count;
  const [delivered, pending, failed] = await Promise.all([
    count('Completed'),
    count('Running'),
    count('Failed'),
  ]);
  const pendingRows = (await rows(pc, `${scope} AND ExecutionStatus = 'Running'`, options.limit)).map(rowOf);
  const failedRows = await Promise.all(
    (await rows(pc, `${scope} AND ExecutionStatus = 'Failed'`, options.limit)).map(async (w) => {
      const reason = await closeReason(pc, w).catch(() => undefined);
      return { ...rowOf(w), ...(reason ? { reason } : {}) };
    }),
  );
  return { delivered, pending, failed, pendingRows, failedRows };
}

function table(title: string, list: DeliveryRow[], withReason: boolean): string {
  if (!list.length) return `${title}: none`;
  return `${title}:\n${textTable([
    ['event', 'call', 'batch', 'since', ...(withReason ? ['reason'] : [])],
    ...list.map((r) => [
      r.eventId,
      r.callId ?? '',
      r.batchId ?? '',
      r.startTime,
      ...(withReason ? [r.reason ?? ''] : []),
    ]),
  ])}`;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('events', argv, {
    batch: { type: 'string' },
    limit: { type: 'string', default: '20' },
    json: { type: 'boolean', default: false },
  });
  if (positionals[0] !== 'status' || positionals.length > 1)
    throw new CliError('events: the subcommand is `status` (callpipe events status [--batch ID] [--json])');
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new CliError('events status: --limit must be a positive integer');
  const pc = await connectPipeline();
  try {
    const status = await eventsStatus(pc, { ...(values.batch ? { batchId: values.batch } : {}), limit });
    if (values.json) {
      console.log(JSON.stringify(status));
      return 0;
    }
    console.log(
      `event deliveries: ${status.delivered} delivered · ${status.pending} being retried · ${status.failed} given up`,
    );
    console.log(table('being retried', status.pendingRows, false));
    console.log(table('given up', status.failedRows, true));
    return 0;
  } finally {
    await pc.close();
  }
}
