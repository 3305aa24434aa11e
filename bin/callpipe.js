#!/usr/bin/env node
// The `callpipe` command: TypeScript sources run on Node's own type stripping, so there is no build step
// to forget. A Node too old for that (before 22.18) runs the same command on the pinned Node instead
// (scripts/node-runtime.mjs), passing signals on, so `callpipe up` stops the same way from either.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stripsTypes, typeScriptNodeOrExit } from '../scripts/node-runtime.mjs';

if (stripsTypes()) {
  await import('../cli/main.ts');
} else {
  const node = typeScriptNodeOrExit();
  const child = spawn(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    // Ended by a signal: end the same way, so whoever waits on this process sees that signal.
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
