/**
 * What a recognition stream reads of its staged audio: the session's byte range of the object, placed by
 * where the object starts on the recording's clock (a whole track, or the session's own object of runs
 * from before), from the resume grid after a restart.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createAsrActivities } from '../../activities/asr/asr-activities.ts';
import { sessionBytes } from '../../activities/asr/stream-from-resume.ts';
import { ServiceError, type ServiceClient } from '../../service/index.ts';
import { MemoryStore } from './nlp.helpers.ts';

describe('sessionBytes', () => {
  it('is the session’s range of a track, and the whole object of a session’s own', () => {
    expect(sessionBytes({ start: 10, end: 20, audioStart: 0 }, 0)).toEqual({ start: 80_000, end: 159_999 });
    expect(sessionBytes({ start: 10, end: 20, audioStart: 0 }, 40_320)).toEqual({
      start: 120_320,
      end: 159_999,
    });
    expect(sessionBytes({ start: 10, end: 20, audioStart: 10 }, 0)).toEqual({ start: 0, end: 79_999 });
    // Absent: an object of the session alone.
    expect(sessionBytes({ start: 10.005, end: 20 }, 8)).toEqual({ start: 8, end: 79_959 });
  });
});

/** Staged audio served by byte range, as S3 does: `end` inclusive, clamped to the object. */
function rangeStore(audio: Record<string, Buffer>) {
  const reads: { key: string; start?: number; end?: number }[] = [];
  const store = Object.assign(new MemoryStore(), {
    async getStream(key: string, options?: { start?: number; end?: number }): Promise<Readable> {
      reads.push({ key, start: options?.start, end: options?.end });
      const bytes = audio[key]!;
      const end = options?.end === undefined ? bytes.length : options.end + 1;
      return Readable.from([bytes.subarray(options?.start ?? 0, end)]);
    },
  });
  return { store, reads };
}

/**
 * A service that reads every byte it is given; its first stream fails after a final result ending at
 * `failAfter` (seconds on the recording's clock), the next one ends well.
 */
function readingService(failAfter: number) {
  const heard: Buffer[] = [];
  let streams = 0;
  const service = {
    recognizeStream(opts: Parameters<ServiceClient['recognizeStream']>[0]) {
      const first = streams++ === 0;
      const done = (async () => {
        const chunks: Buffer[] = [];
        for await (const c of opts.audio as AsyncIterable<Buffer>) chunks.push(Buffer.from(c));
        heard.push(Buffer.concat(chunks));
        const at = opts.startOffsetSeconds ?? 0;
        if (first) {
          opts.callbacks?.onFinal?.({
            startSeconds: failAfter - 1,
            endSeconds: failAfter,
            text: 'one',
            alternatives: [],
          } as never);
          throw new ServiceError({ kind: 'transient', message: 'lost' });
        }
        const seconds = Buffer.concat(chunks).length / 8000;
        return { audioSecondsSent: seconds, cost: { requests: Math.ceil(seconds / 0.24) + 2 }, at };
      })();
      return { done };
    },
  } as unknown as ServiceClient;
  return { service, heard };
}

describe('a session read from its track', () => {
  // A 30-s track whose every byte says where it is (mod 251), so any slice can be told apart.
  const track = Buffer.from(Array.from({ length: 30 * 8000 }, (_, i) => i % 251));

  it('streams exactly the session’s bytes, and after a restart from the resume grid', async () => {
    const { store, reads } = rangeStore({ 'audio/track.mulaw': track });
    const { service, heard } = readingService(15.1);
    const asr = createAsrActivities({ service, store, slowestPace: 100, model: 'x', restartDelayMs: 1 });
    const input = {
      callId: 'call-1',
      session: 2,
      audioKey: 'audio/track.mulaw',
      audioStart: 0,
      start: 10,
      end: 20,
      resultKey: 'sessions/0002.json',
      maxRestarts: 3,
    };
    const out = await asr.recognizeSession(input);
    expect(out.restarts).toBe(1);
    expect(heard[0]).toEqual(track.subarray(80_000, 160_000));
    // Resumed at 15.1 s, on the session's 240-ms grid: 21 requests in, at 15.04 s.
    expect(heard[1]).toEqual(track.subarray(120_320, 160_000));
    expect(reads.map((r) => [r.start, r.end])).toEqual([
      [80_000, 159_999],
      [120_320, 159_999],
    ]);
  });

  it('reads a session’s own object (a run from before) whole, as before', async () => {
    const own = track.subarray(80_000, 160_000);
    const { store } = rangeStore({ 'audio/0002.mulaw': own });
    const { service, heard } = readingService(11);
    const asr = createAsrActivities({ service, store, slowestPace: 100, model: 'x', restartDelayMs: 1 });
    await asr.recognizeSession({
      callId: 'call-1',
      session: 2,
      audioKey: 'audio/0002.mulaw',
      start: 10,
      end: 20,
      resultKey: 'sessions/0002.json',
      maxRestarts: 3,
    });
    expect(heard[0]).toEqual(own);
    expect(heard[1]).toEqual(own.subarray(Math.round(0.96 * 8000)));
  });
});
