/**
 * The worker process's own cost counters (activities/metrics.ts, on its /metrics endpoint): heartbeats
 * that reached the server, by activity type, and the process's CPU seconds by activity type: its own
 * shared among the activities running when they were used, and each child process's (ffmpeg) given to
 * the activity that started it.
 *
 * Why counters on the metrics endpoint rather than counts in each activity's result: heartbeats and CPU
 * are per process, not per activity result, and a count in every result would grow every history and
 * change every activity's contract. A deployment's Prometheus already scrapes every worker; the night
 * benchmark reads the same endpoint before and after a pass.
 */
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Context } from '@temporalio/activity';
import { metrics } from '../metrics.ts';
import { HeartbeatThrottle, heartbeatThrottleMs } from './heartbeat-throttle.ts';
import { processCpuSeconds } from './process-cpu.ts';
import { activityContext } from '../activity-context.ts';

/** How often the process's CPU is read and shared among the running activities. */
const CPU_SAMPLE_MS = 1000;

/** Running activities by type (a count each): what the CPU of the last interval is shared among. */
const running = new Map<string, number>();
let sampler: NodeJS.Timeout | undefined;
let last = { self: 0, children: 0 };

/**
 * The process's CPU since the last reading: its own, and its reaped children's that no
 * {@link meterChildProcess} claimed (a child started outside the media module).
 */
function sample(): void {
  const now = processCpuSeconds();
  const used = now.self - last.self + (now.children - last.children);
  last = now;
  const count = [...running.values()].reduce((a, b) => a + b, 0);
  if (count === 0) return;
  for (const [type, n] of running) metrics.activityCpu(type, (used * n) / count);
}

function startSampler(): void {
  if (sampler) return;
  last = processCpuSeconds();
  sampler = setInterval(sample, CPU_SAMPLE_MS);
  sampler.unref();
}

function enter(type: string): void {
  startSampler();
  running.set(type, (running.get(type) ?? 0) + 1);
}

/**
 * Call as a child process (ffmpeg, ffprobe) starts; call what it returns on its `exit` event. A child's
 * CPU reaches the parent's account (`cutime`) only when it is reaped, all at once, and `exit` is emitted
 * in the same turn: read right then, it is that child's whole CPU, given to the activity that started it. Shared among whatever ran in that
 * second instead, a transcode's ffmpeg went mostly to the recognition sessions streaming beside it.
 */
export function meterChildProcess(): () => void {
  const type = activityContext()?.info.activityType;
  if (type === undefined) return () => undefined;
  startSampler();
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    const children = processCpuSeconds().children;
    metrics.activityCpu(type, children - last.children);
    last = { ...last, children };
  };
}

function leave(type: string): void {
  sample();
  const n = (running.get(type) ?? 1) - 1;
  if (n > 0) running.set(type, n);
  else running.delete(type);
}

/**
 * Counts the heartbeats of `ctx`'s activity that its worker sends to the server; returns the count of
 * the attempt so far, settled at `now`.
 */
function meterHeartbeats(ctx: Context, clock: () => number = Date.now): () => number {
  const throttle = new HeartbeatThrottle(heartbeatThrottleMs(ctx.info.heartbeatTimeoutMs));
  const inner = ctx.heartbeat;
  // `heartbeat` is an instance property: every caller (Context.current().heartbeat, heartbeat()) goes here.
  Object.defineProperty(ctx, 'heartbeat', {
    value: (details?: unknown) => {
      throttle.beat(clock());
      inner(details);
    },
    configurable: true,
  });
  return () => {
    throttle.settle(clock());
    return throttle.sent;
  };
}

/** For every Worker of the process (`interceptors.activity`). */
export const costMeterInterceptor: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      const type = ctx.info.activityType;
      const sent = meterHeartbeats(ctx);
      enter(type);
      try {
        return await next(input);
      } finally {
        leave(type);
        metrics.heartbeatsSent(type, sent());
      }
    },
  },
});
