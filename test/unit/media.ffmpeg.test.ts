import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createMediaActivities } from '../../activities/media/media-activities.ts';
import { toActivityFailure, withFailureBoundary } from '../../activities/failure-boundary.ts';
import {
  FfmpegError,
  MediaCancelledError,
  MediaError,
  MediaToolMissingError,
} from '../../activities/media/errors.ts';
import { runFfmpeg, runFfprobe, spawnFfmpeg } from '../../activities/media/ffmpeg.ts';
import { generateCallScript } from '../../activities/media/call-script.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { LocalStagingStore } from '../../activities/media/staging.ts';
import { makeTempDir, writeWav } from '../helpers/media-fixtures.ts';

const tmp = makeTempDir();
afterAll(() => tmp.cleanup());
const savedFfmpeg = process.env.CALLPIPE_FFMPEG;
afterEach(() => {
  if (savedFfmpeg === undefined) delete process.env.CALLPIPE_FFMPEG;
  else process.env.CALLPIPE_FFMPEG = savedFfmpeg;
});

describe('ffmpeg wrapper', () => {
  it('maps a failing run to FfmpegError with the exit code and the stderr tail', async () => {
    const err = await runFfmpeg([
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'nosuchfilter',
      '-f',
      'null',
      '-',
    ]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FfmpegError);
    expect((err as FfmpegError).exitCode).not.toBe(0);
    expect((err as FfmpegError).stderrTail).toMatch(/nosuchfilter|No such filter/i);
    expect((err as FfmpegError).message).toMatch(/^ffmpeg exited with code \d+: /);
    expect(toActivityFailure(err)).toMatchObject({ type: 'FfmpegError', nonRetryable: false });
  });

  it('passes file names as arguments, never through a shell', async () => {
    const path = join(tmp.dir, 'a name; with $(shell) `chars`.wav');
    writeWav(path, { dataBytes: 1600 });
    const json = JSON.parse(
      await runFfprobe(['-v', 'error', '-show_entries', 'stream=codec_name', '-of', 'json', path]),
    ) as {
      streams: { codec_name: string }[];
    };
    expect(json.streams[0]!.codec_name).toBe('pcm_s16le');
  });

  it('cancels a running ffmpeg through its AbortSignal', async () => {
    const controller = new AbortController();
    // An endless source: only the cancellation can end it (so no bound on how long that takes is needed).
    const run = runFfmpeg(['-v', 'error', '-re', '-f', 'lavfi', '-i', 'anullsrc', '-f', 'null', '-'], {
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 200);
    await expect(run).rejects.toBeInstanceOf(MediaCancelledError);
    // Already cancelled: nothing starts.
    const proc = spawnFfmpeg(['-f', 'lavfi', '-i', 'anullsrc', '-f', 'null', '-'], {
      signal: controller.signal,
    });
    await expect(proc.done).rejects.toBeInstanceOf(MediaCancelledError);
  });

  it('reports a missing binary as MediaToolMissingError', async () => {
    process.env.CALLPIPE_FFMPEG = join(tmp.dir, 'no-such-ffmpeg');
    const err = await runFfmpeg(['-version']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MediaToolMissingError);
    // Another worker may have the tool: retried (schemas/retry-table.ts).
    expect(toActivityFailure(err)).toMatchObject({ type: 'MediaToolMissingError', nonRetryable: false });
  });

  it('streams stdout with backpressure and stdin from a buffer', async () => {
    // 1 s of 8 kHz s16le in, mu-law out: exactly 8,000 bytes.
    const proc = spawnFfmpeg(
      [
        '-v',
        'error',
        '-f',
        's16le',
        '-ar',
        '8000',
        '-ac',
        '1',
        '-i',
        'pipe:0',
        '-c:a',
        'pcm_mulaw',
        '-f',
        'mulaw',
        'pipe:1',
      ],
      {
        stdin: Buffer.alloc(16000),
      },
    );
    const chunks: Buffer[] = [];
    for await (const chunk of proc.stdout) chunks.push(chunk as Buffer);
    await proc.done;
    expect(Buffer.concat(chunks).length).toBe(8000);
  });
});

describe('createMediaActivities', () => {
  it('probes, plans and stages the tracks with small JSON in and out', async () => {
    const path = join(tmp.dir, 'call.wav');
    await renderFixture(generateCallScript({ durationSeconds: 90, seed: 6 }), path, { sampleRate: 16000 });
    const store = new LocalStagingStore(join(tmp.dir, 'staging'));
    const media = createMediaActivities({ store, planDefaults: { maxSessionSeconds: 40 } });
    const probe = await media.probeRecording({ path });
    const plan = await media.planRecording({ path, probe, stageTracksUnder: 'staging/call/' });
    expect(JSON.stringify(plan).length).toBeLessThan(10_000);
    expect(Math.max(...plan.sessions.map((s) => s.end - s.start))).toBeLessThanOrEqual(40);
    expect(plan.stagedTracks!.map((t) => t.track)).toEqual(plan.tracks.map((t) => t.track));
    for (const t of plan.stagedTracks!) {
      expect(t.key.startsWith('staging/call/')).toBe(true);
      expect((await store.head(t.key))!.size).toBe(Math.round(plan.source.durationSeconds * 1000) * 8);
    }
  });

  it('fails bad inputs, at the activity boundary, as non-retryable failures named after the error class', async () => {
    const media = createMediaActivities({ store: new LocalStagingStore(join(tmp.dir, 'x')) });
    writeWav(join(tmp.dir, 'zero.wav'), {});
    const err = await withFailureBoundary(media, () => 1)
      .probeRecording({ path: join(tmp.dir, 'zero.wav') })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({
      type: 'MediaError',
      nonRetryable: true,
      details: [{ kind: 'zero-duration' }],
    });
    expect((err as ApplicationFailure).cause).toBeInstanceOf(MediaError);
  });
});
