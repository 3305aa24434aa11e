import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { AmrFormatError, AmrRepairStream, amrSeconds } from '../../activities/media/amr.ts';
import { MediaError } from '../../activities/media/errors.ts';
import { checkLength, packetSeconds } from '../../activities/media/length-check.ts';
import { plainInput } from '../../activities/media/media-input.ts';
import { planRecording } from '../../activities/media/plan.ts';
import { decodedDurationSeconds, probeRecording } from '../../activities/media/probe.ts';
import { makeTempDir, writeLavfi } from '../helpers/media-fixtures.ts';
import { runFfmpeg } from '../../activities/media/ffmpeg.ts';

const tmp = makeTempDir();
afterAll(() => tmp.cleanup());
const at = (name: string) => join(tmp.dir, name);

/** An AMR-NB 12.2 kbit/s speech frame (header 0x3C, 31 bytes of payload), a SID frame and a NO_DATA frame. */
const speech = (fill: number) => Buffer.concat([Buffer.from([0x3c]), Buffer.alloc(31, fill)]);
const sid = Buffer.concat([Buffer.from([0x44]), Buffer.alloc(5, 0x55)]);
const noData = Buffer.from([0x7c]);

async function repair(bytes: Buffer, chunkSize = 7) {
  const stream = new AmrRepairStream();
  const chunks: Buffer[] = [];
  const source = Readable.from(
    Array.from({ length: Math.ceil(bytes.length / chunkSize) }, (_, i) =>
      bytes.subarray(i * chunkSize, (i + 1) * chunkSize),
    ),
  );
  for await (const chunk of source.pipe(stream)) chunks.push(chunk as Buffer);
  return { out: Buffer.concat(chunks), frames: stream.frames };
}

describe('AmrRepairStream', () => {
  it('counts every frame and replaces comfort-noise and NO_DATA frames by a silent speech frame', async () => {
    const file = Buffer.concat([
      Buffer.from('#!AMR\n'),
      speech(1),
      sid,
      noData,
      noData,
      speech(2),
      Buffer.from([0x3c, 1, 2]),
    ]);
    const { out, frames } = await repair(file);
    expect(frames).toEqual({ variant: 'nb', frames: 5, speech: 2, sid: 1, noData: 2, truncatedBytes: 3 });
    const silent = Buffer.concat([Buffer.from([0x04]), Buffer.alloc(12)]);
    expect(out).toEqual(
      Buffer.concat([Buffer.from('#!AMR\n'), speech(1), silent, silent, silent, speech(2)]),
    );
    expect(amrSeconds(frames.frames)).toBe(0.1);
  });

  it('repairs AMR-WB with its own frame sizes', async () => {
    const wbSpeech = Buffer.concat([Buffer.from([0x14]), Buffer.alloc(32, 3)]); // 12.65 kbit/s
    const wbSid = Buffer.concat([Buffer.from([0x4c]), Buffer.alloc(5)]);
    const { frames, out } = await repair(
      Buffer.concat([Buffer.from('#!AMR-WB\n'), wbSpeech, wbSid, noData]),
      5,
    );
    expect(frames).toMatchObject({ variant: 'wb', frames: 3, speech: 1, sid: 1, noData: 1 });
    expect(out.length).toBe(9 + 33 * 3);
  });

  it('refuses a stream that is not AMR', async () => {
    await expect(repair(Buffer.from('RIFF....WAVEfmt '))).rejects.toBeInstanceOf(AmrFormatError);
  });

  it('gives ffmpeg a file it decodes to the full length, where the original decodes short', async () => {
    // 100 frames: 40 of speech-coded silence, 60 of DTX, as a phone codes a pause. (With more than
    // two thirds of the frames undecodable, ffmpeg gives up with an error instead.)
    const frames = Array.from({ length: 100 }, (_, i) => (i < 40 ? speech(0) : i % 6 === 0 ? sid : noData));
    writeFileSync(at('dtx.amr'), Buffer.concat([Buffer.from('#!AMR\n'), ...frames]));
    const original = await decodedDurationSeconds(plainInput(at('dtx.amr'), undefined));
    expect(original).toBeCloseTo(0.8, 3);
    const probe = await probeRecording(at('dtx.amr'), { fingerprint: 'x' });
    expect(probe.durationSeconds).toBe(2);
    expect(probe.reader?.repair).toBe('amr');
    expect(probe.amr).toMatchObject({ frames: 100, speech: 40, sid: 10, noData: 50 });
    // The plan decodes the repaired copy whole and checks its length against the frames.
    expect((await planRecording(probe)).lengthCheck).toMatchObject({
      decodedSeconds: 2,
      containerSeconds: 2,
      measuredBy: 'amr-frames',
    });
  });
});

describe('length check', () => {
  it('accepts codec priming and padding, refuses a decoder that dropped audio', () => {
    expect(
      checkLength('a.mp3', { decodedSeconds: 20, containerSeconds: 20.16, measuredBy: 'packets' }),
    ).toMatchObject({
      toleranceSeconds: 0.25,
    });
    const err = (() => {
      try {
        checkLength('call.amr', { decodedSeconds: 44.28, containerSeconds: 75, measuredBy: 'amr-frames' });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(MediaError);
    expect((err as MediaError).kind).toBe('length-mismatch');
    expect((err as MediaError).message).toBe(
      'call.amr: decodes to 44.28 s but its AMR frames hold 75 s (30.72 s of it did not decode, which would shift every later time)',
    );
  });

  it('refuses a recording whose timestamps jump over a gap, naming the gap', async () => {
    await writeLavfi(at('talk.wav'), 'sine=f=440:d=8:r=16000', []);
    // A recorder that lost 5 s of packets: the timestamps after 4 s are 5 s later than the audio.
    await runFfmpeg([
      '-v',
      'error',
      '-i',
      at('talk.wav'),
      '-af',
      "asetpts='if(gte(T,4),PTS+5/TB,PTS)'",
      '-c:a',
      'libopus',
      '-y',
      at('gap.webm'),
    ]);
    const packets = await packetSeconds(plainInput(at('gap.webm'), undefined));
    expect(packets.gapSeconds).toBeCloseTo(5, 1);
    const err = await probeRecording(at('gap.webm'), { fingerprint: 'x' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MediaError);
    expect((err as MediaError).kind).toBe('length-mismatch');
    expect((err as MediaError).message).toMatch(
      /gap\.webm: its packets hold 8(\.\d+)? s of audio over 13\.\d+ s of timestamps \(its timestamps jump over 5\.\d+ s with no audio in them, a gap in the recording, which would shift every later time\)$/,
    );
  });

  it("accepts a file joined from parts, which decodes each part's codec priming", async () => {
    await writeLavfi(at('part.m4a'), 'sine=f=440:d=4:r=16000', ['-c:a', 'aac']);
    writeFileSync(at('parts.txt'), Array.from({ length: 10 }, () => `file '${at('part.m4a')}'`).join('\n'));
    await runFfmpeg([
      '-v',
      'error',
      '-f',
      'concat',
      '-safe',
      '0',
      '-i',
      at('parts.txt'),
      '-c',
      'copy',
      '-y',
      at('joined.m4a'),
    ]);
    const probe = await probeRecording(at('joined.m4a'), { fingerprint: 'x' });
    expect(probe.durationSeconds).toBeGreaterThan(40);
    // Each part decodes its priming: more than the packets hold, recorded, not refused.
    const { lengthCheck } = await planRecording(probe);
    expect(lengthCheck!.decodedSeconds).toBeGreaterThan(lengthCheck!.containerSeconds);
  });

  it('measures what the packets hold without decoding', async () => {
    await writeLavfi(at('s.ogg'), 'sine=f=440:d=3:r=8000', ['-c:a', 'libopus']);
    const packets = await packetSeconds(plainInput(at('s.ogg'), undefined));
    expect(packets.seconds).toBeCloseTo(3, 1);
    expect(packets.gapSeconds).toBeLessThan(0.05);
    expect(readFileSync(at('s.ogg')).subarray(0, 4).toString()).toBe('OggS');
  });
});
