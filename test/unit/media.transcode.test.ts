import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCallScript } from '../../activities/media/call-script.ts';
import { FfmpegError, MediaCancelledError } from '../../activities/media/errors.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { planRecording } from '../../activities/media/plan.ts';
import { probeRecording } from '../../activities/media/probe.ts';
import { LocalStagingStore, trackKey } from '../../activities/media/staging.ts';
import { expectedBytes } from '../../activities/media/transcode.ts';
import type { ProbeResult } from '../../schemas/media-probe.ts';
import type { SessionPlan } from '../../schemas/plan.ts';
import { decodeDtmfPhrases, decodeMulaw, decodeS16le } from '../helpers/dtmf-decode.ts';
import { makeTempDir, transcodeSessionAudio } from '../helpers/media-fixtures.ts';

const tmp = makeTempDir();
afterAll(() => tmp.cleanup());

/** Phrase start tolerance after resampling, mu-law and framing: a 10 ms hop plus edge effects. */
const START_TOLERANCE_SECONDS = 0.03;

describe('expectedBytes', () => {
  it('is N × 8,000 for mu-law and N × 32,000 for 16 kHz PCM, on the millisecond grid', () => {
    expect(expectedBytes(3000, 'mulaw')).toBe(24_000_000);
    expect(expectedBytes(12.345, 'mulaw')).toBe(98_760);
    expect(expectedBytes(12.345, 'pcm16k')).toBe(395_040);
  });
});

describe('LocalStagingStore', () => {
  it('stores atomically: a failing body leaves no object', async () => {
    const store = new LocalStagingStore(join(tmp.dir, 'atomic'));
    await store.put('a/b.bin', Buffer.from('hello'), { fingerprint: 'f' });
    expect(await store.head('a/b.bin')).toEqual({ size: 5, meta: { fingerprint: 'f' } });
    const failing = Readable.from(
      (async function* () {
        yield Buffer.alloc(10);
        throw new Error('the body failed');
      })(),
    );
    await expect(store.put('a/c.bin', failing, { fingerprint: 'f' })).rejects.toThrow('the body failed');
    expect(await store.exists('a/c.bin')).toBe(false);
    expect(() => store.pathOf('../escape')).toThrow(RangeError);
  });

  it('derives keys from fingerprint, track and format', () => {
    const key = trackKey({ fingerprint: 'sha256:ab', track: 1, format: 'mulaw', prefix: 'staging/' });
    expect(key).toBe('staging/sha256-ab/t1/track.mulaw');
    expect(trackKey({ fingerprint: 'sha256:ab', track: 1, format: 'pcm16k' })).not.toBe(key);
  });
});

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

/** Every session of a source's plan transcoded on its own, in `format`. */
async function stageAll(name: string, format: 'mulaw' | 'pcm16k') {
  const { probe, plan } = sources[name]!;
  return Promise.all(
    plan.sessions.map(async (session) => ({
      session,
      bytes: await transcodeSessionAudio(probe, plan.tracks, session, format),
    })),
  );
}

describe('transcodeStream', () => {
  it.each(['call.wav', 'call.mp3', 'call.m4a', 'call.ogg'])(
    'cuts %s byte-exactly: N s = N × 8,000 bytes',
    async (name) => {
      const staged = await stageAll(name, 'mulaw');
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
    const staged = await stageAll('call48.wav', 'pcm16k');
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
      const staged = await stageAll(name, 'mulaw');
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

  it('reports ffmpeg’s failure on input that is not audio', async () => {
    const bad = join(tmp.dir, 'not-audio.wav');
    writeFileSync(bad, Buffer.alloc(5000, 7));
    const probe = { path: bad, reader: undefined, streamIndex: 0 };
    await expect(
      transcodeSessionAudio(probe, [{ sourceChannels: [0] }], { track: 0, start: 0, end: 1 }),
    ).rejects.toBeInstanceOf(FfmpegError);
  });

  it('is cancelled through its AbortSignal', async () => {
    const { probe } = sources['call.ogg']!;
    const controller = new AbortController();
    controller.abort();
    await expect(
      transcodeSessionAudio(
        probe,
        [{ sourceChannels: [0] }],
        { track: 0, start: 0, end: 60 },
        'mulaw',
        controller.signal,
      ),
    ).rejects.toBeInstanceOf(MediaCancelledError);
  });

  it('mixes a stereo call down to one track with both speakers', async () => {
    const { probe } = sources['call.wav']!;
    const bytes = await transcodeSessionAudio(probe, [{ sourceChannels: [0, 1] }], {
      track: 0,
      start: 0,
      end: 40,
    });
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
