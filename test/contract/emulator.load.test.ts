/**
 * Load: 64 concurrent stream sessions against the emulator run by `callpipe emulator` in its own process,
 * at speed 100 and 10, with no false 412 and every phrase recognized at its time. The emulator's CPU
 * share at that load is read from its /emulator/stats (process.cpuUsage of the emulator process) and
 * printed, with the wall time: printed, never asserted.
 *
 * What is asserted holds on any machine, however busy. The clients keep pace by the emulator's own
 * measure (streamAudio starts its schedule at the answer to the first chunk, the emulator at that chunk's
 * arrival), so a pacing 412 cannot be earned by a slow client, only caused by a fault of the emulator's
 * accounting. The 1-s deadlines and the idle timeout get more slack than the test may run: a stall of a
 * loaded machine is not what this test is about (those rules are tested exactly on a manual clock in
 * emulator.stream.test.ts). At speed 100 the clients cannot send 64 × 100 × 4 requests per second and
 * fall behind schedule, where no 412 is due either.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorStats, RunningEmulator } from '../../emulator/server.ts';
import { synthesize, toMulaw, type PhraseAt } from '../helpers/dtmf-audio.ts';
import { finals, getJson, post, StreamClient, streamAudio, token } from './emulator.client.ts';

const SESSIONS = 64;
const SECONDS = 20;
/** Longer than the test's timeout: no deadline of the emulator can pass while the test runs. */
const DEADLINE_SLACK_MS = 10 * 60_000;

async function launch(speed: number) {
  const bin = fileURLToPath(new URL('../../bin/callpipe.js', import.meta.url));
  const slack = String(DEADLINE_SLACK_MS);
  const args = [bin, 'emulator', '--port', '0', '--speed', String(speed), '--deadline-slack-ms', slack];
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`emulator exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', resolve);
  });
  const info = JSON.parse(line) as {
    baseUrl: string;
    authUrl: string;
    clientId: string;
    clientSecret: string;
    domainId: string;
  };
  expect(info.clientId).toBe('callpipe-local');
  expect(info.domainId).toBe('cpdomain');
  const url = info.baseUrl.replace(/\/api\/dev$/, '');
  return { child, emu: { ...info, url, port: Number(new URL(url).port) } as unknown as RunningEmulator };
}

describe.each([100, 10])('speed %d', (speed) => {
  let child: ChildProcess;
  let emu: RunningEmulator;

  beforeAll(async () => {
    ({ child, emu } = await launch(speed));
  });

  afterAll(async () => {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  });

  it(`${SESSIONS} concurrent sessions: no false 412, every phrase back`, async () => {
    const access = await token(emu);
    const scripts: PhraseAt[][] = Array.from({ length: SESSIONS }, (_, i) => [
      { id: 1 + (i % 89), start: 0.5 + (i % 7) * 0.1 },
      { id: 101 + (i % 75), start: 7 },
      { id: 1 + ((i * 7) % 89), start: 14 },
    ]);
    const audios = scripts.map((phrases, i) =>
      toMulaw(synthesize({ rate: 8000, phrases, duration: SECONDS, noiseDbfs: -60, seed: i + 1 })),
    );
    expect((await post(`${emu.url}/emulator/stats/reset`, '')).status).toBe(204);
    const began = performance.now();
    const runs = await Promise.all(
      audios.map(async (audio) => {
        const c = new StreamClient(emu, access);
        const start = await c.start();
        expect(start.status).toBe(200);
        return streamAudio(c, audio, { chunkBytes: 1920, bytesPerSecond: 8000, speed });
      }),
    );
    const wall = (performance.now() - began) / 1000;
    const stats = (await getJson(`${emu.url}/emulator/stats`)) as EmulatorStats;
    const statuses = runs.flatMap((r) => r.statuses);
    console.log(
      `load: ${SESSIONS} sessions × ${SECONDS} s at speed ${speed} in ${wall.toFixed(2)} s wall ` +
        `(${((SESSIONS * SECONDS) / wall).toFixed(0)} audio-s/s; on schedule: ${(SECONDS / speed).toFixed(2)} s), ` +
        `${stats.requests} requests, emulator CPU share ${(stats.cpu.share * 100).toFixed(1)} % of one core ` +
        `(user ${stats.cpu.userMs.toFixed(0)} ms, system ${stats.cpu.systemMs.toFixed(0)} ms)`,
    );
    expect(statuses.filter((s) => s === 412)).toEqual([]);
    expect(runs.flatMap((r) => r.errors)).toEqual([]);
    runs.forEach((run, i) => {
      const got = finals(run.messages);
      expect(got).toHaveLength(3);
      got.forEach((s, k) => expect(Math.abs(s.startTime - scripts[i]![k]!.start)).toBeLessThanOrEqual(0.1));
    });
    expect(stats.byCode).toEqual({});
    expect(stats.sessions).toMatchObject({ started: SESSIONS, completed: SESSIONS, failed: 0 });
    expect(stats.audioSeconds).toBeCloseTo(SESSIONS * SECONDS, 3);
  });
});
