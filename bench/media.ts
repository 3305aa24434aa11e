/**
 * Media benchmark: for a 1-hour and a 10-hour stereo call, the transcode speed to 8 kHz mu-law as a
 * multiple of real time (from WAV, M4A and 48 kHz MP3), the silence scan's speed, and the peak RSS of
 * the process. Each length runs in its own child process so its peak RSS is its own.
 *
 *   npx tsx bench/media.ts            # 1 h and 10 h
 *   npx tsx bench/media.ts --hours 1  # one length
 *
 * Targets (issue 4), per core: ≥ 2,000× real time from WAV or M4A, ≥ 400× from 48 kHz MP3, peak RSS
 * under 200 MB and flat in length. Sessions are transcoded one at a time (one ffmpeg, about one core),
 * into a store that discards the bytes after the length check, so disk speed is not measured.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateCallScript } from '../activities/media/call-script.ts';
import { runFfmpeg } from '../activities/media/ffmpeg.ts';
import { renderFixture } from '../activities/media/fixture.ts';
import { planRecording } from '../activities/media/plan.ts';
import { probeRecording } from '../activities/media/probe.ts';
import { scanSilences } from '../activities/media/silence.ts';
import type { StagingStore } from '../activities/media/staging.ts';
import { transcodeSession } from '../activities/media/transcode.ts';

const HOUR = 3600;
/** The long recording is this many copies of the hour, joined without re-encoding (fast to make). */
const LONG_FACTOR = 10;

/** Consumes what it is given and keeps nothing: the transcode is measured, not the disk. */
class DiscardStore implements StagingStore {
  async exists(): Promise<boolean> {
    return false;
  }
  async head(): Promise<undefined> {
    return undefined;
  }
  async put(_key: string, body: Readable | Buffer): Promise<void> {
    if (Buffer.isBuffer(body)) return;
    for await (const _chunk of body) {
      // drain
    }
  }
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
      const silences = await scanSilences(source.path, {
        channels: probe.channels,
        durationSeconds: probe.durationSeconds,
      });
      const scanSeconds = (performance.now() - t) / 1000;
      const plan = await planRecording(probe);
      const store = new DiscardStore();
      t = performance.now();
      for (const s of plan.sessions) {
        await transcodeSession(
          {
            path: source.path,
            fingerprint: 'bench',
            streamIndex: probe.streamIndex,
            track: s.track,
            sourceChannels: plan.tracks[s.track]!.sourceChannels,
            start: s.start,
            end: s.end,
            format: 'mulaw',
          },
          { store },
        );
      }
      const transcodeSeconds = (performance.now() - t) / 1000;
      const audioSeconds = probe.durationSeconds * plan.tracks.length;
      rows.push({
        source: source.label,
        duration: probe.durationSeconds,
        sessions: plan.sessions.length,
        silences: silences.reduce((n, c) => n + c.length, 0),
        // Channel-seconds of audio out per wall second: each channel is its own recognition stream.
        transcodeX: audioSeconds / transcodeSeconds,
        transcodeRecordingX: probe.durationSeconds / transcodeSeconds,
        scanX: probe.durationSeconds / scanSeconds,
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
  for (const hours of lengths) {
    const started = performance.now();
    const result = await runChild(hours);
    console.log(
      `${hours} h recording (peak RSS of the process ${result.peakRssMb.toFixed(0)} MB, ${((performance.now() - started) / 1000).toFixed(0)} s in all)`,
    );
    for (const r of result.rows) {
      console.log(
        `  ${String(r.source).padEnd(20)} transcode ${fmt(Number(r.transcodeRecordingX)).padStart(8)} (recording), ` +
          `${fmt(Number(r.transcodeX)).padStart(8)} (channel audio); silence scan ${fmt(Number(r.scanX)).padStart(8)}; ${r.sessions} sessions`,
      );
    }
  }
}

run().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
