/** CPU seconds of this process: itself (all its threads), and the children it has reaped (ffmpeg). */
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's time fields (USER_HZ, 100 on Linux). */
const CLOCK_TICKS_PER_SECOND = 100;

/** cutime + cstime of /proc/self/stat in seconds; 0 where there is no /proc. */
function reapedChildrenSeconds(): number {
  try {
    const line = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces) are counted from its closing parenthesis:
    // cutime and cstime are proc(5) fields 16 and 17.
    const rest = line.slice(line.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[16 - 3]) + Number(rest[17 - 3])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

export function processCpuSeconds(): { self: number; children: number } {
  const { user, system } = process.cpuUsage();
  return { self: (user + system) / 1e6, children: reapedChildrenSeconds() };
}
