/**
 * What a killed `callpipe up` leaves behind: `stopStaleStack` stops the recorded processes that are still
 * the ones recorded (pid and start time), leaves alone a pid now held by another process, and says so in
 * one line; and a child of the stack whose parent dies by SIGKILL stops through its stdin watch alone
 * (`workers/parent-watch.ts`, the fallback where there is no `setpriv`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  isRecordedProcessAlive,
  recordProcess,
  stackFile,
  stopStaleStack,
  writeStackRecord,
} from '../../cli/stack/stack-record.ts';
import { alive, survivorsAfter } from '../helpers/up-process.ts';
import { typeScriptNode } from '../../scripts/node-runtime.mjs';

const PARENT_WATCH = fileURLToPath(new URL('../../workers/parent-watch.ts', import.meta.url));
const homes: string[] = [];
const children: ChildProcess[] = [];

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), 'callpipe-stale-'));
  homes.push(dir);
  return dir;
}

/** A pid that ran and exited: an owner that is gone. */
function deadPid(): number {
  return spawnSync('true').pid!;
}

function sleeper(): ChildProcess {
  const child = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
  children.push(child);
  return child;
}

afterEach(() => {
  for (const c of children.splice(0)) if (c.pid && alive(c.pid)) process.kill(c.pid, 'SIGKILL');
  for (const dir of homes.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('stopStaleStack', () => {
  it('stops what a dead owner left running and names it in one line', async () => {
    const dir = home();
    const left = sleeper();
    const owner = deadPid();
    writeStackRecord(dir, { pid: owner, processes: [recordProcess('s3', left.pid!)] });
    const line = await stopStaleStack(dir);
    expect(line).toBe(
      `stopped a stale stack in ${dir} left by callpipe up (pid ${owner}): s3 ${left.pid} (SIGTERM)`,
    );
    expect(await survivorsAfter([left.pid!])).toEqual([]);
    expect(existsSync(stackFile(dir))).toBe(false);
  });

  it('leaves alone a pid that now belongs to another process', async () => {
    const dir = home();
    const stranger = sleeper();
    writeStackRecord(dir, {
      pid: deadPid(),
      processes: [{ name: 'temporal', pid: stranger.pid!, startTicks: '1' }],
    });
    const line = await stopStaleStack(dir);
    expect(line).toContain('none of its processes was still running');
    expect(alive(stranger.pid!)).toBe(true);
  });

  it('does nothing while the owner lives (a running stack is not stale)', async () => {
    const dir = home();
    const child = sleeper();
    writeStackRecord(dir, {
      ...recordProcess('up', process.pid),
      processes: [recordProcess('s3', child.pid!)],
    });
    expect(isRecordedProcessAlive(recordProcess('up', process.pid))).toBe(true);
    expect(await stopStaleStack(dir)).toBeUndefined();
    expect(alive(child.pid!)).toBe(true);
    expect(JSON.parse(readFileSync(stackFile(dir), 'utf8')).pid).toBe(process.pid);
  });
});

describe('stopWithParent', () => {
  it('stops a child the way SIGTERM does once its parent is killed with SIGKILL', async () => {
    const dir = home();
    const marker = join(dir, 'stopped');
    // parent → child with a stdin pipe only the parent holds; the child reports its SIGTERM in a file.
    const childCode = `
      import { writeFileSync } from 'node:fs';
      const { stopWithParent } = await import(${JSON.stringify(PARENT_WATCH)});
      process.once('SIGTERM', () => { writeFileSync(${JSON.stringify(marker)}, 'SIGTERM'); process.exit(0); });
      stopWithParent();
      setInterval(() => {}, 1000);
      console.log('ready');`;
    const parentCode = `
      import { spawn } from 'node:child_process';
      const child = spawn(process.execPath, ['--input-type=module', '-e', ${JSON.stringify(childCode)}], {
        env: { ...process.env, CALLPIPE_STOP_WITH_PARENT: 'stdin' },
        stdio: ['pipe', 'pipe', 'inherit'],
        detached: true,
      });
      child.stdout.once('data', () => console.log(String(child.pid)));
      setInterval(() => {}, 1000);`;
    const parent = spawn(typeScriptNode(), ['--input-type=module', '-e', parentCode], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(parent);
    const childPid = await new Promise<number>((resolve) =>
      parent.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
    );
    expect(alive(childPid)).toBe(true);
    parent.kill('SIGKILL');
    expect(await survivorsAfter([childPid])).toEqual([]);
    expect(readFileSync(marker, 'utf8')).toBe('SIGTERM');
  });
});
