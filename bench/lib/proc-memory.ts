/** Peak memory of a process from Linux's /proc (VmHWM: the resident set's high-water mark). */
import { readFileSync } from 'node:fs';

/** Peak RSS of `pid` in MB, or undefined when /proc does not tell (not Linux, process gone). */
export function peakRssMb(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmHWM:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb ? Math.round(Number(kb) / 1024) : undefined;
  } catch {
    return undefined;
  }
}
