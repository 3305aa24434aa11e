/**
 * Limits and fault injection over real HTTP (issue 3, items 8 and 9): the rate bucket (99997), usage
 * limits (99996 Developers, 99995 Enterprise), the concurrent-session cap (550), Developers refused on
 * speech, every injectable fault, seeded reproducibility, the request log and /emulator/stats.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.ts';
import { ManualClock } from '../../emulator/clock.ts';
import {
  startEmulator,
  type EmulatorOptions,
  type EmulatorStats,
  type RunningEmulator,
} from '../../emulator/server.ts';
import { getJson, MULAW_8K, nlp, post, StreamClient, token, type Msg } from './emulator.client.ts';

const running: RunningEmulator[] = [];
async function emulator(options: EmulatorOptions) {
  const emu = await startEmulator({ port: 0, ...options });
  running.push(emu);
  return emu;
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});

const sentiment = (emu: RunningEmulator, t: string) =>
  nlp(emu, '/nlp/v1/sentiment', { sentence: '助かりました' }, t);
const silence = Buffer.alloc(1920, 0xff);

describe('account limits', () => {
  it('request-rate token bucket: the burst passes, the next is 99997 (HTTP 429), then it refills', async () => {
    // On a manual clock: the burst is spent however long the requests take, and refills only as told.
    const clock = new ManualClock();
    const emu = await emulator({
      clock: clock.now,
      accounts: [{ clientId: 'a', clientSecret: 's', rateLimit: { requestsPerSecond: 20, burst: 5 } }],
    });
    const t = await token(emu, 'a', 's');
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await sentiment(emu, t)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const blocked = await sentiment(emu, t);
    expect(blocked.json).toEqual({
      result: {},
      status: 99997,
      message: 'Too many requests in a very short time; temporarily blocked',
    });
    clock.advance(40); // 20 per second: 0.8 of a request back
    expect((await sentiment(emu, t)).status).toBe(429);
    clock.advance(20); // 1.2: one request, and no more
    expect((await sentiment(emu, t)).status).toBe(200);
    expect((await sentiment(emu, t)).status).toBe(429);
  });

  it('Developers usage limit → 99996; Enterprise preset limit → 99995 (HTTP 403)', async () => {
    const emu = await emulator({
      accounts: [
        { clientId: 'ent', clientSecret: 's', kind: 'Enterprise', usageLimitPer24h: 2, rateLimit: null },
        { clientId: 'dev', clientSecret: 's', kind: 'Developers', usageLimitPer24h: 2, rateLimit: null },
      ],
    });
    for (const [id, code, message] of [
      ['ent', 99995, 'Preset usage limit reached'],
      ['dev', 99996, 'Usage limit reached within 24 hours'],
    ] as const) {
      const t = await token(emu, id, 's');
      expect((await sentiment(emu, t)).status).toBe(200);
      expect((await sentiment(emu, t)).status).toBe(200);
      const res = await sentiment(emu, t);
      expect(res.status).toBe(403);
      expect(res.json).toEqual({ result: {}, status: code, message });
    }
  });

  it('Developers accounts are refused on speech recognition (HTTP 403)', async () => {
    const emu = await emulator({ accounts: [{ clientId: 'dev', clientSecret: 's', kind: 'Developers' }] });
    const res = await new StreamClient(emu, await token(emu, 'dev', 's')).start();
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ result: {}, message: 'An error has occurred.', status: 403 });
  });

  it('concurrent sessions beyond the cap → 550 No Resource; a slot frees when a session ends', async () => {
    // A manual clock that stands still: no session can time out (and free its slot) meanwhile.
    const emu = await emulator({ concurrentSessions: 2, clock: new ManualClock().now });
    const t = await token(emu);
    const a = new StreamClient(emu, t);
    const b = new StreamClient(emu, t);
    expect((await a.start()).status).toBe(200);
    expect((await b.start()).status).toBe(200);
    const c = new StreamClient(emu, t);
    const refused = await c.start();
    expect(refused.status).toBe(550);
    expect((refused.json as Msg[]).at(-1)!.errorinfo).toEqual({
      code: 550,
      message: 'No Resource',
      level: 'ERROR',
      detail: 'VRG_RESPONSE_SERVICE_UNAVAILABLE',
    });
    await a.command('cancel');
    expect((await c.start()).status).toBe(200);
  });

  it("counts the account's peak of open sessions, from the sessions open at a stats reset", async () => {
    const emu = await emulator({ concurrentSessions: 3, clock: new ManualClock().now });
    const t = await token(emu);
    const [a, b, c] = [1, 2, 3].map(() => new StreamClient(emu, t));
    await a!.start();
    await b!.start();
    await c!.start();
    await a!.command('cancel');
    await b!.command('cancel');
    expect(emu.stats().accounts[0]).toMatchObject({ activeSessions: 1, peakSessions: 3 });
    emu.resetStats();
    expect(emu.stats().accounts[0]).toMatchObject({ activeSessions: 1, peakSessions: 1 });
    await a!.start();
    expect(emu.stats().accounts[0]).toMatchObject({ activeSessions: 2, peakSessions: 2 });
  });
});

describe('fault injection: bursts', () => {
  it('99997 bursts by schedule', async () => {
    const clock = new ManualClock();
    const emu = await emulator({
      clock: clock.now,
      faults: { rateLimitBursts: { schedule: [{ fromSeconds: 0, toSeconds: 0.3 }] } },
      accounts: [{ clientId: 'a', clientSecret: 's', rateLimit: null }],
    });
    const t = await token(emu, 'a', 's');
    expect((await sentiment(emu, t)).json).toMatchObject({ status: 99997 });
    clock.advance(299);
    expect((await sentiment(emu, t)).json).toMatchObject({ status: 99997 });
    clock.advance(1); // 0.3 s after the start: the window is over
    expect((await sentiment(emu, t)).status).toBe(200);
  });

  it('99997 bursts by probability are reproducible from the seed', async () => {
    const pattern = async (seed: number) => {
      const emu = await emulator({
        seed,
        faults: { rateLimitBursts: { probability: 0.5 } },
        accounts: [{ clientId: 'a', clientSecret: 's', rateLimit: null }],
      });
      const t = await token(emu, 'a', 's');
      const out = [];
      for (let i = 0; i < 20; i++) out.push((await sentiment(emu, t)).status);
      return out.join(',');
    };
    const a = await pattern(7);
    expect(await pattern(7)).toBe(a);
    expect(a).toContain('429');
    expect(a).toContain('200');
    expect(await pattern(8)).not.toBe(a);
  });

  for (const code of [550, 552, 600, 651] as const) {
    it(`mid-stream ${code} after N seconds of audio; the session is dead afterwards`, async () => {
      const emu = await emulator({
        speed: 100,
        clock: new ManualClock().now, // standing still: no deadline passes, whatever the machine's speed
        faults: { streamErrors: [{ code, afterAudioSeconds: 0.72, times: 1 }] },
      });
      const t = await token(emu);
      const c = new StreamClient(emu, t);
      await c.start();
      for (let i = 0; i < 3; i++) expect((await c.audio(silence)).status).toBe(204);
      const res = await c.audio(silence);
      expect(res.status).toBe(code);
      const info = (res.json as Msg[]).at(-1)!.errorinfo!;
      expect(info.code).toBe(code);
      expect(info.message).toBe(
        { 550: 'No Resource', 552: 'Network Error', 600: 'Internal Error', 651: 'Session Timeout' }[code],
      );
      expect((await c.audio(silence)).status).toBe(411);
      // `times: 1`: the next session is not hit.
      const d = new StreamClient(emu, t);
      await d.start();
      for (let i = 0; i < 5; i++) expect((await d.audio(silence)).status).toBe(204);
    });
  }
});

describe('fault injection: other faults', () => {
  it('dropped connections, added latency, 5xx with a non-JSON body, early token expiry', async () => {
    // The latency is real time (its lower bound is checked); the token's lifetime is the manual clock's.
    const clock = new ManualClock();
    const emu = await emulator({
      clock: clock.now,
      faults: { dropConnections: { probability: 1, families: ['nlp'] } },
    });
    const t = await token(emu);
    await expect(sentiment(emu, t)).rejects.toThrow();

    emu.setFaults({ latency: { ms: 150, families: ['nlp'] } });
    const began = performance.now();
    expect((await sentiment(emu, t)).status).toBe(200);
    expect(performance.now() - began).toBeGreaterThanOrEqual(145);

    emu.setFaults({ serverErrors: { probability: 1, status: 503, body: 'Service Unavailable' } });
    const res = await sentiment(emu, t);
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toBe('text/html');
    expect(res.text).toBe('Service Unavailable');

    emu.setFaults({ tokenExpiry: { afterSeconds: 0.2 } });
    const fresh = await token(emu);
    expect((await sentiment(emu, fresh)).status).toBe(200);
    clock.advance(199);
    expect((await sentiment(emu, fresh)).status).toBe(200);
    clock.advance(1);
    expect((await sentiment(emu, fresh)).json).toMatchObject({ status: 99998 });

    emu.setFaults({ tokenExpiry: { probability: 1 } });
    const doomed = await token(emu);
    expect((await sentiment(emu, doomed)).status).toBe(401);
    expect(emu.stats().faultsInjected).toMatchObject({ tokenExpiry: 1 });
  });

  it('faults can also be set over HTTP (POST /emulator/faults) and a bad file is refused', async () => {
    const emu = await emulator({});
    const res = await post(
      `${emu.url}/emulator/faults`,
      JSON.stringify({ serverErrors: { probability: 1 } }),
      { 'Content-Type': 'application/json' },
    );
    expect(res.status).toBe(204);
    const t = await post(emu.authUrl, '{}', { 'Content-Type': 'application/json' });
    expect(t.status).toBe(502);
    const bad = await post(
      `${emu.url}/emulator/faults`,
      JSON.stringify({ streamErrors: [{ code: 999 }] }),
      {},
    );
    expect(bad.status).toBe(400);
  });
});

describe('evidence', () => {
  it('request log (JSON lines) and /emulator/stats', async () => {
    const dir = tempDir('emu-log-');
    const path = join(dir, 'requests.jsonl');
    const emu = await emulator({ requestLogPath: path, speed: 100 });
    const t = await token(emu);
    const c = new StreamClient(emu, t);
    await c.start(MULAW_8K);
    await c.audio(silence);
    await c.audio(silence);
    await c.command('stop');
    await sentiment(emu, t);
    const stats = (await getJson(`${emu.url}/emulator/stats`)) as EmulatorStats;
    expect(stats).toMatchObject({
      requests: 6,
      tokensIssued: 1,
      chunks: 2,
      sessions: { started: 1, completed: 1 },
      activeSessions: 0,
    });
    expect(stats.audioSeconds).toBeCloseTo(0.48, 5);
    expect(stats.cpu.share).toBeGreaterThanOrEqual(0);
    await emu.close();
    running.splice(running.indexOf(emu), 1);
    const lines = readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(6);
    const audio = lines.filter((l) => l.chunk !== undefined);
    expect(audio.map((l) => [l.chunk, l.audioSeconds, l.status, l.session])).toEqual([
      [0, 0.24, 204, c.uniqueId],
      [1, 0.48, 204, c.uniqueId],
    ]);
    for (const l of lines) {
      expect(typeof l.time).toBe('string');
      expect(typeof l.endpoint).toBe('string');
      expect(typeof l.ms).toBe('number');
    }
    expect(lines.find((l) => l.endpoint === '/api/dev/nlp/v1/sentiment')).toMatchObject({
      account: 'callpipe-local',
      status: 200,
      code: 0,
    });
    expect(lines.find((l) => (l.messages as string[] | undefined)?.includes('completed'))).toMatchObject({
      session: c.uniqueId,
    });
  });
});
