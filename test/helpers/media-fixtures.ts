/** Recordings for the media tests, generated at test time into temp directories (never committed). */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { runFfmpeg } from '../../activities/media/ffmpeg.ts';
import { plainInput } from '../../activities/media/media-input.ts';
import { transcodeStream } from '../../activities/media/transcode.ts';
import type { ProbeResult } from '../../schemas/media-probe.ts';
import type { SessionAudioFormat } from '../../schemas/media-transcode.ts';
import type { PlanSession, Silence, Track } from '../../schemas/plan.ts';
import { seededRandom } from '../../schemas/seeded-random.ts';
import type { FixtureScript } from '../../schemas/synthetic-recording.ts';

/** A temp directory and its removal. */
export function makeTempDir(prefix = 'callpipe-media-'): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A canonical 44-byte WAV header followed by `dataBytes` zero bytes (0 = a header with no samples). */
export function writeWav(
  path: string,
  options: { sampleRate?: number; channels?: number; dataBytes?: number; formatTag?: number },
): void {
  const { sampleRate = 8000, channels = 1, dataBytes = 0, formatTag = 1 } = options;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(formatTag, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  writeFileSync(path, Buffer.concat([header, Buffer.alloc(dataBytes)]));
}

/**
 * Renders ffmpeg lavfi sources (`sine=…`, `anullsrc=…`; several are inputs 0, 1, … for a filter in
 * `output`) to `path`, with extra output arguments.
 */
export async function writeLavfi(
  path: string,
  source: string | string[],
  output: string[] = [],
): Promise<void> {
  const inputs = [source].flat().flatMap((s) => ['-f', 'lavfi', '-i', s]);
  await runFfmpeg(['-v', 'error', ...inputs, ...output, '-y', path]);
}

/** Encodes the file `input` to `path` with ffmpeg's output arguments `encode` (codec, rate, format…). */
export async function writeEncoded(input: string, path: string, encode: string[]): Promise<void> {
  await runFfmpeg(['-v', 'error', '-i', input, ...encode, '-y', path]);
}

/**
 * An MP4 whose first stream is a small test-pattern video and, when `audioFrom` is given, whose second is
 * that file's audio as AAC (as screen recordings put them).
 */
export async function writeVideo(path: string, seconds: number, audioFrom?: string): Promise<void> {
  await runFfmpeg([
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    `testsrc=size=64x48:rate=5:duration=${seconds}`,
    ...(audioFrom ? ['-i', audioFrom, '-map', '0:v', '-map', '1:a', '-c:a', 'aac'] : ['-an']),
    '-c:v',
    'mpeg4',
    '-shortest',
    '-y',
    path,
  ]);
}

/**
 * Overwrites the payload of the frames between `from` and `to` (fractions of the file's frames) of a
 * CBR MPEG-2 layer III file at 32 kbit/s and 16 kHz with seeded random bytes, keeping every frame
 * header: the demuxer still finds each frame (the packets keep their timeline), and the decoder fails
 * on most of them and drops them, as it does on a recording damaged in storage or transfer.
 */
export function corruptMp3Frames(path: string, out: string, from: number, to: number, seed: number): void {
  const buf = readFileSync(path);
  const frames: number[] = [];
  for (let at = 0; at + 4 <= buf.length;) {
    const header = buf.readUInt32BE(at);
    // Sync, MPEG-2, layer III, 32 kbit/s, 16 kHz: 72 × 32,000 / 16,000 = 144 bytes, plus the padding bit.
    if ((header & 0xfffe0000) >>> 0 !== 0xfff20000 || ((header >>> 10) & 3) !== 2) {
      throw new Error(`${path}: not a 16-kHz MPEG-2 layer III frame at byte ${at}`);
    }
    frames.push(at);
    at += 144 + ((header >>> 9) & 1);
  }
  const random = seededRandom(seed);
  for (const at of frames.slice(Math.floor(frames.length * from), Math.floor(frames.length * to))) {
    const end = Math.min(buf.length, at + 144);
    for (let i = at + 4; i < end; i++) buf[i] = Math.floor(random() * 256);
  }
  writeFileSync(out, buf);
}

/**
 * 20 s of noise as a CBR MP3 (16 kHz, 32 kbit/s, no Xing header) at `intact`, and at `damaged` the same
 * file with the middle fifth of its frames' payload noise: every frame header intact (the packets hold
 * 20 s), a fifth of the audio dropped by the decoder, which still exits 0.
 */
export async function writeDamagedMp3(intact: string, damaged: string): Promise<void> {
  await writeLavfi(intact, 'anoisesrc=r=16000:d=20:a=0.3:seed=7', [
    '-c:a',
    'libmp3lame',
    '-b:a',
    '32k',
    '-write_xing',
    '0',
    '-id3v2_version',
    '0',
  ]);
  corruptMp3Frames(intact, damaged, 0.4, 0.6, 11);
}

/** A script with one phrase every `every` seconds on one channel: mostly silence, quick to render. */
export function sparseScript(durationSeconds: number, every: number, id = 7): FixtureScript {
  const phrases = [];
  for (let t = every / 2; t + 1 < durationSeconds; t += every) phrases.push({ id, start: t });
  return { durationSeconds, background: 'silence', channels: [{ phrases }] };
}

/** Silences between utterances of `talk` s every `period` s (a synthetic silence list for the planner). */
export function periodicSilences(durationSeconds: number, period: number, talk: number): Silence[] {
  const silences: Silence[] = [];
  for (let t = 0; t < durationSeconds; t += period) {
    silences.push({ start: t + talk, end: Math.min(t + period, durationSeconds) });
  }
  return silences.filter((s) => s.end > s.start);
}

/** One planned session of a probed recording transcoded on its own (transcode.ts `transcodeStream`). */
export async function transcodeSessionAudio(
  probe: Pick<ProbeResult, 'path' | 'reader' | 'streamIndex'>,
  tracks: readonly Pick<Track, 'sourceChannels'>[],
  s: Pick<PlanSession, 'track' | 'start' | 'end'>,
  format: SessionAudioFormat = 'mulaw',
  signal?: AbortSignal,
): Promise<Buffer> {
  const proc = transcodeStream(
    {
      input: plainInput(probe.path, probe.reader, probe.streamIndex),
      sourceChannels: tracks[s.track]!.sourceChannels,
      start: s.start,
      end: s.end,
      format,
    },
    signal,
  );
  const [bytes] = await Promise.all([streamBytes(proc.stdout), proc.done]);
  return bytes;
}

/** Everything a stream gives, as one buffer. */
export async function streamBytes(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
