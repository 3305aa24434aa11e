import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MediaError } from '../../activities/media/errors.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { probeRecording } from '../../activities/media/probe.ts';
import { probeResultSchema } from '../../schemas/media-probe.ts';
import type { FixtureScript } from '../../schemas/synthetic-recording.ts';
import { makeTempDir, writeLavfi, writeVideo, writeWav } from '../helpers/media-fixtures.ts';

const tmp = makeTempDir();
afterAll(() => tmp.cleanup());
const at = (name: string) => join(tmp.dir, name);

const SECONDS = 6;
const script: FixtureScript = {
  durationSeconds: SECONDS,
  background: 'noise',
  channels: [{ phrases: [{ id: 12, start: 0.5 }] }, { phrases: [{ id: 123, start: 2 }] }],
};
/** Lossy codecs add or drop a few ms of priming and padding; the decoded length stays this close. */
const LOSSY_TOLERANCE_SECONDS = 0.06;

async function expectMediaError(path: string, kind: string, reason: RegExp) {
  const err = await probeRecording(path).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(MediaError);
  expect((err as MediaError).kind).toBe(kind);
  expect((err as MediaError).message).toMatch(reason);
  // A reason for a person, not a stack trace or ffmpeg's whole log.
  expect((err as MediaError).message.split('\n')).toHaveLength(1);
}

describe('probeRecording: input kinds', () => {
  const cases = [
    { name: 'pcm.wav', rate: 8000, channels: 1, codec: 'pcm_s16le', container: 'wav' },
    { name: 'pcm96.wav', rate: 96000, channels: 2, codec: 'pcm_s16le', container: 'wav' },
    {
      name: 'mulaw.wav',
      rate: 8000,
      channels: 1,
      codec: 'pcm_mulaw',
      container: 'wav',
      wavCodec: 'pcm_mulaw',
    },
    { name: 'alaw.wav', rate: 8000, channels: 2, codec: 'pcm_alaw', container: 'wav', wavCodec: 'pcm_alaw' },
    { name: 'quad.wav', rate: 16000, channels: 4, codec: 'pcm_s16le', container: 'wav' },
    { name: 'call.mp3', rate: 44100, channels: 2, codec: 'mp3', container: 'mp3', lossy: true },
    {
      name: 'call.m4a',
      rate: 48000,
      channels: 2,
      codec: 'aac',
      container: 'mov,mp4,m4a,3gp,3g2,mj2',
      lossy: true,
    },
    { name: 'call.flac', rate: 22050, channels: 1, codec: 'flac', container: 'flac' },
    { name: 'call.ogg', rate: 48000, channels: 2, codec: 'opus', container: 'ogg', lossy: true },
  ] as const;

  beforeAll(async () => {
    await Promise.all(
      cases.map((c) =>
        renderFixture({ ...script, channels: script.channels.slice(0, c.channels) }, at(c.name), {
          sampleRate: c.rate,
          channels: c.channels,
          wavCodec: 'wavCodec' in c ? c.wavCodec : undefined,
        }),
      ),
    );
  });

  it.each(cases)('$name: $codec, $rate Hz, $channels ch', async (c) => {
    const probe = await probeRecording(at(c.name));
    expect(probeResultSchema.parse(probe)).toEqual(probe);
    expect(probe).toMatchObject({
      codec: c.codec,
      container: c.container,
      sampleRate: c.rate,
      channels: c.channels,
      streamIndex: 0,
    });
    expect(probe.hasVideo).toBe(false);
    expect(probe.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    const tolerance = 'lossy' in c ? LOSSY_TOLERANCE_SECONDS : 1e-9;
    expect(Math.abs(probe.durationSeconds - SECONDS)).toBeLessThanOrEqual(tolerance);
  });

  it('reads the audio track of a video file', async () => {
    await writeVideo(at('video.mp4'), 3, at('pcm.wav'));
    const probe = await probeRecording(at('video.mp4'));
    expect(probe).toMatchObject({ codec: 'aac', hasVideo: true, channels: 1, sampleRate: 8000 });
    expect(probe.streamIndex).toBe(1);
    // -shortest ends on a video frame boundary a little after 3 s.
    expect(probe.durationSeconds).toBeGreaterThan(2.9);
    expect(probe.durationSeconds).toBeLessThan(3.5);
  });

  it('trusts the decoded length over an estimated duration (VBR MP3 without a Xing header)', async () => {
    // 5 s of silence then 25 s of loud noise: ffprobe estimates the length from the first frames' bit rate.
    await writeLavfi(
      at('vbr.mp3'),
      ['anullsrc=r=44100:cl=mono:d=5', 'anoisesrc=r=44100:d=25:a=0.5'],
      ['-filter_complex', '[0][1]concat=v=0:a=1', '-c:a', 'libmp3lame', '-q:a', '2', '-write_xing', '0'],
    );
    const probe = await probeRecording(at('vbr.mp3'));
    expect(probe.metadataDurationSeconds).toBeGreaterThan(40);
    expect(Math.abs(probe.durationSeconds - 30)).toBeLessThan(LOSSY_TOLERANCE_SECONDS);
  });

  it('keeps a caller-supplied fingerprint', async () => {
    expect((await probeRecording(at('pcm.wav'), { fingerprint: 'etag:abc' })).fingerprint).toBe('etag:abc');
  });
});

describe('probeRecording: bad inputs', () => {
  it('missing file', () => expectMediaError(at('nope.wav'), 'not-found', /no such file/));

  it('empty file', async () => {
    writeFileSync(at('empty.wav'), '');
    await expectMediaError(at('empty.wav'), 'empty', /empty/);
  });

  it('truncated header', async () => {
    writeWav(at('whole.wav'), { dataBytes: 800 });
    writeFileSync(at('truncated.wav'), readFileSync(at('whole.wav')).subarray(0, 20));
    await expectMediaError(at('truncated.wav'), 'unreadable', /not a readable audio file/);
  });

  it('random bytes', async () => {
    // Deterministic noise that no demuxer recognizes.
    const junk = Buffer.alloc(4096);
    for (let i = 0; i < junk.length; i++) junk[i] = (i * 7919 + 13) % 251;
    writeFileSync(at('junk.m4a'), junk);
    await expectMediaError(at('junk.m4a'), 'unreadable', /not a readable audio file/);
  });

  it('a video with no audio track', async () => {
    await writeVideo(at('silent-video.mp4'), 1);
    await expectMediaError(at('silent-video.mp4'), 'no-audio', /video with no audio track/);
  });

  it('zero duration', async () => {
    writeWav(at('zero.wav'), { dataBytes: 0 });
    await expectMediaError(at('zero.wav'), 'zero-duration', /zero duration/);
  });

  it('an unreadable codec', async () => {
    writeWav(at('codec.wav'), { dataBytes: 8000, formatTag: 0x1234 });
    await expectMediaError(at('codec.wav'), 'unsupported-codec', /codec/);
  });

  it('a rate below 8 kHz', async () => {
    writeWav(at('slow.wav'), { sampleRate: 4000, dataBytes: 8000 });
    await expectMediaError(at('slow.wav'), 'unsupported-rate', /4000 Hz/);
  });
});
