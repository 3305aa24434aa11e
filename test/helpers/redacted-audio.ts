/**
 * Reading a redacted copy back in tests: decode any recording to interleaved 16-bit samples with
 * ffmpeg, and measure how much of a stretch's energy is a tone (Goertzel, as activities/media/
 * redacted-audio.ts checks its own copies; here measured independently on the decoded samples).
 */
import { spawnFfmpeg } from '../../activities/media/ffmpeg.ts';
import { decodeS16le } from './dtmf-decode.ts';

/** Every channel of `path` as interleaved 16-bit samples at its own rate. */
export async function decodeInterleaved(path: string): Promise<Int16Array> {
  const proc = spawnFfmpeg([
    '-v',
    'error',
    '-i',
    path,
    '-map',
    '0:a:0',
    '-c:a',
    'pcm_s16le',
    '-f',
    's16le',
    'pipe:1',
  ]);
  const chunks: Buffer[] = [];
  for await (const chunk of proc.stdout) chunks.push(chunk as Buffer);
  await proc.done;
  return decodeS16le(Buffer.concat(chunks));
}

/** One channel's samples of frames [from, to) of an interleaved buffer, as -1…1. */
export function channelSlice(
  samples: Int16Array,
  channels: number,
  channel: number,
  from: number,
  to: number,
): Float64Array {
  const out = new Float64Array(Math.max(0, to - from));
  for (let i = from; i < to; i++) out[i - from] = samples[i * channels + channel]! / 32768;
  return out;
}

/** Share of the energy of `x` at `hz` (1 for a pure tone there, near 0 for anything else), and its RMS. */
export function toneShare(x: Float64Array, sampleRate: number, hz: number): { share: number; rms: number } {
  const c = 2 * Math.cos((2 * Math.PI * hz) / sampleRate);
  let s1 = 0;
  let s2 = 0;
  let energy = 0;
  for (const v of x) {
    const s = v + c * s1 - s2;
    s2 = s1;
    s1 = s;
    energy += v * v;
  }
  const power = s1 * s1 + s2 * s2 - c * s1 * s2;
  return { share: energy ? (2 * power) / (x.length * energy) : 0, rms: Math.sqrt(energy / (x.length || 1)) };
}
