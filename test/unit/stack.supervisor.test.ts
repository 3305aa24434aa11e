/**
 * `callpipe up`'s supervision, on real child processes: a part that dies is named at once with how it
 * ended and its log's last lines, and started again; a part that keeps dying is given up on after the
 * bounded number of restarts, with a reason; a part stopped on purpose is no death.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManagedProcess } from '../../cli/stack/process.ts';
import { superviseStack, type SupervisedStack } from '../../cli/stack/supervisor.ts';

const dir = mkdtempSync(join(tmpdir(), 'callpipe-supervisor-'));
const started: ManagedProcess[] = [];
afterAll(async () => {
  for (const p of started) await p.stop(1000);
  rmSync(dir, { recursive: true, force: true });
});

/** A part that logs a line and waits to be killed. */
function part(name: string): ManagedProcess {
  const proc = new ManagedProcess({
    name,
    command: '/bin/sh',
    args: ['-c', `echo "${name} is listening"; exec sleep 600`],
    logFile: join(dir, `${name}.log`),
    readyWhenLogged: 'listening',
  });
  started.push(proc);
  return proc;
}

/** The supervisor's lines, and a wait for the `count`-th that matches. */
function noticeLog() {
  const lines: string[] = [];
  let changed = () => {};
  return {
    lines,
    notice(line: string) {
      lines.push(line);
      changed();
    },
    async when(match: RegExp, count = 1): Promise<string> {
      for (;;) {
        const seen = lines.filter((l) => match.test(l));
        if (seen.length >= count) return seen[count - 1]!;
        await new Promise<void>((resolve) => (changed = resolve));
      }
    },
  };
}

describe('superviseStack', () => {
  it('names a dead part, how it ended and its log, restarts it, and gives up past the bound', async () => {
    const s3 = part('s3');
    const other = part('other');
    await s3.start();
    await other.start();
    const stack: SupervisedStack = {
      processes: { s3, other },
      restart: async (name) => {
        const proc = name === 's3' ? s3 : other;
        await proc.start();
        return proc;
      },
    };
    const log = noticeLog();
    const supervisor = superviseStack(stack, { notice: log.notice, maxRestarts: 2 });
    let gaveUp: string | undefined;
    void supervisor.gaveUp.then((reason) => (gaveUp = reason));

    const firstPid = s3.pid!;
    process.kill(firstPid, 'SIGKILL');
    const death = await log.when(new RegExp(`s3 \\(pid ${firstPid}\\) was killed by SIGKILL`));
    expect(death).toContain(join(dir, 's3.log'));
    expect(death).toContain('s3 is listening');
    await log.when(/s3 is running again/);
    expect(s3.running).toBe(true);
    expect(s3.pid).not.toBe(firstPid);
    expect(gaveUp).toBeUndefined();

    process.kill(s3.pid!, 'SIGKILL');
    await log.when(/restarting s3 \(restart 2 of at most 2\)/);
    await log.when(/s3 is running again/, 2);
    process.kill(s3.pid!, 'SIGTERM');
    const reason = await supervisor.gaveUp;
    expect(reason).toMatch(
      /^s3 was killed by SIGTERM after 2 restarts within 10 minutes; stopping the stack/,
    );
    // The other part was never touched.
    expect(other.running).toBe(true);
    supervisor.stop();
  });

  it('is silent about a part stopped on purpose', async () => {
    const emulator = part('emulator');
    await emulator.start();
    const log = noticeLog();
    const supervisor = superviseStack(
      { processes: { emulator }, restart: () => Promise.reject(new Error('not expected')) },
      { notice: log.notice },
    );
    let gaveUp: string | undefined;
    void supervisor.gaveUp.then((reason) => (gaveUp = reason));
    await emulator.stop();
    expect((await emulator.exitStatus()).requested).toBe(true);
    // The supervisor's own wait on the same exit has run by now (it was queued first).
    await new Promise((resolve) => setImmediate(resolve));
    expect(log.lines).toEqual([]);
    expect(gaveUp).toBeUndefined();
    supervisor.stop();
  });
});
