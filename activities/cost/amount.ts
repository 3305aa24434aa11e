/**
 * A batch's cost figures priced with the deployment's table (schemas/cost.ts): an amount per item, the
 * total, the amount per audio hour and a month's forecast. Items the table does not price, or the batch
 * did not measure, are left out of the amount and named, so a partial amount never passes for a whole.
 */
import { s3ClassOf, type CostFigures, type Prices } from '../../schemas/cost.ts';
import { total } from './history-actions.ts';

/** Days of the month the default forecast counts: the batch's audio each day. */
const FORECAST_DAYS = 30;

interface CostLine {
  item: 'temporalActions' | 's3Put' | 's3Get' | 'serviceAudio' | 'cpu';
  quantity: number;
  unit: string;
  amount: number;
}

export interface CostAmount {
  currency: string;
  lines: CostLine[];
  total: number;
  perAudioHour: number | null;
  /** Audio hours a month the forecast is for, and its amount. */
  month: { audioHours: number; amount: number | null };
  /** Items without a price or a measurement: not in the total. */
  unpriced: CostLine['item'][];
}

function s3ByClass(requests: Record<string, number> | undefined): { put: number; get: number } {
  const out = { put: 0, get: 0 };
  for (const [op, n] of Object.entries(requests ?? {})) {
    const cls = s3ClassOf(op);
    if (cls !== 'free') out[cls] += n;
  }
  return out;
}

export function costAmount(figures: CostFigures, prices: Prices): CostAmount {
  const lines: CostLine[] = [];
  const unpriced: CostLine['item'][] = [];
  const line = (item: CostLine['item'], quantity: number | undefined, unit: string, per?: number) => {
    if (quantity === undefined || per === undefined) unpriced.push(item);
    else lines.push({ item, quantity, unit, amount: quantity * per });
  };
  const s3 = figures.s3Requests ? s3ByClass(figures.s3Requests) : undefined;
  line('temporalActions', total(figures.actions), 'actions', perUnit(prices.temporalActionPer1M, 1e6));
  line('s3Put', s3?.put, 'requests', perUnit(prices.s3PutPer1k, 1e3));
  line('s3Get', s3?.get, 'requests', perUnit(prices.s3GetPer1k, 1e3));
  const streamed = figures.audioSecondsStreamed;
  line(
    'serviceAudio',
    streamed !== undefined ? streamed / 3600 : undefined,
    'audio hours',
    prices.serviceAudioHour,
  );
  const cpu = figures.cpuSeconds;
  line('cpu', cpu !== undefined ? cpu / 3600 : undefined, 'core-hours', prices.cpuCoreHour);
  const sum = lines.reduce((a, l) => a + l.amount, 0);
  const perAudioHour = figures.audioHours > 0 ? sum / figures.audioHours : null;
  const monthHours = prices.audioHoursPerMonth ?? figures.audioHours * FORECAST_DAYS;
  return {
    currency: prices.currency,
    lines,
    total: sum,
    perAudioHour,
    month: { audioHours: monthHours, amount: perAudioHour === null ? null : perAudioHour * monthHours },
    unpriced,
  };
}

function perUnit(price: number | undefined, units: number): number | undefined {
  return price === undefined ? undefined : price / units;
}
