/**
 * bench/plan-cpu: CPU seconds per audio hour of a call's probe and plan steps (the plan decodes the
 * recording once, analyses its channels and writes its tracks: activities/media/plan.ts), as the media
 * activities run them, with the tracks staged to a local directory instead of S3. Per call: this
 * process's own CPU (the analysis, the tracks' conditioning and encoding) and its ffmpeg children's,
 * read from /proc/self/stat, and the wall time. CPU time, unlike wall time, means something on a
 * machine shared with other work. The calls are the night bench's (bench/lib/night-set.ts), rendered
 * once into the cache.
 *
 *   node scripts/on-node.mjs ts bench/plan-cpu.ts [--calls 8] [--max-minutes 60] [--recognition file|stream]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createMediaActivities } from '../activities/media/media-activities.ts';
import { LocalStagingStore } from '../activities/media/staging.ts';
import { processCpu } from './lib/cpu-meter.ts';
import { BENCH_CACHE, nightSpecs, renderCalls } from './lib/night-set.ts';

const round = (x: number) => Math.round(x * 10) / 10;

async function run(): Promise<void> {
  const { values } = parseArgs({
    options: {
      calls: { type: 'string', default: '8' },
      'max-minutes': { type: 'string', default: '60' },
      recognition: { type: 'string', default: 'file' },
    },
  });
  const specs = nightSpecs({
    calls: Number(values.calls),
    minSeconds: 180,
    maxSeconds: Number(values['max-minutes']) * 60,
    seed: 7,
  });
  const log = (line: string) => console.error(`[plan-cpu] ${line}`);
  const paths = await renderCalls(specs, join(BENCH_CACHE, 'night'), log);
  const dir = mkdtempSync(join(tmpdir(), 'callpipe-plan-cpu-'));
  const media = createMediaActivities({ store: new LocalStagingStore(dir) });
  const options = values.recognition === 'file' ? { recognition: 'file' as const } : {};
  const rows: Record<string, unknown>[] = [];
  const total = { hours: 0, probe: 0, plan: 0 };
  try {
    for (const [i, path] of paths.entries()) {
      const c0 = processCpu(process.pid);
      const probe = await media.probeRecording({ path });
      const c1 = processCpu(process.pid);
      const t1 = performance.now();
      const plan = await media.planRecording({ path, probe, options, stageTracksUnder: `call-${i}/` });
      const c2 = processCpu(process.pid);
      const t2 = performance.now();
      const hours = probe.durationSeconds / 3600;
      const perHour = (x: number) => round(x / hours);
      const row = {
        call: specs[i]!.name,
        tracks: plan.tracks.length,
        sessions: plan.sessions.length,
        probe: { self: perHour(c1.self - c0.self), ffmpeg: perHour(c1.children - c0.children) },
        plan: { self: perHour(c2.self - c1.self), ffmpeg: perHour(c2.children - c1.children) },
        planWallPerHour: perHour((t2 - t1) / 1000),
      };
      total.hours += hours;
      total.probe += c1.self - c0.self + c1.children - c0.children;
      total.plan += c2.self - c1.self + c2.children - c1.children;
      log(JSON.stringify(row));
      rows.push(row);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const summary = {
    audioHours: round(total.hours * 100) / 100,
    probeCpuSecondsPerAudioHour: round(total.probe / total.hours),
    planCpuSecondsPerAudioHour: round(total.plan / total.hours),
  };
  console.log(JSON.stringify({ summary, calls: rows }, null, 2));
}

run().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
