import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { audioOffset, chunkBytes, rechunk } from '../../service/audio.ts';
import { Pacer } from '../../service/pacer.ts';
import { backoffDelay, withRetry } from '../../service/retry.ts';
import { ServiceError } from '../../service/errors.ts';
import { CostMeter } from '../../service/cost.ts';

async function collect(it: AsyncIterable<Buffer>): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const b of it) out.push(b);
  return out;
}

describe('chunk sizes (spec 02: 240 ms per request)', () => {
  it('1,920 bytes of 8 kHz mu-law, 3,840 of 8 kHz PCM, 7,680 of 16 kHz PCM', () => {
    expect(chunkBytes('mulaw', 8000)).toBe(1920);
    expect(chunkBytes('pcm', 8000)).toBe(3840);
    expect(chunkBytes('pcm', 16000)).toBe(7680);
  });
});

describe('rechunk', () => {
  it('cuts odd-sized pieces from a Readable into exact chunks, the last shorter', async () => {
    const data = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));
    const pieces = [
      data.subarray(0, 7),
      data.subarray(7, 3000),
      data.subarray(3000, 3001),
      data.subarray(3001),
    ];
    const chunks = await collect(rechunk(Readable.from(pieces), 1920));
    expect(chunks.map((c) => c.byteLength)).toEqual([1920, 1920, 1160]);
    expect(Buffer.concat(chunks).equals(data)).toBe(true);
  });
  it('never splits a PCM sample: a trailing odd byte is dropped', async () => {
    const chunks = await collect(rechunk([new Uint8Array(7681)], 7680, 2));
    expect(chunks.map((c) => c.byteLength)).toEqual([7680]);
  });
  it('yields nothing for empty audio', async () => {
    expect(await collect(rechunk([new Uint8Array(0)], 1920))).toEqual([]);
  });
});

describe('audioOffset (resume)', () => {
  it('rounds down to a whole sample and returns the exact seconds of the bytes', () => {
    expect(audioOffset(12.3456789, 'mulaw', 8000)).toEqual({ bytes: 98765, seconds: 98765 / 8000 });
    expect(audioOffset(1.5, 'pcm', 16000)).toEqual({ bytes: 48000, seconds: 1.5 });
    expect(audioOffset(-1, 'mulaw', 8000)).toEqual({ bytes: 0, seconds: 0 });
  });
});

describe('Pacer', () => {
  it('keeps 240 ms ÷ speed per request on average: late timers and round trips do not accumulate', () => {
    let now = 0;
    const pacer = new Pacer(240, 80, () => now); // 3 ms per request
    const sends: number[] = [];
    for (let i = 0; i < 200; i += 1) {
      const delay = pacer.delayMs();
      if (delay > 0) now += Math.ceil(delay) + 1; // a whole-millisecond timer that fires 1 ms late
      sends.push(now);
      pacer.sent();
      now += 1; // the round trip
    }
    // Never ahead of the schedule: request n leaves at least n intervals after the first.
    sends.forEach((t, n) => expect(t).toBeGreaterThanOrEqual(n * 3));
    // Spacing each send from the previous one made this 4 ms per request; the schedule keeps 3.
    expect((sends.at(-1)! - sends[0]!) / 199).toBeLessThanOrEqual(3.01);
  });
  it('never runs ahead of the wall clock since the first send', () => {
    let now = 0;
    const pacer = new Pacer(240, 1, () => now);
    expect(pacer.delayMs()).toBe(0);
    pacer.sent();
    now = 100;
    expect(pacer.delayMs()).toBe(140);
    now = 240;
    pacer.sent();
    now = 250; // a quick response: the next request waits for its slot, not for an interval after it
    expect(pacer.delayMs()).toBe(230);
  });
  it('catches up after a slow response, but at most maxCatchUpChunks requests back to back', () => {
    let now = 0;
    const pacer = new Pacer(240, 1, () => now, 4, 0);
    pacer.sent(); // due: 240
    now = 700; // the answer took 700 ms: two slots missed, within the bound
    expect(pacer.delayMs()).toBe(0);
    pacer.sent(); // due: 480
    now = 710;
    expect(pacer.delayMs()).toBe(0);
    pacer.sent(); // due: 720
    now = 715;
    expect(pacer.delayMs()).toBe(5); // caught up: back on the original schedule
    now = 720;
    pacer.sent(); // due: 960
    now = 3000; // a stall of 2 s: more than 4 intervals behind, so the debt is forgiven
    expect(pacer.delayMs()).toBe(0);
    pacer.sent(); // re-anchored: due 3240
    now = 3001;
    expect(pacer.delayMs()).toBe(239);
  });
  it('above real time, catches up any stall shorter than minCatchUpMs', () => {
    // Speed 20: an interval is 12 ms, 4 of them 48 ms; a 200-ms pause (a GC) is still caught up.
    let now = 0;
    const pacer = new Pacer(240, 20, () => now, 4, 250);
    pacer.sent(); // due: 12
    now = 200;
    pacer.sent(); // 188 ms behind: kept, due 24
    expect(pacer.delayMs()).toBe(0);
    now = 201;
    pacer.sent(); // due 36
    // A stall past the floor is forgiven as before: re-anchored on this send.
    now = 600;
    pacer.sent();
    now = 601;
    expect(pacer.delayMs()).toBe(11);
  });
  it('rejects a non-positive speed', () => {
    expect(() => new Pacer(240, 0)).toThrow(RangeError);
  });
});

describe('withRetry (opt-in, outside Temporal)', () => {
  it('retries rateLimited and transient errors with backoff, counting retries', async () => {
    const meter = new CostMeter();
    const delays: number[] = [];
    let n = 0;
    const result = await withRetry(
      async () => {
        n += 1;
        if (n < 3) throw new ServiceError({ kind: n === 1 ? 'rateLimited' : 'transient', message: 'x' });
        return 'ok';
      },
      { baseDelayMs: 10, meter, random: () => 0.5, onRetry: (i) => delays.push(i.delayMs) },
    );
    expect(result).toBe('ok');
    expect(meter.retries).toBe(2);
    expect(delays).toEqual([5, 10]);
  });
  it('does not retry invalid, auth, quota or session errors', async () => {
    for (const kind of ['invalid', 'auth', 'quota', 'session'] as const) {
      let n = 0;
      await expect(
        withRetry(async () => {
          n += 1;
          throw new ServiceError({ kind, message: 'x' });
        }),
      ).rejects.toThrow();
      expect(n).toBe(1);
    }
  });
  it('gives up after the attempts', async () => {
    let n = 0;
    await expect(
      withRetry(
        async () => {
          n += 1;
          throw new ServiceError({ kind: 'transient', message: 'x' });
        },
        { attempts: 3, baseDelayMs: 1 },
      ),
    ).rejects.toThrow();
    expect(n).toBe(3);
  });
  it('full jitter within the ceiling, the service hint as a floor', () => {
    expect(backoffDelay(3, { baseDelayMs: 100, random: () => 0.999 })).toBe(799);
    expect(backoffDelay(20, { baseDelayMs: 100, maxDelayMs: 1000, random: () => 0.5 })).toBe(500);
    expect(backoffDelay(0, { baseDelayMs: 100, random: () => 0 }, 2500)).toBe(2500);
  });
});
