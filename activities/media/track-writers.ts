/**
 * The plan's track files, written from the channel analysis's conditioned samples (channel-analysis.ts):
 * per track its source channels mixed at equal gain (the transcode's `pan`: channels.ts panFilter),
 * rounded and clipped to 16 bits, and encoded as 8-kHz mu-law (schemas/g711.ts). Each track's codes
 * gather in a buffer of {@link WRITE_BYTES} written when full: the analysis hands over a few thousand
 * samples at a time, and a file write per block cost more than the encoding.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { encodeMulaw } from '../../schemas/g711.ts';

/** A track to write: its source channels, mixed at equal gain, to `path`. */
export interface TrackOutput {
  sourceChannels: number[];
  path: string;
}

export interface TrackWriters {
  /** Appends `frames` samples of every track, from the conditioned channels `block`. */
  write(block: readonly Float64Array[], frames: number): Promise<void>;
  /** Writes what is buffered and closes every file. */
  end(): Promise<void>;
  /** Closes every file without writing what is buffered (after a failure). */
  close(): Promise<void>;
}

/** Bytes of a track gathered before one file write (128 s of 8-kHz mu-law). */
const WRITE_BYTES = 1 << 20;

/** 16-bit rounding and clipping of a mixed sample, then its mu-law code. */
function codeOf(v: number): number {
  const sample = Math.round(v);
  return encodeMulaw(sample > 32767 ? 32767 : sample < -32768 ? -32768 : sample);
}

/** Writes the mu-law codes of `frames` samples of a track's channels, mixed at equal gain, into `out` at `at`. */
function mixToMulaw(
  block: readonly Float64Array[],
  sourceChannels: readonly number[],
  frames: number,
  out: Buffer,
  at: number,
): void {
  if (sourceChannels.length === 1) {
    // One channel (every track of a stereo call, a mono call's one): no mix, the gain is 1.
    const s = block[sourceChannels[0]!]!;
    for (let n = 0; n < frames; n++) out[at + n] = codeOf(s[n]!);
    return;
  }
  const gain = 1 / sourceChannels.length;
  const sources = sourceChannels.map((c) => block[c]!);
  for (let n = 0; n < frames; n++) {
    let v = 0;
    for (const s of sources) v += s[n]!;
    out[at + n] = codeOf(v * gain);
  }
}

/** One track's file and the codes gathered for it. */
class TrackFile {
  private buffer = Buffer.alloc(WRITE_BYTES);
  private used = 0;
  private readonly file: FileHandle;
  private readonly sourceChannels: readonly number[];
  constructor(file: FileHandle, sourceChannels: readonly number[]) {
    this.file = file;
    this.sourceChannels = sourceChannels;
  }

  async append(block: readonly Float64Array[], frames: number): Promise<void> {
    if (this.used + frames > this.buffer.length) {
      await this.flush();
      if (frames > this.buffer.length) this.buffer = Buffer.alloc(frames);
    }
    mixToMulaw(block, this.sourceChannels, frames, this.buffer, this.used);
    this.used += frames;
  }

  async flush(): Promise<void> {
    if (this.used === 0) return;
    const bytes = this.buffer.subarray(0, this.used);
    this.used = 0;
    await this.file.write(bytes);
  }

  async close(flush: boolean): Promise<void> {
    try {
      if (flush) await this.flush();
    } finally {
      await this.file.close();
    }
  }
}

export async function openTrackWriters(outputs: readonly TrackOutput[]): Promise<TrackWriters> {
  const files: FileHandle[] = [];
  try {
    for (const o of outputs) files.push(await open(o.path, 'w'));
  } catch (err) {
    await Promise.all(files.map((f) => f.close()));
    throw err;
  }
  const tracks = outputs.map((o, i) => new TrackFile(files[i]!, o.sourceChannels));
  let closed = false;
  const closeAll = async (flush: boolean) => {
    if (closed) return;
    closed = true;
    const results = await Promise.allSettled(tracks.map((t) => t.close(flush)));
    const rejected = results.find((r) => r.status === 'rejected');
    if (rejected) throw rejected.reason;
  };
  return {
    async write(block, frames) {
      for (const t of tracks) await t.append(block, frames);
    },
    end: () => closeAll(true),
    close: () => closeAll(false),
  };
}
