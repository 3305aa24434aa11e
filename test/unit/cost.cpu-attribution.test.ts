import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { registry } from '../../activities/metrics.ts';
import { processCpuSeconds } from '../../activities/cost/process-cpu.ts';
import { runFfmpeg } from '../../activities/media/ffmpeg.ts';
import { heartbeatsAtRealTime } from '../../bench/lib/cost-meter.ts';

async function activityCpuOf(type: string): Promise<number> {
  const metric = await registry.getSingleMetric('callpipe_activity_cpu_seconds_total')?.get();
  return metric?.values.find((v) => v.labels.activity_type === type)?.value ?? 0;
}

describe('CPU by activity type', () => {
  it("gives an ffmpeg run's whole CPU to the activity that started it", async () => {
    const env = new MockActivityEnvironment({ activityType: 'transcodeSource' } as never);
    const before = await activityCpuOf('transcodeSource');
    const children = processCpuSeconds().children;
    // Work that takes ffmpeg a measurable CPU time: a few minutes of noise, resampled, thrown away.
    await env.run(() =>
      runFfmpeg([
        ...['-v', 'error', '-f', 'lavfi', '-i', 'anoisesrc=d=600:r=48000:seed=1'],
        ...['-af', 'aresample=8000', '-f', 'null', '-'],
      ]),
    );
    const used = processCpuSeconds().children - children;
    expect(used).toBeGreaterThan(0);
    expect(await activityCpuOf('transcodeSource')).toBeCloseTo(before + used, 5);
  });
});

describe('heartbeats at real time', () => {
  it('scales the heartbeats of paced activities by the speed, the others not', () => {
    const counted = { recognizeSession: 10, transcodeSource: 4, analyzeSentiment: 2 };
    expect(heartbeatsAtRealTime(counted, 20, true)).toBe(10 * 20 + 4 + 2 * 20);
    expect(heartbeatsAtRealTime(counted, 20, false)).toBe(10 * 20 + 4 + 2);
  });
});
