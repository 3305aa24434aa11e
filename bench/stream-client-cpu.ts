/**
 * The recognition client's CPU per request, in isolation (issue 27): the service client (`service/`) runs
 * `--sessions` stream sessions at once against the emulator (a process of its own, so its CPU is not
 * counted) at `--speed`, as a night's asr worker does, with real call audio staged the way the pipeline
 * stages it (8-kHz mu-law, fed in 64-KiB pieces like an S3 range read). Each pass runs in a child process
 * of its own and prints that process's CPU (JavaScript thread, V8's helper threads, the rest) per request
 * and per stream-hour; the least of the passes is robust on a busy machine. The results' digest says
 * whether a change to the client changed what the sessions returned.
 *
 *   node scripts/on-node.mjs ts bench/stream-client-cpu.ts [--sessions 16] [--speed 20] [--audio-seconds 300] [--passes 3] [--profile DIR]
 *
 * `--profile DIR` writes each pass's V8 CPU profile (`node --cpu-prof`) into DIR.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { createServiceClient } from '../service/client.ts';
import { PROJECT_ROOT, ensureTools } from '../cli/tools/provision.ts';
import { resolvePorts } from '../cli/stack/ports.ts';
import { emulatorProcess } from '../cli/stack/stack.ts';
import { typeScriptNode } from '../scripts/node-runtime.mjs';
import { emulatorServiceConfig } from './lib/stream-stack.ts';
import { threadCpu } from './lib/cpu-meter.ts';
import { BENCH_CACHE } from './lib/night-set.ts';

const MODEL = 'ja-gen_tf-08';
/** What one S3 range read of staged audio yields at a time. */
const PIECE_BYTES = 64 * 1024;
const SELF = fileURLToPath(import.meta.url);

interface ChildInput {
  emulatorUrl: string;
  sessions: number;
  speed: number;
  audioPath: string;
}

interface PassResult {
  requests: number;
  cpuSeconds: number;
  wallSeconds: number;
  threads: Record<string, number>;
  digest: string;
  finals: number;
}

/** One pass in this (child) process: every session at once, each over the whole audio. */
async function pass(input: ChildInput): Promise<PassResult> {
  const { readFileSync } = await import('node:fs');
  const audio = readFileSync(input.audioPath);
  const service = createServiceClient(emulatorServiceConfig(input.emulatorUrl, MODEL, input.speed), {
    concurrency: { asrSessions: input.sessions },
  });
  await service.tokens.get();
  const pieces = function* () {
    for (let at = 0; at < audio.byteLength; at += PIECE_BYTES)
      yield Buffer.from(audio.subarray(at, at + PIECE_BYTES));
  };
  const threads0 = threadCpu(process.pid);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const summaries = await Promise.all(
    Array.from(
      { length: input.sessions },
      () => service.recognizeStream({ audio: pieces(), codec: 'mulaw', sampleRate: 8000, model: MODEL }).done,
    ),
  );
  const cpu = process.cpuUsage(cpu0);
  const wallSeconds = (performance.now() - t0) / 1000;
  const threads1 = threadCpu(process.pid);
  const digest = createHash('sha256');
  for (const s of summaries) digest.update(JSON.stringify(s.results));
  return {
    requests: summaries.reduce((n, s) => n + s.cost.requests, 0),
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    wallSeconds,
    threads: Object.fromEntries(
      Object.entries(threads1).map(([name, s]) => [
        name,
        Math.round((s - (threads0[name] ?? 0)) * 100) / 100,
      ]),
    ),
    digest: digest.digest('hex').slice(0, 16),
    finals: summaries.reduce((n, s) => n + s.results.length, 0),
  };
}

function runChild(input: ChildInput, profileDir: string | undefined): Promise<PassResult> {
  return new Promise((resolve, reject) => {
    const flags = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
    const child = spawn(typeScriptNode(), [...flags, SELF, '--child', JSON.stringify(input)], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code === 0 && line.startsWith('{')) resolve(JSON.parse(line) as PassResult);
      else reject(new Error(`pass exited with ${code}: ${out}`));
    });
  });
}

/** The first call of the night's cache as staged audio (8-kHz mu-law, the first channel), `seconds` long. */
function stagedAudio(ffmpeg: string, seconds: number, dir: string): string {
  const cache = join(BENCH_CACHE, 'night');
  const source = existsSync(cache) ? readdirSync(cache).sort()[0] : undefined;
  if (!source) throw new Error(`no rendered call in ${cache}: run npm run bench:night -- --quick once`);
  const out = join(dir, 'session.mulaw');
  const run = spawnSync(ffmpeg, [
    ...['-nostdin', '-v', 'error', '-i', join(cache, source), '-t', String(seconds)],
    ...['-af', 'pan=mono|c0=c0', '-ar', '8000', '-c:a', 'pcm_mulaw', '-f', 'mulaw', '-y', out],
  ]);
  if (run.status !== 0) throw new Error(`ffmpeg: ${run.stderr.toString()}`);
  return out;
}

async function run(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sessions: { type: 'string', default: '16' },
      speed: { type: 'string', default: '20' },
      'audio-seconds': { type: 'string', default: '300' },
      passes: { type: 'string', default: '3' },
      profile: { type: 'string' },
      child: { type: 'string' },
    },
  });
  if (values.child) {
    console.log(JSON.stringify(await pass(JSON.parse(values.child) as ChildInput)));
    process.exit(0);
  }
  const sessions = Number(values.sessions);
  const speed = Number(values.speed);
  const home = mkdtempSync(join(tmpdir(), 'callpipe-client-cpu-'));
  const tools = ensureTools({ log: () => {} });
  const audioPath = stagedAudio(tools.ffmpeg, Number(values['audio-seconds']), home);
  const ports = await resolvePorts({ emulator: { port: 0, variable: '' } }, 'auto');
  const emulator = emulatorProcess(
    ports.emulator,
    ['--speed', String(speed), '--concurrent-sessions', String(4 * sessions), '--rate-limit', '0'],
    home,
    process.env,
  );
  await emulator.start();
  try {
    const input = { emulatorUrl: `http://127.0.0.1:${ports.emulator}`, sessions, speed, audioPath };
    const results: PassResult[] = [];
    for (let i = 0; i < Number(values.passes); i++) {
      const r = await runChild(input, values.profile);
      results.push(r);
      const us = (r.cpuSeconds / r.requests) * 1e6;
      console.error(
        `[client-cpu] pass ${i + 1}: ${r.requests} requests in ${r.wallSeconds.toFixed(1)} s, ` +
          `${us.toFixed(1)} µs CPU per request, threads ${JSON.stringify(r.threads)}, ` +
          `${r.finals} finals, digest ${r.digest}`,
      );
    }
    const least = results.reduce((a, b) => (b.cpuSeconds / b.requests < a.cpuSeconds / a.requests ? b : a));
    const perRequestUs = (least.cpuSeconds / least.requests) * 1e6;
    console.log(
      JSON.stringify(
        {
          sessions,
          speed,
          requestsPerPass: least.requests,
          // The least of the passes: what the client costs, with the least of the machine's noise in it.
          cpuMicrosecondsPerRequest: Math.round(perRequestUs * 10) / 10,
          // 15,000 requests of 240 ms in a stream-hour (spec 02).
          cpuSecondsPerStreamHour: Math.round(perRequestUs * 15_000) / 1e6,
          threads: least.threads,
          digests: [...new Set(results.map((r) => r.digest))],
        },
        null,
        2,
      ),
    );
  } finally {
    await emulator.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

run().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
