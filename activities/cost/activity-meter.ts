/**
 * The worker process's own cost counters (activities/metrics.ts, on its /metrics endpoint): heartbeats
 * that reached the server, by activity type, and the process's CPU seconds, its reaped children
 * (ffmpeg) included, shared among the activities running when they were used.
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

/** How often the process's CPU is read and shared among the running activities. */
const CPU_SAMPLE_MS = 1000;

/** Running activities by type (a count each): what the CPU of the last interval is shared among. */
const running = new Map<string, number>();
let sampler: NodeJS.Timeout | undefined;
let last = 0;

function cpuNow(): number {
  const { self, children } = processCpuSeconds();
  return self + children;
}

function sample(): void {
  const now = cpuNow();
  const used = now - last;
  last = now;
  const count = [...running.values()].reduce((a, b) => a + b, 0);
  if (count === 0) return;
  for (const [type, n] of running) metrics.activityCpu(type, (used * n) / count);
}

function enter(type: string): void {
  if (!sampler) {
    last = cpuNow();
    sampler = setInterval(sample, CPU_SAMPLE_MS);
    sampler.unref();
  }
  running.set(type, (running.get(type) ?? 0) + 1);
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
export function meterHeartbeats(ctx: Context, clock: () => number = Date.now): () => number {
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
