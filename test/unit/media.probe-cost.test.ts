/**
 * The probe's work does not grow with the recording's length beyond reading it once: it decodes only
 * a head of the audio, and the plan's channel analysis, which decodes every sample anyway, counts the
 * decoded length and checks it (activities/media/plan.ts). The ffmpeg runs are counted through the
 * wrapper, with their arguments: never their time.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import * as ffmpeg from '../../activities/media/ffmpeg.ts';
import { MediaError } from '../../activities/media/errors.ts';
import { planRecording } from '../../activities/media/plan.ts';
import { HEAD_DECODE_SECONDS, probeRecording } from '../../activities/media/probe.ts';
import { makeTempDir, writeDamagedMp3, writeLavfi } from '../helpers/media-fixtures.ts';

/** Every ffmpeg run's arguments, through the real wrapper. */
const runs: string[][] = [];
vi.mock('../../activities/media/ffmpeg.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof ffmpeg>();
  return {
    ...actual,
    runFfmpeg: (args: string[], options?: ffmpeg.ToolRunOptions) => {
      runs.push(args);
      return actual.runFfmpeg(args, options);
    },
    spawnFfmpeg: (args: string[], options?: ffmpeg.ToolRunOptions) => {
      runs.push(args);
      return actual.spawnFfmpeg(args, options);
    },
  };
});

const tmp = makeTempDir();
afterAll(() => tmp.cleanup());
const at = (name: string) => join(tmp.dir, name);
beforeEach(() => {
  runs.length = 0;
});

/** A run that decodes (no stream copy), and how much of the audio it is limited to, if at all. */
function decodes(args: string[]): { limitSeconds: number | undefined } | undefined {
  const copy = args.some((a, i) => /^-c(:a)?$/.test(a) && args[i + 1] === 'copy');
  if (copy) return undefined;
  const t = args.indexOf('-t');
  return { limitSeconds: t >= 0 ? Number(args[t + 1]) : undefined };
}

/** AMR-NB frames of one byte: a NO_DATA frame (type 15), which ffmpeg's decoder drops. */
const noData = Buffer.from([0x7c]);
/** A 12.2 kbit/s speech frame (type 7): header and 31 bytes of payload. */
const speech = Buffer.concat([Buffer.from([0x3c]), Buffer.alloc(31)]);

describe('the probe of a long recording', () => {
  it('decodes only its head, and still says how long it is', async () => {
    // Two hours of FLAC: small on disk, 57.6 million samples to decode.
    await writeLavfi(at('long.flac'), 'anullsrc=r=8000:cl=mono:d=7200', ['-c:a', 'flac']);
    runs.length = 0;
    const probe = await probeRecording(at('long.flac'), { fingerprint: 'x' });
    const decoding = runs.map(decodes).filter((d) => d !== undefined);
    expect(decoding.length).toBeGreaterThan(0);
    for (const d of decoding) expect(d.limitSeconds ?? Infinity).toBeLessThanOrEqual(HEAD_DECODE_SECONDS);
    // The length is what the packets hold, read without decoding: the plan decodes and checks it.
    expect(probe.durationSeconds).toBe(7200);
    expect(probe.containerSeconds).toBe(7200);
    expect(probe.lengthCheck).toBeUndefined();
  });
});

describe('the plan counts the decoded length', () => {
  it('in its one decoding run, checked against the packets the probe read', async () => {
    await writeLavfi(at('call.ogg'), 'anoisesrc=r=16000:a=0.1:d=12', ['-c:a', 'libopus']);
    const probe = await probeRecording(at('call.ogg'), { fingerprint: 'x' });
    runs.length = 0;
    const plan = await planRecording(probe);
    expect(runs.map(decodes).filter((d) => d !== undefined)).toHaveLength(1);
    expect(Math.abs(plan.source.decodedSeconds! - 12)).toBeLessThan(0.05);
    expect(plan.source.durationSeconds).toBeLessThanOrEqual(plan.source.decodedSeconds!);
    expect(plan.lengthCheck).toMatchObject({ measuredBy: 'packets', toleranceSeconds: 0.25 });
    expect(plan.lengthCheck!.decodedSeconds).toBe(plan.source.decodedSeconds);
  });

  it('fails an MP3 whose middle frames do not decode, which the probe accepted', async () => {
    await writeDamagedMp3(at('whole.mp3'), at('damaged.mp3'));
    const probe = await probeRecording(at('damaged.mp3'), { fingerprint: 'x' });
    expect(probe.containerSeconds).toBeGreaterThan(20);
    const err = await planRecording(probe).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MediaError);
    expect((err as MediaError).kind).toBe('length-mismatch');
    expect((err as MediaError).message).toMatch(
      /damaged\.mp3: decodes to 1\d\.\d+ s but its packets hold 20\.\d+ s \(\d+\.\d+ s of it did not decode, which would shift every later time\)$/,
    );
  });

  it('fails a recording whose decoder drops audio mid-file, naming both lengths', async () => {
    // 100 AMR frames (2 s): 30 of speech, 40 NO_DATA, 30 of speech. Read as it is (the probe asks for
    // the repair that keeps such frames; this reader does without it), ffmpeg's decoder drops the 40
    // in the middle and exits 0: every later time would come 0.8 s early.
    const frames = [...Array(30).fill(speech), ...Array(40).fill(noData), ...Array(30).fill(speech)];
    writeFileSync(at('drops.amr'), Buffer.concat([Buffer.from('#!AMR\n'), ...frames]));
    const probe = await probeRecording(at('drops.amr'), { fingerprint: 'x' });
    expect(probe).toMatchObject({ durationSeconds: 2, containerSeconds: 2, reader: { repair: 'amr' } });
    expect((await planRecording(probe)).lengthCheck).toMatchObject({
      decodedSeconds: 2,
      containerSeconds: 2,
      measuredBy: 'amr-frames',
    });
    const err = await planRecording({ ...probe, reader: { ...probe.reader!, repair: null } }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MediaError);
    expect((err as MediaError).kind).toBe('length-mismatch');
    expect((err as MediaError).message).toBe(
      `${at('drops.amr')}: decodes to 1.2 s but its AMR frames hold 2 s (0.8 s of it did not decode, ` +
        'which would shift every later time)',
    );
  });
});
