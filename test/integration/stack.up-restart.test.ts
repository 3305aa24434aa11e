/**
 * The local stack never outlives `callpipe up` (issue 18): killed with SIGKILL, where it can stop nothing
 * itself, none of its children survives it, and the next `up` in the same CALLPIPE_HOME starts cleanly,
 * saying in one line what the killed one left. SIGTERM once its output pipes are closed (a reader that went
 * away) still stops everything and exits 0.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { descendants, survivorsAfter, upProcess, upReady } from '../helpers/up-process.ts';

describe('callpipe up, killed', () => {
  it('leaves no child behind after SIGKILL, and starts again in the same home', async () => {
    const home = mkdtempSync(join(tmpdir(), 'callpipe-up-kill-'));
    const first = upProcess(home);
    let second: ReturnType<typeof upProcess> | undefined;
    try {
      await upReady(first, home).addresses;
      const record = JSON.parse(readFileSync(join(home, 'stack.json'), 'utf8')) as {
        pid: number;
        processes: { name: string; pid: number }[];
      };
      expect(record.pid).toBe(first.pid);
      expect(record.processes.map((p) => p.name).sort()).toEqual([
        'codec-server',
        'emulator',
        's3',
        'temporal',
        'workers',
      ]);
      const tree = descendants(first.pid!);
      for (const p of record.processes) expect(tree).toContain(p.pid);

      const killed = new Promise<NodeJS.Signals | null>((resolve) =>
        first.once('exit', (_code, signal) => resolve(signal)),
      );
      first.kill('SIGKILL');
      expect(await killed).toBe('SIGKILL');
      expect(await survivorsAfter(tree)).toEqual([]);

      // As a person runs it: text on stdout and stderr, which matters once they are closed (below).
      second = upProcess(home, {}, [], { json: false });
      const ready = upReady(second, home);
      const addresses = await ready.addresses;
      expect(addresses.home).toBe(home);
      expect(ready.stderr()).toContain(
        `a stack in ${home} was not stopped cleanly (callpipe up (pid ${first.pid})`,
      );
      expect((await fetch(addresses.webUiUrl!)).status).toBe(200);

      // Whoever read its output went away: SIGTERM, whose first act is to say so on stderr, must still
      // stop the stack in order, not hang or crash.
      const secondTree = descendants(second.pid!);
      const exited = new Promise<number | null>((resolve) => second!.once('exit', (code) => resolve(code)));
      second.stdout.destroy();
      second.stderr.destroy();
      second.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(await survivorsAfter(secondTree)).toEqual([]);
      expect(existsSync(join(home, 'stack.json'))).toBe(false);
    } finally {
      for (const up of [first, second]) if (up && up.exitCode === null && !up.signalCode) up.kill('SIGKILL');
      rmSync(home, { recursive: true, force: true });
    }
  });
});
