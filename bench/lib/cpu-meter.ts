/**
 * Where a run's CPU went: the machine's busy share (from /proc/stat) and the cores each named process
 * used, its reaped children included (ffmpeg runs as the media workers' children), between `start()`
 * and `read()`. A run whose machine share nears 1 is CPU-bound: its wall time says what the machine
 * lacks, not what the pipeline does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { CLOCK_TICKS_PER_SECOND, readProcStat, type ProcStat } from '../../cli/stack/proc-stat.ts';

/** Busy and total clock ticks of all CPUs since boot (the `cpu` line of /proc/stat). */
function machineTicks(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    const total = ticks.reduce((a, b) => a + b, 0);
    // idle and iowait are the 4th and 5th fields: everything else kept a CPU busy.
    return { busy: total - (ticks[3] ?? 0) - (ticks[4] ?? 0), total };
  } catch {
    return undefined;
  }
}

/** CPU seconds of `pid` itself and of its children it has waited for, from /proc/<pid>/stat. */
export function processCpu(pid: number | undefined): { self: number; children: number } {
  const stat = pid ? readProcStat(`/proc/${pid}/stat`) : undefined;
  if (!stat) return { self: 0, children: 0 };
  return { self: ticksSeconds(stat, 14, 15), children: ticksSeconds(stat, 16, 17) };
}

/** The sum of time fields `fields` (utime 14, stime 15, cutime 16, cstime 17), in seconds. */
function ticksSeconds(stat: ProcStat, ...fields: number[]): number {
  return fields.reduce((sum, n) => sum + Number(stat.field(n)), 0) / CLOCK_TICKS_PER_SECOND;
}

/** CPU seconds (user + system) used so far by `pid` itself; 0 when unknown. */
export function cpuSeconds(pid: number | undefined): number {
  return processCpu(pid).self;
}

export interface CpuUse {
  /** Busy share of all the machine's cores over the interval (1 = every core busy all the time). */
  machineSaturation: number | undefined;
  cores: number;
  /** Cores each process used on average over the interval; `<name> children` for its reaped children. */
  processCores: Record<string, number>;
  /** CPU seconds each process used over the interval, named as in `processCores`. */
  processSeconds: Record<string, number>;
}

export function startCpuMeter(processes: Record<string, number | undefined>): { read(): CpuUse } {
  const t0 = performance.now();
  const machine0 = machineTicks();
  const before = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, processCpu(pid)]));
  return {
    read() {
      const seconds = (performance.now() - t0) / 1000;
      const machine1 = machineTicks();
      const processCores: Record<string, number> = {};
      const processSeconds: Record<string, number> = {};
      const round = (x: number) => Math.round(x * 100) / 100;
      for (const [name, pid] of Object.entries(processes)) {
        const now = processCpu(pid);
        processSeconds[name] = round(now.self - before[name]!.self);
        processCores[name] = round(processSeconds[name] / seconds);
        const children = now.children - before[name]!.children;
        if (children > 0) {
          processSeconds[`${name} children`] = round(children);
          processCores[`${name} children`] = round(children / seconds);
        }
      }
      return {
        machineSaturation:
          machine0 && machine1
            ? round((machine1.busy - machine0.busy) / Math.max(1, machine1.total - machine0.total))
            : undefined,
        cores: cpus().length,
        processCores,
        processSeconds,
      };
    },
  };
}

/**
 * CPU seconds of each thread of `pid` so far, summed by thread name (`node` is the JavaScript thread;
 * Temporal's core runs in `tokio-runtime-w…` threads, V8's GC helpers in `V8 Worker`, libuv's pool in
 * `libuv-worker`): a V8 profile sees only the first, /proc sees them all.
 */
export function threadCpu(pid: number | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  if (!pid) return out;
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    // Undefined when the thread ended between the listing and the read.
    const stat = readProcStat(`/proc/${pid}/task/${tid}/stat`);
    if (stat) out[stat.comm] = (out[stat.comm] ?? 0) + ticksSeconds(stat, 14, 15);
  }
  return out;
}
