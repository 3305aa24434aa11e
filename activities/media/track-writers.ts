/**
 * The plan's track files, written from the channel analysis's conditioned samples (channel-analysis.ts):
 * per track its source channels mixed at equal gain (the transcode's `pan`: channels.ts panFilter),
 * rounded and clipped to 16 bits, and encoded as 8-kHz mu-law (schemas/g711.ts).
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
  /** Closes every file (after a failure too). */
  close(): Promise<void>;
}

/** The mu-law bytes of one track's channels mixed at equal gain, `frames` of them. */
function mixToMulaw(
  block: readonly Float64Array[],
  sourceChannels: readonly number[],
  frames: number,
  out: Buffer,
): Buffer {
  const gain = 1 / sourceChannels.length;
  const sources = sourceChannels.map((c) => block[c]!);
  for (let n = 0; n < frames; n++) {
    let v = 0;
    for (const s of sources) v += s[n]!;
    const sample = Math.round(v * gain);
    out[n] = encodeMulaw(sample > 32767 ? 32767 : sample < -32768 ? -32768 : sample);
  }
  return out.subarray(0, frames);
}

export async function openTrackWriters(outputs: readonly TrackOutput[]): Promise<TrackWriters> {
  const files: FileHandle[] = [];
  try {
    for (const o of outputs) files.push(await open(o.path, 'w'));
  } catch (err) {
    await Promise.all(files.map((f) => f.close()));
    throw err;
  }
  let buffers: Buffer[] = [];
  return {
    async write(block, frames) {
      if (frames === 0 || files.length === 0) return;
      if ((buffers[0]?.length ?? 0) < frames) buffers = outputs.map(() => Buffer.alloc(frames));
      await Promise.all(
        outputs.map((o, i) => files[i]!.write(mixToMulaw(block, o.sourceChannels, frames, buffers[i]!))),
      );
    },
    async close() {
      await Promise.all(files.splice(0).map((f) => f.close()));
    },
  };
}
