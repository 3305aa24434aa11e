/**
 * `callpipe up` as users run it: a separate process with its own CALLPIPE_HOME and free ports. Its codec
 * server holds the payload keys and no other secret of the stack. SIGTERM must stop every process it
 * started (no orphan temporal or weed), and a taken port must be refused with a message that names it.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alive, descendants, upProcess, upReady } from '../helpers/up-process.ts';

describe('callpipe up', () => {
  it('prints every address as one JSON line when healthy, and SIGTERM leaves no process behind', async () => {
    const home = mkdtempSync(join(tmpdir(), 'callpipe-up-'));
    const up = upProcess(home);
    try {
      const addresses = await upReady(up, home).addresses;
      expect(addresses.temporalAddress).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(addresses.webUiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(addresses.s3Endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(addresses.home).toBe(home);
      // The Web UI answers.
      expect((await fetch(addresses.webUiUrl!)).status).toBe(200);
      // A codec server runs with it: the UI is pointed at it, and it answers the UI's origin with its token.
      expect(addresses.codecServerUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const settings = await (await fetch(`${addresses.webUiUrl}/api/v1/settings`)).text();
      expect(settings).toContain(addresses.codecServerUrl);
      const token = readFileSync(join(home, 'codec-server-token'), 'utf8').trim();
      const decode = (path: string) =>
        fetch(`${addresses.codecServerUrl}${path}/decode`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: addresses.webUiUrl! },
          body: JSON.stringify({ payloads: [] }),
        });
      const answer = await decode(`/${token}`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('access-control-allow-origin')).toBe(addresses.webUiUrl);
      expect((await decode('')).status).toBe(401);
      // It holds what decoding needs and no other secret of the stack (issue 41): its own environment.
      const record = JSON.parse(readFileSync(join(home, 'stack.json'), 'utf8')) as {
        processes: { name: string; pid: number }[];
      };
      const codec = record.processes.find((p) => p.name === 'codec-server');
      expect(codec).toBeDefined();
      const names = readFileSync(`/proc/${codec!.pid}/environ`, 'utf8')
        .split('\0')
        .map((v) => v.split('=')[0] ?? '');
      for (const secret of [
        'CALLPIPE_CLIENT_SECRET',
        'CALLPIPE_S3_SECRET_ACCESS_KEY',
        'CALLPIPE_S3_ACCESS_KEY_ID',
        'CALLPIPE_DIGEST_KEY',
        'CALLPIPE_DIGEST_KEY_FILE',
        'CALLPIPE_S3_ENDPOINT',
        'CALLPIPE_SERVICE_URL',
      ])
        expect(names, secret).not.toContain(secret);
      expect(names.some((n) => n.startsWith('CALLPIPE_PAYLOAD_KEYS'))).toBe(true);

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
