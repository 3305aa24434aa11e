/**
 * The night report's cost section: what the batch used per audio hour (Temporal actions by kind,
 * history events per call, service requests by endpoint, audio streamed) and, with the deployment's
 * prices, the amount, per audio hour and for a month. Pure: the report's `cost` in, HTML out.
 */
import type { BatchCost } from '../cost/batch-cost.ts';
import { esc } from './html.ts';
import { total } from '../cost/history-actions.ts';

const n0 = (n: number) => Math.round(n).toLocaleString('en-US');
const n1 = (n: number) => (Math.round(n * 10) / 10).toLocaleString('en-US');

function money(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency,
      maximumSignificantDigits: 4,
    }).format(amount);
  } catch {
    return `${n1(amount)} ${currency}`;
  }
}

const ITEM_LABELS = {
  temporalActions: 'Temporal actions',
  s3Put: 'S3 PUT-class requests',
  s3Get: 'S3 GET-class requests',
  serviceAudio: 'service audio streamed',
  cpu: 'worker CPU',
} as const;

function table(title: string, counts: Record<string, number>, hours: number): string {
  const rows = Object.entries(counts)
    .filter(([, v]) => v > 0)
    .sort((a, b) => b[1] - a[1]);
  if (!rows.length) return '';
  return `<table class="cost"><thead><tr><th>${esc(title)}</th><th class="num">batch</th><th class="num">per audio hour</th></tr></thead><tbody>${rows
    .map(
      ([k, v]) =>
        `<tr><td>${esc(k)}</td><td class="num">${n0(v)}</td><td class="num">${hours > 0 ? n1(v / hours) : '—'}</td></tr>`,
    )
    .join('')}<tr class="total"><td>total</td><td class="num">${n0(total(counts))}</td><td class="num">${
    hours > 0 ? n1(total(counts) / hours) : '—'
  }</td></tr></tbody></table>`;
}

export function costSection(cost: BatchCost | undefined): string {
  if (!cost) return '';
  const { figures: f, amount } = cost;
  const hours = f.audioHours;
  const sampled =
    f.historiesRead > 0 && f.historiesRead < f.calls
      ? ` Counted from ${f.historiesRead} of the batch's calls, spread evenly, and scaled to the batch.`
      : '';
  const facts = [
    f.historyEventsPerCall
      ? `<div class="fact" id="fact-history-events"><b>${n1(f.historyEventsPerCall.mean)}</b><span>history events per call (largest ${n0(f.historyEventsPerCall.max)})</span></div>`
      : '',
    f.audioSecondsStreamed !== undefined && hours > 0
      ? `<div class="fact" id="fact-audio-streamed"><b>${n1(f.audioSecondsStreamed / 3600 / hours)}</b><span>audio hours streamed per audio hour (channels and restarts)</span></div>`
      : '',
    amount?.perAudioHour !== null && amount?.perAudioHour !== undefined
      ? `<div class="fact" id="fact-cost-per-audio-hour"><b>${esc(money(amount.perAudioHour, amount.currency))}</b><span>per audio hour</span></div>`
      : '',
    amount && amount.month.amount !== null
      ? `<div class="fact" id="fact-cost-month"><b>${esc(money(amount.month.amount, amount.currency))}</b><span>a month of ${n0(amount.month.audioHours)} audio hours</span></div>`
      : '',
  ].join('');
  const priced = amount
    ? `<table class="cost" id="cost-amount"><thead><tr><th>item</th><th class="num">quantity</th><th class="num">amount</th></tr></thead><tbody>${amount.lines
        .map(
          (l) =>
            `<tr><td>${esc(ITEM_LABELS[l.item])}</td><td class="num">${n1(l.quantity)} ${esc(l.unit)}</td><td class="num">${esc(money(l.amount, amount.currency))}</td></tr>`,
        )
        .join(
          '',
        )}<tr class="total"><td>batch</td><td></td><td class="num">${esc(money(amount.total, amount.currency))}</td></tr></tbody></table>${
        amount.unpriced.length
          ? `<p class="muted">Not in the amount (no price set, or not measured per batch): ${amount.unpriced.map((i) => esc(ITEM_LABELS[i])).join(', ')}.</p>`
          : ''
      }`
    : '<p class="muted">No prices set: counts only (the deployment sets <code>CALLPIPE_PRICES</code> for an amount).</p>';
  return `<section class="card" id="cost"><h2>Cost</h2>
<div class="facts-grid">${facts}</div>
${table('Temporal actions', f.actions, hours)}
${table('service requests', f.serviceRequests ?? {}, hours)}
${priced}
<p class="muted">Temporal actions as Temporal Cloud bills them, counted from the calls' histories; heartbeats ${
    f.heartbeats === 'estimated'
      ? "estimated from each activity's run time and heartbeat timeout"
      : 'as the workers counted them'
  }.${sampled} S3 requests and CPU are counted per worker process on its <code>/metrics</code> endpoint.${
    cost.note ? ` ${esc(cost.note)}.` : ''
  }</p></section>`;
}
