/**
 * Scratch files: a process's folder goes when it exits, and what a SIGKILLed process left is swept by the
 * next one to start; a live process's folder is never touched.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sweepScratch } from '../../activities/scratch.ts';

const moduleUrl = new URL('../../activities/scratch.ts', import.meta.url).href;
const temp = mkdtempSync(join(tmpdir(), 'scratch-test-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/**
 * A Node process whose temp folder is `temp` that makes a scratch folder with a file in it, prints the
 * folder, then either exits or waits to be killed.
 */
function child(thenExit: boolean) {
  const script = `
    const { makeScratchDir } = await import(${JSON.stringify(moduleUrl)});
    const { writeFileSync } = await import('node:fs');
    const dir = await makeScratchDir('tracks-');
    writeFileSync(dir + '/t0.mulaw', Buffer.alloc(8000));
    console.log(dir);
    ${thenExit ? '' : 'setInterval(() => {}, 1000);'}
  `;
  const proc = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, TMPDIR: temp },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const printed = new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    proc.on('exit', (code) => (out.includes('\n') ? undefined : reject(new Error(`child exited ${code}`))));
  });
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  return { proc, printed, exited };
}

describe('scratch folders', () => {
  it('a process removes its own scratch folder when it exits', async () => {
    const c = child(true);
    const dir = await c.printed;
    expect(dir.startsWith(temp)).toBe(true);
    await c.exited;
    expect(existsSync(dir)).toBe(false);
  });

  it("a SIGKILLed process's folder is swept by the next start; a live one's is kept", async () => {
    const killed = child(false);
    const live = child(false);
    const [killedDir, liveDir] = await Promise.all([killed.printed, live.printed]);
    killed.proc.kill('SIGKILL');
    await killed.exited;
    // A folder of the same name shape that is not a scratch folder of ours, and a plain file: left alone.
    writeFileSync(join(temp, 'callpipe-scratch-notes.txt'), 'x');
    expect(existsSync(killedDir)).toBe(true);

    const swept = sweepScratch(temp);
    expect(existsSync(liveDir)).toBe(true);
    live.proc.kill('SIGTERM');
    await live.exited;

    expect(swept).toEqual([join(temp, killedDir.slice(temp.length + 1).split('/')[0]!)]);
    expect(existsSync(killedDir)).toBe(false);
    expect(readdirSync(temp)).toContain('callpipe-scratch-notes.txt');
  });
});
