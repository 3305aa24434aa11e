/** Recordings for the media tests, generated at test time into temp directories (never committed). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFfmpeg } from '../../activities/media/ffmpeg.ts';
import type { Silence } from '../../schemas/plan.ts';
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

/** Renders an ffmpeg lavfi source (`sine=…`, `anullsrc=…`) to `path`, with extra output arguments. */
export async function writeLavfi(path: string, source: string, output: string[] = []): Promise<void> {
  await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', source, ...output, '-y', path]);
}

/** An MP4 with a small video track and, when `audioFrom` is given, that file's audio as AAC. */
export async function writeVideo(path: string, seconds: number, audioFrom?: string): Promise<void> {
  await runFfmpeg([
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    `testsrc=size=64x48:rate=5:duration=${seconds}`,
    ...(audioFrom ? ['-i', audioFrom, '-map', '0:v', '-map', '1:a', '-c:a', 'aac'] : []),
    '-c:v',
    'mpeg4',
    '-shortest',
    '-y',
    path,
  ]);
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
