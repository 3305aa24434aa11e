/**
 * Media benchmark: for a 1-hour and a 10-hour stereo call, the transcode speed to 8 kHz mu-law as a
 * multiple of real time (from WAV, M4A and 48 kHz MP3), with and without the conditioning filters (DC
 * and hum removal) in the same run, the channel analysis's speed beside the plain `silencedetect` pass
 * it replaced (issue 13), and the peak RSS of the process. Each length runs in its own child process so its peak RSS is its own.
 *
 *   node scripts/on-node.mjs ts bench/media.ts            # 1 h and 10 h
 *   node scripts/on-node.mjs ts bench/media.ts --hours 1  # one length
 *
 * Targets (issue 4), per core: ≥ 2,000× real time from WAV or M4A, ≥ 400× from 48 kHz MP3, peak RSS
 * under 200 MB and flat in length; conditioning must not halve transcode speed (issue 13: a time cost
 * under ×2). Sessions are transcoded one at a time (one ffmpeg, about one core), their bytes counted,
 * checked and discarded, so disk speed is not measured.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateCallScript } from '../activities/media/call-script.ts';
import { runFfmpeg, type ToolProcess } from '../activities/media/ffmpeg.ts';
import { renderFixture } from '../activities/media/fixture.ts';
import { planRecording } from '../activities/media/plan.ts';
import { probeRecording } from '../activities/media/probe.ts';
import { analyzeChannels } from '../activities/media/channel-analysis.ts';
import { plainInput } from '../activities/media/media-input.ts';
import { expectedBytes, transcodeStream } from '../activities/media/transcode.ts';

const HOUR = 3600;
/** Issue 13: the conditioning filters must not halve transcode speed. */
const MAX_CONDITIONING_COST = 2;
/** The long recording is this many copies of the hour, joined without re-encoding (fast to make). */
const LONG_FACTOR = 10;

/** Reads a transcode's output, keeps nothing (the transcode is measured, not the disk), checks its length. */
async function drain(proc: ToolProcess, expected: number): Promise<void> {
  let bytes = 0;
  const reading = (async () => {
    for await (const chunk of proc.stdout) bytes += (chunk as Buffer).length;
  })();
  await Promise.all([reading, proc.done]);
  if (bytes !== expected) throw new Error(`transcode gave ${bytes} bytes, expected ${expected}`);
}

/** The plan's silence scan before 0.2.0: one `silencedetect` pass, per channel, at a fixed -30 dB. */
async function silencedetectPass(path: string): Promise<void> {
  await runFfmpeg([
    '-v',
    'info',
    '-i',
    path,
    '-af',
    'silencedetect=noise=-30dB:d=0.3:mono=1',
    '-f',
    'null',
    '-',
  ]);
}

interface Source {
  label: string;
  path: string;
}

async function makeSources(dir: string, hours: number): Promise<Source[]> {
  // One hour of a stereo call in each format; longer recordings repeat it (concat, stream copy).
  const script = generateCallScript({ durationSeconds: HOUR, seed: 1 });
  const hourly: Source[] = [
    { label: 'WAV 8 kHz stereo', path: join(dir, 'hour.wav') },
    { label: 'M4A 16 kHz stereo', path: join(dir, 'hour.m4a') },
    { label: 'MP3 48 kHz stereo', path: join(dir, 'hour.mp3') },
  ];
  await renderFixture(script, hourly[0]!.path, { sampleRate: 8000 });
  await renderFixture(script, hourly[1]!.path, { sampleRate: 16000 });
  await renderFixture(script, hourly[2]!.path, { sampleRate: 48000 });
  if (hours === 1) return hourly;
  return Promise.all(
    hourly.map(async (s) => {
      const list = join(dir, `${s.label.replace(/\W+/g, '-')}.txt`);
      writeFileSync(list, Array.from({ length: hours }, () => `file '${s.path}'`).join('\n'));
      const path = s.path.replace('hour.', `long.`);
      await runFfmpeg(['-v', 'error', '-f', 'concat', '-safe', '0', '-i', list, '-c', 'copy', '-y', path]);
      return { label: s.label, path };
    }),
  );
}

const maxRssMb = () => process.resourceUsage().maxRSS / 1024;

/** One length, in this process: prints one JSON line of figures. */
async function runOne(hours: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'callpipe-bench-media-'));
  try {
    const sources = await makeSources(dir, hours);
    const rows = [];
    for (const source of sources) {
      const probe = await probeRecording(source.path, { fingerprint: 'bench' });
      let t = performance.now();
      await silencedetectPass(source.path);
      const silencedetectSeconds = (performance.now() - t) / 1000;
      t = performance.now();
      const { silences } = await analyzeChannels(plainInput(source.path, undefined), {
        channels: probe.channels,
        noiseDb: -30,
        minSilenceSeconds: 0.3,
        durationSeconds: probe.durationSeconds,
      });
      const scanSeconds = (performance.now() - t) / 1000;
      const plan = await planRecording(probe);
      // Without, then with the conditioning filters, alternating per session so load drifts hit both alike.
      const seconds = { plain: 0, conditioned: 0 };
      for (const s of plan.sessions) {
        for (const conditioning of [false, true]) {
          t = performance.now();
          await drain(
            transcodeStream({
              input: plainInput(source.path, undefined, probe.streamIndex),
              sourceChannels: plan.tracks[s.track]!.sourceChannels,
              start: s.start,
              end: s.end,
              format: 'mulaw',
              conditioning,
            }),
            expectedBytes(s.end - s.start, 'mulaw'),
          );
          seconds[conditioning ? 'conditioned' : 'plain'] += (performance.now() - t) / 1000;
        }
      }
      const audioSeconds = probe.durationSeconds * plan.tracks.length;
      rows.push({
        source: source.label,
        duration: probe.durationSeconds,
        sessions: plan.sessions.length,
        silences: silences.reduce((n, c) => n + c.length, 0),
        // Channel-seconds of audio out per wall second: each channel is its own recognition stream.
        transcodeX: audioSeconds / seconds.conditioned,
        transcodeRecordingX: probe.durationSeconds / seconds.conditioned,
        plainTranscodeRecordingX: probe.durationSeconds / seconds.plain,
        conditioningCost: seconds.conditioned / seconds.plain,
        scanX: probe.durationSeconds / scanSeconds,
        silencedetectX: probe.durationSeconds / silencedetectSeconds,
      });
    }
    console.log(JSON.stringify({ hours, rows, peakRssMb: maxRssMb() }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs one length in a child process (same loader), so peak RSS is per length. */
function runChild(
  hours: number,
): Promise<{ hours: number; rows: Record<string, number | string>[]; peakRssMb: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...process.execArgv, fileURLToPath(import.meta.url), '--child', '--hours', String(hours)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`benchmark of ${hours} h exited with ${code}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!));
    });
  });
}

const fmt = (x: number) => `${Math.round(x).toLocaleString('en-US')}×`;

async function run(): Promise<void> {
  const { values } = parseArgs({ options: { hours: { type: 'string' }, child: { type: 'boolean' } } });
  if (values.child) return runOne(Number(values.hours));
  const lengths = values.hours ? [Number(values.hours)] : [1, LONG_FACTOR];
  console.log('callpipe media benchmark: stereo call, sessions of ≤ 3,000 s cut in silence, to 8 kHz mu-law');
  console.log('one ffmpeg at a time; speeds are multiples of real time\n');
  let worstCost = 0;
  for (const hours of lengths) {
    const started = performance.now();
    const result = await runChild(hours);
    console.log(
      `${hours} h recording (peak RSS of the process ${result.peakRssMb.toFixed(0)} MB, ${((performance.now() - started) / 1000).toFixed(0)} s in all)`,
    );
    for (const r of result.rows) {
      console.log(
        `  ${String(r.source).padEnd(20)} transcode ${fmt(Number(r.transcodeRecordingX)).padStart(8)} (recording), ` +
          `${fmt(Number(r.transcodeX)).padStart(8)} (channel audio); without conditioning ` +
          `${fmt(Number(r.plainTranscodeRecordingX)).padStart(8)}: conditioning costs ×${Number(r.conditioningCost).toFixed(2)} ` +
          `in time; channel analysis ${fmt(Number(r.scanX)).padStart(8)} (silencedetect alone ${fmt(Number(r.silencedetectX))}); ` +
          `${r.sessions} sessions`,
      );
      worstCost = Math.max(worstCost, Number(r.conditioningCost));
    }
  }
  const met = worstCost < MAX_CONDITIONING_COST;
  console.log(
    `\nconditioning costs at most ×${worstCost.toFixed(2)} in transcode time ` +
      `(target: under ×${MAX_CONDITIONING_COST}, never half the speed): ${met ? 'met' : 'MISSED'}`,
  );
  if (!met) process.exitCode = 1;
}

run().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
