/**
 * Recordings that try to make ffmpeg read something else, or never finish: a playlist named `.wav`
 * that points at a FIFO, a concat list, a FIFO as the recording itself, an input that stalls. Each
 * fails with a reason; none holds its caller.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MediaError } from '../../activities/media/errors.ts';
import { FfmpegError } from '../../activities/media/errors.ts';
import { runFfmpeg } from '../../activities/media/ffmpeg.ts';
import {
  allowedDemuxers,
  demuxersOf,
  refusedContent,
  refusedDemuxerOf,
} from '../../activities/media/input-policy.ts';
import { framecrcSeconds } from '../../activities/media/length-check.ts';
import { inputArgs, plainInput } from '../../activities/media/media-input.ts';
import { probeRecording } from '../../activities/media/probe.ts';
import { timeBoundMs, withinTimeBound } from '../../activities/media/time-bound.ts';
import {
  MEDIA_ACTIVITY_TIMEOUT_SECONDS,
  PROBE_MAX_BOUND_MS,
  mediaActivityTimeoutSeconds,
} from '../../schemas/media-time-bounds.ts';
import { makeTempDir, writeLavfi } from '../helpers/media-fixtures.ts';

const tmp = makeTempDir();
afterAll(() => tmp.cleanup());
const at = (name: string) => join(tmp.dir, name);
const fifo = (name: string) => {
  execFileSync('mkfifo', [at(name)]);
  return at(name);
};
/** An HLS playlist whose one segment is `segment`. */
const playlist = (segment: string) =>
  `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n${segment}\n#EXT-X-ENDLIST\n`;

async function failure(run: Promise<unknown>): Promise<unknown> {
  return run.then(
    () => undefined,
    (err: unknown) => err,
  );
}

describe('what ffmpeg may open on a recording', () => {
  it('refuses an HLS playlist named .wav whose segment is a FIFO, naming what it is', async () => {
    const path = at('playlist.wav');
    writeFileSync(path, playlist(fifo('segment.ts')));
    const err = await failure(probeRecording(path, { name: 'calls/playlist.wav' }));
    expect(err).toBeInstanceOf(MediaError);
    expect((err as MediaError).kind).toBe('refused-reference');
    expect((err as MediaError).message).toMatch(/HLS\/M3U playlist, which names other files/);
  });

  it('keeps ffmpeg from a demuxer that opens other files even when the content check is passed by', async () => {
    const segment = at('segment.wav');
    await writeLavfi(segment, 'sine=d=1:r=8000');
    const path = at('listed.m3u8');
    writeFileSync(path, playlist(segment));
    const err = await failure(framecrcSeconds(plainInput(path, undefined), { copy: true }));
    expect(err).toBeInstanceOf(FfmpegError);
    expect(refusedDemuxerOf((err as FfmpegError).stderrTail)).toMatch(
      /^its format \(hls\) reads other files/,
    );
  });

  it('refuses concat lists, SDP and XML manifests by content, and lets binary audio through', () => {
    expect(refusedContent(Buffer.from("ffconcat version 1.0\nfile '/etc/passwd'\n"))).toMatch(/concat list/);
    expect(refusedContent(Buffer.from('v=0\no=- 0 0 IN IP4 127.0.0.1\n'))).toMatch(/SDP/);
    expect(refusedContent(Buffer.from('<?xml version="1.0"?><MPD></MPD>'))).toMatch(/XML/);
    expect(refusedContent(Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'))).toBeUndefined();
  });

  it('allows the installed demuxers except those that follow references', () => {
    const allowed = allowedDemuxers().split(',');
    expect(allowed).toEqual(
      expect.arrayContaining(['wav', 'flac', 'mov', 'matroska', 'ogg', 'mulaw', 'g722']),
    );
    for (const name of ['hls', 'concat', 'dash', 'image2', 'sdp', 'rtsp', 'lavfi', 'vobsub']) {
      expect(allowed).not.toContain(name);
    }
    const listing =
      ' D. = Demuxing supported\n --\n D  aac  raw ADTS AAC\n DE wav  WAV\n D  mov,mp4,m4a,3gp,3g2,mj2 QuickTime\n';
    expect(demuxersOf(listing)).toEqual(['aac', 'wav', 'mov,mp4,m4a,3gp,3g2,mj2']);
  });

  it('refuses a FIFO given as the recording itself without opening it', async () => {
    const err = await failure(probeRecording(fifo('recording.wav')));
    expect(err).toBeInstanceOf(MediaError);
    expect((err as MediaError).kind).toBe('refused-reference');
    expect((err as MediaError).message).toMatch(/not a regular file/);
  });
});

describe('wall-clock bounds of tool runs', () => {
  it('ends a run whose input never comes with a timed-out reason, and kills the tool', async () => {
    const path = fifo('stalled.ulaw');
    const input = { ...plainInput(path, { format: 'mulaw', options: {}, repair: null }) };
    const run = withinTimeBound('the decode pass', path, 500, undefined, (signal) =>
      runFfmpeg(['-v', 'error', ...inputArgs(input), '-f', 'null', '-'], { signal }),
    );
    const err = await failure(run);
    expect(err).toBeInstanceOf(MediaError);
    expect((err as MediaError).kind).toBe('timed-out');
    expect((err as MediaError).message).toMatch(/the decode pass got no answer within 1 s/);
  });

  it('leaves a cancellation a cancellation', async () => {
    const path = fifo('cancelled.ulaw');
    const input = plainInput(path, { format: 'mulaw', options: {}, repair: null });
    const controller = new AbortController();
    const run = withinTimeBound('ffprobe', path, 60_000, controller.signal, (signal) =>
      runFfmpeg(['-v', 'error', ...inputArgs(input), '-f', 'null', '-'], { signal }),
    );
    controller.abort();
    const err = await failure(run);
    expect(err).not.toBeInstanceOf(MediaError);
    expect((err as Error).name).toBe('MediaCancelledError');
  });

  it("never lets an activity's own timeout come before its run's bound (Temporal would retry the stall)", () => {
    // A 20-hour FLAC of 14 MB: its plan's decode is bounded at about 45 minutes, past the ordinary 15.
    const long = { sizeBytes: 14 * 2 ** 20, audioSeconds: 20 * 3600 };
    expect(timeBoundMs(long)).toBeGreaterThan(MEDIA_ACTIVITY_TIMEOUT_SECONDS * 1000);
    expect(mediaActivityTimeoutSeconds(long) * 1000).toBeGreaterThan(timeBoundMs(long));
    expect(mediaActivityTimeoutSeconds({ sizeBytes: 2 ** 20, audioSeconds: 600 })).toBe(
      MEDIA_ACTIVITY_TIMEOUT_SECONDS,
    );
    // The probe's runs are capped under the probe's own timeout, whatever the recording claims.
    expect(PROBE_MAX_BOUND_MS).toBeLessThan(MEDIA_ACTIVITY_TIMEOUT_SECONDS * 1000);
  });

  it('scales with the recording: a floor, then its length and size', () => {
    const bounds = { floorSeconds: 10, secondsPerAudioHour: 60, secondsPerMebibyte: 1 };
    expect(timeBoundMs({}, bounds)).toBe(10_000);
    expect(timeBoundMs({ audioSeconds: 7200, sizeBytes: 5 * 2 ** 20 }, bounds)).toBe(135_000);
    expect(timeBoundMs({ audioSeconds: Number.NaN }, bounds)).toBe(10_000);
  });
});
