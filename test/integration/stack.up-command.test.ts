/**
 * `callpipe up` as users run it: a separate process with its own CALLPIPE_HOME and free ports. SIGTERM
 * must stop every process it started (no orphan temporal or weed), and a taken port must be refused
 * with a message that names it.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../bin/callpipe.js', import.meta.url));

/** Every descendant pid of `pid`, read from /proc. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // process ended while listing
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie is dead for our purposes.
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
}

function upProcess(home: string, extraEnv: Record<string, string> = {}, args: string[] = []) {
  return spawn(process.execPath, [CLI, 'up', '--json', ...args], {
    env: {
      ...process.env,
      CALLPIPE_HOME: home,
      CALLPIPE_TEMPORAL_PORT: '0',
      CALLPIPE_TEMPORAL_UI_PORT: '0',
      CALLPIPE_S3_PORT: '0',
      CALLPIPE_EMULATOR_PORT: '0',
      CALLPIPE_METRICS_PORT: '0',
      CALLPIPE_EMULATOR_SPEED: '100',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

describe('callpipe up', () => {
  it('prints every address as one JSON line when healthy, and SIGTERM leaves no process behind', async () => {
    const home = mkdtempSync(join(tmpdir(), 'callpipe-up-'));
    const up = upProcess(home);
    try {
      let stderr = '';
      up.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        up.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(out.split('\n')[0]!);
        });
        up.once('exit', (code) => reject(new Error(`callpipe up exited early with ${code}: ${stderr}`)));
      });
      const addresses = JSON.parse(line) as Record<string, string>;
      expect(addresses.temporalAddress).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(addresses.webUiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(addresses.s3Endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(addresses.home).toBe(home);
      // The Web UI answers.
      expect((await fetch(addresses.webUiUrl!)).status).toBe(200);

      const tree = descendants(up.pid!);
      expect(tree.length).toBeGreaterThanOrEqual(3); // temporal, weed, workers (and emulator)
      const exited = new Promise<number | null>((resolve) => up.once('exit', (code) => resolve(code)));
      up.kill('SIGTERM');
      expect(await exited).toBe(0);
      const survivors = tree.filter(alive);
      expect(survivors).toEqual([]);
    } finally {
      if (up.exitCode === null) up.kill('SIGKILL');
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('refuses a taken port with a message naming it and its variable', async () => {
    const home = mkdtempSync(join(tmpdir(), 'callpipe-up-'));
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const up = upProcess(home, { CALLPIPE_TEMPORAL_PORT: String(port) });
      let stderr = '';
      up.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((resolve) => up.once('exit', resolve));
      expect(code).not.toBe(0);
      expect(stderr).toContain(`port ${port}`);
      expect(stderr).toContain('CALLPIPE_TEMPORAL_PORT');
      expect(stderr).toContain('--ports auto');
    } finally {
      blocker.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
