/**
 * What an ffmpeg run reads: a file, the arguments before its `-i` (a headerless format's demuxer) and
 * the audio stream's index in it. Usually the recording itself; for a recording whose reader asks for a
 * repair (AMR with DTX frames), a repaired copy made once per worker and shared by its activities.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { rename, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { AmrFrames, InputReader } from '../../schemas/media-probe.ts';
import { ensurePrivateDir, evictLeastRecentlyUsed, privateCacheDir } from '../storage/source-cache.ts';
import { AmrFormatError, AmrRepairStream } from './amr.ts';
import { FfmpegError, MediaError } from './errors.ts';
import { spawnFfmpeg } from './ffmpeg.ts';
import { readerArgs } from './input-format.ts';
import { inputPolicyArgs } from './input-policy.ts';

export interface MediaInput {
  path: string;
  /** Arguments before `-i path`. */
  args: string[];
  /** Index of the audio stream in `path`. */
  streamIndex: number;
}

/** Repaired copies: the user's alone, as the source copies they are made from. */
const REPAIRED_DIR = privateCacheDir('repaired');
/** Repaired AMR copies are about as large as their sources (AMR is about 5.5 MB an hour). */
const REPAIRED_MAX_BYTES = 2 * 1024 ** 3;
const inFlight = new Map<string, Promise<AmrFrames>>();

/**
 * ffmpeg's (and ffprobe's) arguments that open `input`: the policy that keeps the run to this one local
 * file (input-policy.ts), the reader's arguments, then `-i`. Every run on a recording opens it here.
 */
export function inputArgs(input: MediaInput): string[] {
  return [...inputPolicyArgs(), ...input.args, '-i', input.path];
}

/** Reads `path` as its reader says, without any repair (the probe's first look). */
export function plainInput(path: string, reader: InputReader | undefined, streamIndex = 0): MediaInput {
  return { path, args: readerArgs(reader), streamIndex };
}

async function repairedPath(path: string, streamIndex: number): Promise<string> {
  const info = await stat(path);
  const id = createHash('sha256')
    .update(`${path}\0${info.size}\0${info.mtimeMs}\0${streamIndex}`)
    .digest('hex')
    .slice(0, 32);
  return join(REPAIRED_DIR, `${id}.amr`);
}

/**
 * Copies the AMR frames of stream `streamIndex` out of their container (`-c copy -f amr`, a no-op for a
 * `.amr` file), repairs them (amr.ts) into `out`, and returns what the frames were.
 */
async function repairAmr(source: MediaInput, out: string, signal?: AbortSignal): Promise<AmrFrames> {
  const proc = spawnFfmpeg(
    [
      '-v',
      'error',
      ...inputArgs(source),
      '-map',
      `0:${source.streamIndex}`,
      '-c',
      'copy',
      '-f',
      'amr',
      'pipe:1',
    ],
    { signal },
  );
  const repair = new AmrRepairStream();
  const partial = `${out}.${randomUUID()}.part`;
  try {
    const [copied, written] = await Promise.allSettled([
      proc.done,
      pipeline(proc.stdout, repair, createWriteStream(partial)),
    ]);
    if (copied.status === 'rejected') throw copied.reason;
    if (written.status === 'rejected') {
      proc.kill();
      throw written.reason;
    }
    await rename(partial, out);
    return repair.frames;
  } catch (err) {
    await rm(partial, { force: true });
    if (err instanceof AmrFormatError || err instanceof FfmpegError) {
      const reason =
        err instanceof FfmpegError ? (err.stderrTail.split('\n').at(-1) ?? err.message) : err.message;
      throw new MediaError(
        'unreadable',
        `${source.path}: cannot read its AMR frames (${reason})`,
        source.path,
      );
    }
    throw err;
  }
}

/**
 * The input every ffmpeg run on a probed recording reads: the file itself, or its repaired copy
 * (made on first use on this worker). `frames` is given when this call made the copy.
 */
export async function openInput(
  path: string,
  reader: InputReader | undefined,
  streamIndex: number,
  options: {
    signal?: AbortSignal;
    /** Repair again even when a copy exists (the probe, which counts the frames). */ remake?: boolean;
  } = {},
): Promise<MediaInput & { frames?: AmrFrames }> {
  const { signal } = options;
  const plain = plainInput(path, reader, streamIndex);
  if (reader?.repair !== 'amr') return plain;
  ensurePrivateDir(REPAIRED_DIR);
  const out = await repairedPath(path, streamIndex);
  const repaired = { path: out, args: [], streamIndex: 0 };
  if (existsSync(out) && !options.remake) {
    const now = new Date();
    await utimes(out, now, now).catch(() => {});
    return repaired;
  }
  let pending = inFlight.get(out);
  if (!pending) {
    pending = repairAmr(plain, out, signal).finally(() => inFlight.delete(out));
    inFlight.set(out, pending);
  }
  const frames = await pending;
  await evictLeastRecentlyUsed(REPAIRED_DIR, REPAIRED_MAX_BYTES, out);
  return { ...repaired, frames };
}
