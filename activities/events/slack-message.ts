/**
 * The Slack-compatible message of an alert (an incoming webhook's JSON: `text`, with `blocks` for
 * clients that show them): what matched, how severe, how long the call was, the customer's sentiment, and
 * where its result is. Only what the event's data holds.
 */
import type { CallEventData } from '../../schemas/events.ts';

const ICON = { critical: ':rotating_light:', warning: ':warning:', info: ':information_source:' } as const;

function minutes(seconds: number | null): string {
  if (seconds === null) return 'length unknown';
  const m = Math.floor(seconds / 60);
  const s = Math.round(seconds % 60);
  return `${m} min ${s} s`;
}

export function slackAlertMessage(data: CallEventData): { text: string; blocks: unknown[] } {
  const top = data.alerts[0];
  const severity = top?.severity ?? 'info';
  const alerts = data.alerts.map((a) => `${a.category} (${a.severity})`).join(', ');
  const customer = data.sentiment?.bySpeaker.customer?.label ?? data.sentiment?.overall.label ?? null;
  const lines = [
    `${ICON[severity]} *callpipe alert*: ${alerts || 'alert'}`,
    `call \`${data.callId}\`${data.batchId ? ` of batch \`${data.batchId}\`` : ''} · ${minutes(data.durationSeconds)}` +
      (customer ? ` · customer sentiment ${customer}` : ''),
    ...(data.scorecard
      ? [`scorecard ${data.scorecard.name}: ${data.scorecard.score} / ${data.scorecard.max}`]
      : []),
    ...(data.pageKey ? [`call page: s3://${data.bucket}/${data.pageKey}`] : []),
  ];
  return {
    text: lines.join('\n'),
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: lines.join('\n') } }],
  };
}
