/**
 * A process's (or a thread's) line of Linux's /proc/<pid>/stat, read as proc(5) numbers its fields. The
 * command name (field 2) may hold spaces and parentheses, so the fields after it are counted from its
 * last closing parenthesis. One reader for the stack's pid records, the tests' process trees and the
 * benchmarks' CPU figures.
 */
import { readFileSync } from 'node:fs';

export interface ProcStat {
  /** Field 2, the command name without its parentheses. */
  comm: string;
  /** Field `n` (3 and up) as proc(5) numbers it: 4 ppid, 14–17 utime/stime/cutime/cstime, 22 starttime. */
  field(n: number): string | undefined;
}

/** Clock ticks per second of the time fields (USER_HZ, 100 on Linux). */
export const CLOCK_TICKS_PER_SECOND = 100;

/** `path` is `/proc/<pid>/stat` or `/proc/<pid>/task/<tid>/stat`; undefined when it cannot be read. */
export function readProcStat(path: string): ProcStat | undefined {
  let line: string;
  try {
    line = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const close = line.lastIndexOf(')');
  const rest = line.slice(close + 2).split(' ');
  return { comm: line.slice(line.indexOf('(') + 1, close), field: (n) => rest[n - 3] };
}
