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
  it('spaces sends by 240 ms ÷ speed, measured from the previous send', async () => {
    const pacer = new Pacer(240, 4);
    expect(pacer.intervalMs).toBe(60);
    const times: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      await pacer.wait();
      times.push(performance.now());
      pacer.sent();
    }
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(59.5);
    expect(times.at(-1)! - times[0]!).toBeLessThan(5 * 60 + 60);
  });
  it('does not wait when the previous send is already an interval ago (no catch-up burst either)', () => {
    let now = 0;
    const pacer = new Pacer(240, 1, () => now);
    expect(pacer.delayMs()).toBe(0);
    pacer.sent();
    now = 100;
    expect(pacer.delayMs()).toBe(140);
    now = 1000; // a slow response
    expect(pacer.delayMs()).toBe(0);
    pacer.sent();
    now = 1001;
    expect(pacer.delayMs()).toBe(239);
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
