/**
 * A corpus call's track as the pipeline stages it, and the CPU of that media work: the plan's channel
 * analysis, which writes the track as it goes (ffmpeg decodes and resamples; the worker conditions,
 * measures windows and silences, and encodes the track as mu-law in Node: activities/media/channel-analysis.ts
 * `trackOutputs`). bench/speakers.ts measures the separation against this work.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeChannels } from '../../activities/media/channel-analysis.ts';
import { plainInput } from '../../activities/media/media-input.ts';
import { processCpu } from './cpu-meter.ts';
import type { CorpusCall } from './speaker-corpus.ts';

/** CPU seconds of this process's reaped children so far. */
const childCpu = () => processCpu(process.pid).children;

export async function stagedTrack(
  call: Pick<CorpusCall, 'path' | 'durationSeconds'>,
): Promise<{ bytes: Uint8Array; mediaSeconds: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'callpipe-speakers-bench-'));
  try {
    const path = join(dir, 'track.mulaw');
    const before = childCpu();
    const node = process.cpuUsage();
    await analyzeChannels(plainInput(call.path, undefined), {
      channels: 1,
      noiseDb: -30,
      minSilenceSeconds: 0.3,
      durationSeconds: call.durationSeconds,
      trackOutputs: [{ sourceChannels: [0], path }],
    });
    const { user, system } = process.cpuUsage(node);
    const mediaSeconds = childCpu() - before + (user + system) / 1e6;
    return { bytes: new Uint8Array(readFileSync(path)), mediaSeconds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
