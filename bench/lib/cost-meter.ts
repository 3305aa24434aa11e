/**
 * The night benchmark's cost meter (issue 27): what one audio hour costs in Temporal actions (counted
 * from every history of the namespace within the pass, heartbeats from the workers' own count),
 * history events per call, S3 requests by operation, service requests by endpoint, audio streamed,
 * and CPU seconds by process, by the workers' threads and by activity type; and the machine's speed in
 * a fixed unit, so that figures from two machines can be compared.
 *
 * The workers' counters are read from their /metrics endpoint (activities/metrics.ts) before and after
 * a pass: the same numbers a deployment's Prometheus scrapes from every worker.
 */
import { spawnSync } from 'node:child_process';
import type { Client } from '@temporalio/client';
import { historyActions, addCounts, total } from '../../activities/cost/history-actions.ts';
import { processCpuSeconds } from '../../activities/cost/process-cpu.ts';
import type { ActionCounts } from '../../schemas/cost.ts';
import type { createNlpActivities } from '../../activities/nlp/nlp-activities.ts';

/** One sample of a Prometheus text exposition: `name{labels}` → value. */
export type Scrape = Map<string, number>;

/** Parses the samples of a Prometheus text exposition (comments and blank lines skipped). */
export function parseMetrics(text: string): Scrape {
  const out: Scrape = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    const value = Number(line.slice(at + 1));
    if (Number.isFinite(value)) out.set(line.slice(0, at), value);
  }
  return out;
}

export async function scrape(url: string | undefined): Promise<Scrape> {
  if (!url) return new Map();
  try {
    return parseMetrics(await (await fetch(url)).text());
  } catch {
    return new Map();
  }
}

/** `name`'s samples in `after` less `before`, by the value of label `label` (summed over the others). */
export function deltaBy(before: Scrape, after: Scrape, name: string, label?: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of after) {
    if (key !== name && !key.startsWith(`${name}{`)) continue;
    const m = label ? new RegExp(`${label}="([^"]*)"`).exec(key) : undefined;
    const k = m?.[1] ?? (label ? '?' : 'total');
    const d = value - (before.get(key) ?? 0);
    if (d !== 0) out[k] = (out[k] ?? 0) + d;
  }
  return out;
}

export interface NamespaceActions {
  actions: ActionCounts;
  /** Heartbeats the histories' activity run times would give (beside the workers' count). */
  estimatedHeartbeats: number;
  /** History events per processRecording run: mean and largest. */
  historyEventsPerCall: { mean: number; max: number };
  workflows: number;
}

/** Actions of every workflow of the namespace between `fromMs` and `toMs`, from their histories. */
export async function namespaceActions(
  client: Client,
  fromMs: number,
  toMs: number,
): Promise<NamespaceActions> {
  const actions: ActionCounts = {};
  let estimated = 0;
  const callEvents: number[] = [];
  let workflows = 0;
  for await (const wf of client.workflow.list()) {
    if (wf.closeTime && wf.closeTime.getTime() < fromMs) continue;
    if (wf.startTime.getTime() >= toMs) continue;
    const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    const counted = historyActions(history.events ?? [], { fromMs, toMs });
    addCounts(actions, counted.actions);
    estimated += total(counted.estimatedHeartbeats);
    if (wf.type === 'processRecording') callEvents.push(counted.events);
    workflows++;
  }
  return {
    actions,
    estimatedHeartbeats: estimated,
    historyEventsPerCall: {
      mean: callEvents.length ? callEvents.reduce((a, b) => a + b, 0) / callEvents.length : 0,
      max: callEvents.length ? Math.max(...callEvents) : 0,
    },
    workflows,
  };
}

/**
 * The machine's speed in a fixed unit: CPU seconds and wall seconds ffmpeg takes to transcode one
 * synthetic hour (seeded pink noise, 44.1 kHz stereo) to 8-kHz mu-law, as the pipeline's transcodes do.
 * CPU seconds are ffmpeg's own (this process's reaped children), so a busy machine inflates the wall
 * time but hardly the CPU time.
 */
export function referenceTranscode(ffmpeg: string): {
  cpuSeconds: number;
  wallSeconds: number;
  unit: string;
} {
  const before = processCpuSeconds().children;
  const t0 = performance.now();
  const run = spawnSync(
    ffmpeg,
    [
      '-nostdin',
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      'anoisesrc=d=3600:c=pink:r=44100:a=0.1:seed=27',
      '-ac',
      '2',
      '-filter:a',
      'pan=mono|c0=0.5*c0+0.5*c1',
      '-ar',
      '8000',
      '-c:a',
      'pcm_mulaw',
      '-f',
      'wav',
      '-y',
      '/dev/null',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const wallSeconds = (performance.now() - t0) / 1000;
  if (run.status !== 0)
    throw new Error(`reference transcode failed: ${run.stderr?.toString().slice(0, 300)}`);
  return {
    cpuSeconds: Math.round((processCpuSeconds().children - before) * 100) / 100,
    wallSeconds: Math.round(wallSeconds * 100) / 100,
    unit: 'ffmpeg: one synthetic hour (pink noise, 44.1 kHz) to 8-kHz mu-law',
  };
}

const r = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Each value of `counts` per audio hour, largest first, with their total. */
export function perHour(counts: Record<string, number>, audioHours: number, digits = 1) {
  const byKey = Object.fromEntries(
    Object.entries(counts)
      .filter(([, v]) => v !== 0)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => [k, r(v / audioHours, digits)]),
  );
  return { ...byKey, total: r(total(counts) / audioHours, digits) };
}

/** The text-analysis activities (the nlp queue's): their run time follows the text rate. */
const TEXT_ACTIVITIES = [
  'redactText',
  'removeFillers',
  'summarizeCall',
  'analyzeSentiment',
  'extractKeywords',
  'classifyDialogActs',
] as const satisfies readonly (keyof ReturnType<typeof createNlpActivities>)[];

/**
 * Heartbeats go by the wall clock (one per throttle interval of an activity's run), so what a pass
 * counts at `speed` is real time's only for activities whose run time does not depend on the speed:
 * the probe, plan and transcodes take the same wall time at any speed. Recognition runs at the
 * emulator's clock, `speed` times faster than at real time, and so does text analysis when its rate is
 * compressed like the clock: at real time those run `speed` times longer and heartbeat that much more.
 */
export function heartbeatsAtRealTime(
  byActivity: Record<string, number>,
  speed: number,
  textCompressed: boolean,
): number {
  const paced = new Set<string>([
    'recognizeSession',
    'recognizePieces',
    ...(textCompressed ? TEXT_ACTIVITIES : []),
  ]);
  return Object.entries(byActivity).reduce(
    (n, [type, count]) => n + count * (paced.has(type) ? speed : 1),
    0,
  );
}
