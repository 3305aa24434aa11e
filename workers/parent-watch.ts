/**
 * A child of the local stack stops when the process that started it dies, however it dies (SIGKILL
 * included, where that process can no longer stop anything): the stack hands each child a pipe on stdin
 * that only it holds open and never writes to; end of file there means the parent is gone, and the child
 * stops the way SIGTERM stops it (workers drain, the emulator closes). See `cli/stack/process.ts`.
 */
import { fstatSync } from 'node:fs';
import type { Socket } from 'node:net';
import { PROCESS_ENV_VARS, processSettings } from '../schemas/process-settings.ts';

/** Set by the stack on its children: `stdin` means "stop when stdin closes". */
export const STOP_WITH_PARENT_VARIABLE = PROCESS_ENV_VARS.stopWithParent;

export function stopWithParent(env: NodeJS.ProcessEnv = process.env): void {
  const mode = processSettings(env).stopWithParent;
  // Not passed on to whatever this process starts: their stdin is not the stack's pipe.
  delete env[STOP_WITH_PARENT_VARIABLE];
  if (mode !== 'stdin') return;
  try {
    // Only a pipe (Node's `stdio: 'pipe'` is a socket pair) reports its writer's death; a file or
    // /dev/null reaches its end at once.
    const stat = fstatSync(0);
    if (!stat.isFIFO() && !stat.isSocket()) return;
  } catch {
    return;
  }
  const stdin = process.stdin as unknown as Socket;
  let stopping = false;
  const parentGone = () => {
    if (stopping) return;
    stopping = true;
    process.kill(process.pid, 'SIGTERM');
  };
  stdin.once('end', parentGone);
  stdin.once('close', parentGone);
  stdin.on('error', parentGone);
  stdin.on('data', () => {}); // nothing is ever sent; reading is how end of file is seen
  // The watch must not keep a process alive that has finished its work.
  stdin.unref();
}
