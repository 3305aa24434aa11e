/** Runs the real `callpipe` command (bin/callpipe.js) in a child process, as a user's script would. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const CALLPIPE_BIN = fileURLToPath(new URL('../../bin/callpipe.js', import.meta.url));

export interface CallpipeRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `callpipe <args…>` with `env` over this process's environment; never throws for a non-zero exit. */
export async function callpipe(args: string[], env: Record<string, string> = {}): Promise<CallpipeRun> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CALLPIPE_BIN, ...args], {
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}
