import { plainInput } from '../../activities/media/media-input.ts';
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCallScript } from '../../activities/media/call-script.ts';
import { FfmpegError, MediaCancelledError, MediaLengthError } from '../../activities/media/errors.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { planRecording } from '../../activities/media/plan.ts';
import { probeRecording } from '../../activities/media/probe.ts';
import { LocalStagingStore, stagingKey } from '../../activities/media/staging.ts';
import {
  ExactLengthStream,
  expectedBytes,
  transcodeSession,
  transcodeStream,
} from '../../activities/media/transcode.ts';
import type { ProbeResult } from '../../schemas/media-probe.ts';
import type { SessionPlan } from '../../schemas/plan.ts';
import { decodeDtmfPhrases, decodeMulaw, decodeS16le } from '../helpers/dtmf-decode.ts';
import { makeTempDir, sessionTranscodeInput } from '../helpers/media-fixtures.ts';

const tmp = makeTempDir();
afterAll(() => tmp.cleanup());

/** Phrase start tolerance after resampling, mu-law and framing: a 10 ms hop plus edge effects. */
const START_TOLERANCE_SECONDS = 0.03;

const rangeOf = (probe: ProbeResult) => ({
  path: probe.path,
  streamIndex: probe.streamIndex,
  sourceChannels: [0],
});

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('expectedBytes', () => {
  it('is N × 8,000 for mu-law and N × 32,000 for 16 kHz PCM, on the millisecond grid', () => {
    expect(expectedBytes(3000, 'mulaw')).toBe(24_000_000);
    expect(expectedBytes(12.345, 'mulaw')).toBe(98_760);
    expect(expectedBytes(12.345, 'pcm16k')).toBe(395_040);
  });
});

describe('ExactLengthStream', () => {
  it('passes exactly the expected bytes and fails short or long streams', async () => {
    const ok = new ExactLengthStream(6, 'x');
    await expect(
      collect(Readable.from([Buffer.from('abc'), Buffer.from('def')]).pipe(ok)),
    ).resolves.toHaveLength(6);
    await expect(
      pipeline(Readable.from([Buffer.from('abc')]), new ExactLengthStream(6, 'x')),
    ).rejects.toBeInstanceOf(MediaLengthError);
    await expect(pipeline(Readable.from([Buffer.alloc(7)]), new ExactLengthStream(6, 'x'))).rejects.toThrow(
      /expected 6 bytes, got 7/,
    );
  });
});

describe('LocalStagingStore', () => {
  it('stores atomically: a failing body leaves no object', async () => {
    const store = new LocalStagingStore(join(tmp.dir, 'atomic'));
    await store.put('a/b.bin', Buffer.from('hello'), { fingerprint: 'f' });
    expect(await store.head('a/b.bin')).toEqual({ size: 5, meta: { fingerprint: 'f' } });
    const failing = new ExactLengthStream(4, 'x');
    const feeding = pipeline(Readable.from([Buffer.alloc(10)]), failing).catch((err: unknown) => err);
    await expect(store.put('a/c.bin', failing, { fingerprint: 'f' })).rejects.toBeInstanceOf(
      MediaLengthError,
    );
    expect(await feeding).toBeInstanceOf(MediaLengthError);
    expect(await store.exists('a/c.bin')).toBe(false);
    expect(() => store.pathOf('../escape')).toThrow(RangeError);
  });

  it('derives keys from fingerprint, track, range and format', () => {
    const key = stagingKey({
      fingerprint: 'sha256:ab',
      track: 1,
      start: 2.5,
      end: 10,
      format: 'mulaw',
      prefix: 'staging/',
    });
    expect(key).toBe('staging/sha256-ab/t1/000002500-000010000.mulaw');
    expect(
      stagingKey({ fingerprint: 'sha256:ab', track: 1, start: 2.5, end: 10, format: 'pcm16k' }),
    ).not.toBe(key);
  });
});

describe('transcodeSession', () => {
  const sources: Record<string, { probe: ProbeResult; plan: SessionPlan }> = {};
  const script = generateCallScript({ durationSeconds: 75, seed: 42 });

  beforeAll(async () => {
    // Stereo calls at 44.1 and 48 kHz, and compressed ones, cut into sessions of at most 30 s.
    for (const [name, rate] of [
      ['call.wav', 44100],
      ['call48.wav', 48000],
      ['call.mp3', 48000],
      ['call.m4a', 44100],
      ['call.ogg', 48000],
    ] as const) {
      const path = join(tmp.dir, name);
      await renderFixture(script, path, { sampleRate: rate });
      const probe = await probeRecording(path);
      sources[name] = {
        probe,
        plan: await planRecording(probe, { maxSessionSeconds: 30, searchWindowSeconds: 10 }),
      };
    }
  });

  async function stageAll(name: string, format: 'mulaw' | 'pcm16k', store: LocalStagingStore) {
    const { probe, plan } = sources[name]!;
    return Promise.all(
      plan.sessions.map(async (s) => {
        const staged = await transcodeSession(sessionTranscodeInput(probe, plan.tracks, s, format), {
          store,
          keyPrefix: 'staging/',
        });
        return { session: s, staged, bytes: await readFile(store.pathOf(staged.key)) };
      }),
    );
  }

  it.each(['call.wav', 'call.mp3', 'call.m4a', 'call.ogg'])(
    'cuts %s byte-exactly: N s = N × 8,000 bytes',
    async (name) => {
      const store = new LocalStagingStore(join(tmp.dir, `exact-${name}`));
      const staged = await stageAll(name, 'mulaw', store);
      expect(staged.length).toBeGreaterThanOrEqual(6);
      for (const { session, bytes } of staged) {
        expect(bytes.length).toBe(Math.round((session.end - session.start) * 1000) * 8);
      }
      // Per track, the sessions add up to the whole recording.
      const total = staged.filter((s) => s.session.track === 0).reduce((n, s) => n + s.bytes.length, 0);
      expect(total).toBe(Math.round(sources[name]!.plan.source.durationSeconds * 1000) * 8);
    },
  );

  it('writes 16 kHz s16le with N × 32,000 bytes', async () => {
    const store = new LocalStagingStore(join(tmp.dir, 'pcm16k'));
    const staged = await stageAll('call48.wav', 'pcm16k', store);
    for (const { session, bytes } of staged)
      expect(bytes.length).toBe(Math.round((session.end - session.start) * 1000) * 32);
    const track0 = staged.filter((s) => s.session.track === 0);
    const phrases = track0.flatMap(({ session, bytes }) =>
      decodeDtmfPhrases(decodeS16le(bytes), 16000).map((p) => ({ id: p.id, start: p.start + session.start })),
    );
    expect(phrases.map((p) => p.id)).toEqual(script.channels[0]!.phrases.map((p) => p.id));
  });

  it.each(['call.wav', 'call48.wav'])(
    'round-trips DTMF after mu-law at 8 kHz from a stereo %s (44.1 / 48 kHz)',
    async (name) => {
      const store = new LocalStagingStore(join(tmp.dir, `dtmf-${name}`));
      const staged = await stageAll(name, 'mulaw', store);
      const { plan } = sources[name]!;
      expect(plan.tracks.map((t) => t.speaker)).toEqual(['agent', 'customer']);
      for (const track of plan.tracks) {
        const decoded = staged
          .filter((s) => s.session.track === track.track)
          .flatMap(({ session, bytes }) =>
            decodeDtmfPhrases(decodeMulaw(bytes), 8000).map((p) => ({
              id: p.id,
              start: p.start + session.start,
            })),
          );
        const expected = script.channels[track.track]!.phrases;
        expect(expected.length).toBeGreaterThan(5);
        expect(decoded.map((p) => p.id)).toEqual(expected.map((p) => p.id));
        decoded.forEach((p, i) =>
          expect(Math.abs(p.start - expected[i]!.start)).toBeLessThan(START_TOLERANCE_SECONDS),
        );
      }
    },
  );

  it('does not redo a session already staged with the same fingerprint, and redoes it for another', async () => {
    const store = new LocalStagingStore(join(tmp.dir, 'reuse'));
    const { probe, plan } = sources['call.wav']!;
    const s = plan.sessions[0]!;
    const input = {
      path: probe.path,
      fingerprint: probe.fingerprint,
      streamIndex: 0,
      track: s.track,
      sourceChannels: [0],
      start: s.start,
      end: s.end,
      format: 'mulaw' as const,
    };
    const first = await transcodeSession(input, { store });
    const second = await transcodeSession(input, { store });
    expect(first.reused).toBe(false);
    expect(second).toEqual({ ...first, reused: true });
    const other = await transcodeSession({ ...input, fingerprint: 'sha256:other' }, { store });
    expect(other.reused).toBe(false);
    expect(other.key).not.toBe(first.key);
    // A first attempt does not look (no HEAD): it transcodes again, to the same key and bytes.
    const heads: string[] = [];
    const counted = Object.assign(Object.create(store) as LocalStagingStore, {
      head: (key: string) => (heads.push(key), store.head(key)),
    });
    const fresh = await transcodeSession(input, { store: counted, mayExist: false });
    expect(heads).toEqual([]);
    expect(fresh).toEqual({ ...first, reused: false });
    expect(await store.head(first.key)).toMatchObject({ size: first.bytes });
  });

  it('fails with the store’s error, promptly, when the upload fails mid-stream', async () => {
    const { probe } = sources['call.wav']!;
    const failing: LocalStagingStore = Object.assign(new LocalStagingStore(join(tmp.dir, 'failing')), {
      async put(_key: string, body: Readable | Buffer) {
        if (Buffer.isBuffer(body)) throw new Error('no');
        for await (const _chunk of body) throw new Error('S3 went away');
      },
    });
    const input = {
      ...rangeOf(probe),
      fingerprint: probe.fingerprint,
      track: 0,
      start: 0,
      end: 60,
      format: 'mulaw' as const,
    };
    await expect(transcodeSession(input, { store: failing })).rejects.toThrow('S3 went away');
    expect(await failing.exists(stagingKey(input))).toBe(false);
  });

  it('reports ffmpeg’s failure, not a length error, and stores nothing', async () => {
    const store = new LocalStagingStore(join(tmp.dir, 'ffmpeg-fails'));
    const bad = join(tmp.dir, 'not-audio.wav');
    writeFileSync(bad, Buffer.alloc(5000, 7));
    const input = {
      path: bad,
      streamIndex: 0,
      sourceChannels: [0],
      fingerprint: 'x',
      track: 0,
      start: 0,
      end: 1,
      format: 'mulaw' as const,
    };
    await expect(transcodeSession(input, { store })).rejects.toBeInstanceOf(FfmpegError);
    expect(await store.exists(stagingKey(input))).toBe(false);
  });

  it('is cancelled through its AbortSignal', async () => {
    const { probe } = sources['call.ogg']!;
    const controller = new AbortController();
    controller.abort();
    const input = {
      ...rangeOf(probe),
      fingerprint: probe.fingerprint,
      track: 0,
      start: 0,
      end: 60,
      format: 'mulaw' as const,
    };
    const store = new LocalStagingStore(join(tmp.dir, 'cancelled'));
    await expect(transcodeSession(input, { store, signal: controller.signal })).rejects.toBeInstanceOf(
      MediaCancelledError,
    );
    expect(await store.exists(stagingKey(input))).toBe(false);
  });

  it('mixes a stereo call down to one track with both speakers', async () => {
    const { probe } = sources['call.wav']!;
    const proc = transcodeStream({
      input: plainInput(probe.path, undefined),
      sourceChannels: [0, 1],
      start: 0,
      end: 40,
      format: 'mulaw',
    });
    const [bytes] = await Promise.all([collect(proc.stdout), proc.done]);
    expect(bytes.length).toBe(320_000);
    const ids = decodeDtmfPhrases(decodeMulaw(bytes), 8000).map((p) => p.id);
    const expected = script.channels
      .flatMap((c) => c.phrases)
      .filter((p) => p.start + 1 < 40)
      .sort((a, b) => a.start - b.start)
      .map((p) => p.id);
    expect(ids).toEqual(expected);
  });
});
