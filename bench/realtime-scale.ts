/**
 * Real-time scale (issue 18, item 2): how many recognition streams one process holds at speed 1 with
 * pacing kept, for the bare service client (`service/`) and for the worker's recognition activity
 * (`recognizeSession`: staged audio read from S3 in ranges, partial results written back), side by side.
 *
 *   node scripts/on-node.mjs ts bench/realtime-scale.ts [--streams 16,32,64] [--ramp-seconds 20] [--hold-seconds 30]
 *
 * Starts an S3 server (SeaweedFS) and the emulator (speed 1, its account raised past the largest ramp
 * step) of its own. For each step N and each side, a child process of its own opens N streams evenly over
 * the ramp, then measures over the hold window, with all N open: CPU of the process per stream-second,
 * audio requests per stream per second (4.17 is real time: one 240-ms request each 240 ms), late sends
 * (a stream's gap between two answers above 360 ms, 1.5 × the request interval), and event-loop lag
 * (p99 and max). Streams per core = N ÷ (CPU seconds ÷ wall seconds), the CPU a core would give them;
 * a step whose streams fell behind real time (under 98 % of its requests, or a stream failed) is marked
 * NOT HELD, and its CPU figure is no capacity.
 * The worker's side is the activity in one process without Temporal; the `temporal` side is the asr worker
 * as deployed (`workers/asr.ts`, its own process: Temporal's core, heartbeats, the failure boundary), its
 * sessions asked for by a workflow (bench/lib/whole-worker-side.ts), pacing read from the emulator's
 * counters (its late sends and event-loop lag are not measurable from outside: shown as -; `failed`
 * counts 412/552/651 answers and a failed session).
 */
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { PROJECT_ROOT } from '../cli/tools/provision.ts';
import { createObjectStore } from '../activities/storage/object-store.ts';
import { createAsrActivities } from '../activities/asr/asr-activities.ts';
import { createServiceClient } from '../service/client.ts';
import type { S3Config } from '../schemas/config.ts';
import { emulatorServiceConfig, startStreamStack } from './lib/stream-stack.ts';
import { startWholeWorkerRig, type WholeWorkerRig } from './lib/whole-worker-side.ts';
import { typeScriptNode } from '../scripts/node-runtime.mjs';

const MODEL = 'ja-gen_tf-08';
const REQUEST_MS = 240;
const LATE_MS = 1.5 * REQUEST_MS;
/** Pacing held: at least 98 % of real time's requests per stream-second, and no stream failed. */
const HELD_RATE = 0.98 * (1000 / REQUEST_MS);
const SELF = fileURLToPath(import.meta.url);

type Side = 'client' | 'worker';

interface Measure {
  side: Side;
  streams: number;
  wallSeconds: number;
  cpuSeconds: number;
  requestsPerStreamSecond: number;
  lateSends: number;
  lagP99Ms: number;
  lagMaxMs: number;
  failed: number;
}

interface ChildInput {
  side: Side;
  streams: number;
  rampSeconds: number;
  holdSeconds: number;
  emulatorUrl: string;
  s3: S3Config;
  audioKey: string;
  audioSeconds: number;
}

/** One side at one step, in this (child) process. */
async function measure(input: ChildInput): Promise<Measure> {
  const service = createServiceClient(emulatorServiceConfig(input.emulatorUrl, MODEL, 1), {
    concurrency: { asrSessions: input.streams },
  });
  const store = createObjectStore(input.s3);
  const audio = await store.getBuffer(input.audioKey);
  let answers = 0;
  let late = 0;
  let measuring = false;
  let failed = 0;
  const lastAnswer = new Map<number, number>();
  const onAnswer = (stream: number) => {
    const now = performance.now();
    const last = lastAnswer.get(stream);
    lastAnswer.set(stream, now);
    if (!measuring) return;
    answers++;
    if (last !== undefined && now - last > LATE_MS) late++;
  };

  // Both sides see each stream's answers through the same thin wrapper of the client.
  let nextStream = 0;
  const counted: typeof service = {
    ...service,
    recognizeStream: (o) => {
      const stream = nextStream++;
      return service.recognizeStream({
        ...o,
        callbacks: {
          ...o.callbacks,
          onProgress: (p) => {
            onAnswer(stream);
            o.callbacks?.onProgress?.(p);
          },
        },
      });
    },
  };
  const asr = createAsrActivities({ service: counted, store, slowestPace: 1, model: MODEL });
  const open = (i: number): Promise<unknown> =>
    input.side === 'client'
      ? counted.recognizeStream({ audio: [audio], codec: 'mulaw', sampleRate: 8000, model: MODEL, speed: 1 })
          .done
      : // The activity reads the staged audio from S3 itself, in ranges, and stages partial results.
        asr.recognizeSession({
          callId: `bench-${i}`,
          session: i,
          audioKey: input.audioKey,
          start: 0,
          end: input.audioSeconds,
          resultKey: `bench/results/${process.pid}/${i}.json`,
          maxRestarts: 0,
        });

  const runs: Promise<unknown>[] = [];
  for (let i = 0; i < input.streams; i++) {
    runs.push(
      open(i).catch(() => {
        failed++;
      }),
    );
    await sleep((input.rampSeconds * 1000) / input.streams);
  }
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  measuring = true;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await sleep(input.holdSeconds * 1000);
  const cpu = process.cpuUsage(cpu0);
  const wallSeconds = (performance.now() - t0) / 1000;
  measuring = false;
  lag.disable();
  // The streams are left running: the child process exits once it has printed this.
  return {
    side: input.side,
    streams: input.streams,
    wallSeconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    requestsPerStreamSecond: answers / input.streams / wallSeconds,
    lateSends: late,
    lagP99Ms: lag.percentile(99) / 1e6,
    lagMaxMs: lag.max / 1e6,
    failed,
  };
}

function runChild(input: ChildInput): Promise<Measure> {
  return new Promise((resolve, reject) => {
    const child = spawn(typeScriptNode(), [SELF, '--child', JSON.stringify(input)], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code === 0 && line.startsWith('{')) resolve(JSON.parse(line) as Measure);
      else reject(new Error(`${input.side} at ${input.streams} streams exited with ${code}: ${out}`));
    });
  });
}

async function run(): Promise<void> {
  const { values } = parseArgs({
    options: {
      streams: { type: 'string', default: '16,32,64' },
      'ramp-seconds': { type: 'string', default: '20' },
      'hold-seconds': { type: 'string', default: '30' },
      sides: { type: 'string', default: 'client,worker,temporal' },
      /** A V8 CPU profile of the temporal side's worker per step, into this directory. */
      profile: { type: 'string' },
      child: { type: 'string' },
    },
  });
  if (values.child) {
    console.log(JSON.stringify(await measure(JSON.parse(values.child) as ChildInput)));
    process.exit(0);
  }
  const steps = values.streams.split(',').map(Number);
  const rampSeconds = Number(values['ramp-seconds']);
  const holdSeconds = Number(values['hold-seconds']);
  const audioSeconds = Math.ceil(rampSeconds + holdSeconds + 30);

  const sides = values.sides.split(',') as (Side | 'temporal')[];
  const stack = await startStreamStack(
    'scale',
    ['--speed', '1', '--concurrent-sessions', String(4 * Math.max(...steps)), '--rate-limit', '0'],
    { temporal: sides.includes('temporal') },
  );
  const { s3, emulatorUrl } = stack;
  let rig: WholeWorkerRig | undefined;
  try {
    // Quiet line audio (mu-law 0xff is silence): the streams' cost, not the recognizer's, is measured.
    const audioKey = 'bench/audio.mulaw';
    await createObjectStore(s3).put(audioKey, Buffer.alloc(audioSeconds * 8000, 0xff));

    console.log(
      `real-time scale, speed 1: ${rampSeconds} s ramp, ${holdSeconds} s hold with all streams open; ` +
        // A contended machine shows in the figures: say how loaded it was.
        `${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)} before the run`,
    );
    console.log(
      'streams  side    CPU ms/stream-s  req/stream/s  late sends  lag p99/max ms  streams/core  failed  pacing',
    );
    if (sides.includes('temporal'))
      rig = await startWholeWorkerRig(
        stack,
        { key: audioKey, seconds: audioSeconds, model: MODEL },
        values.profile,
      );
    for (const streams of steps) {
      for (const side of sides) {
        if (side === 'temporal') {
          const m = await rig!.measure(streams, rampSeconds, holdSeconds);
          const held =
            m.open === m.streams &&
            m.requestsPerStreamSecond >= HELD_RATE &&
            !m.failed &&
            m.sessionErrors === 0;
          console.log(
            [
              String(m.streams).padStart(7),
              'temporal'.padEnd(6),
              ((m.cpuSeconds * 1000) / (m.streams * m.wallSeconds)).toFixed(2).padStart(15),
              m.requestsPerStreamSecond.toFixed(2).padStart(12),
              '-'.padStart(10),
              '-'.padStart(14),
              (m.streams / (m.cpuSeconds / m.wallSeconds)).toFixed(0).padStart(12),
              String(m.sessionErrors + (m.failed ? 1 : 0)).padStart(6),
              held ? 'held' : m.open < m.streams ? `NOT HELD (${m.open} of ${m.streams} open)` : 'NOT HELD',
            ].join('  '),
          );
          // Where the worker's CPU went, by thread: JavaScript (node), Temporal's core (tokio), GC, libuv.
          const perStreamSecond = (s: number) => ((s * 1000) / (m.streams * m.wallSeconds)).toFixed(2);
          console.log(
            `${' '.repeat(17)}by thread, ms/stream-s: ` +
              Object.entries(m.threadCpuSeconds)
                .filter(([, s]) => s > 0)
                .sort((a, b) => b[1] - a[1])
                .map(([name, s]) => `${name} ${perStreamSecond(s)}`)
                .join(', '),
          );
          continue;
        }
        const m = await runChild({
          side,
          streams,
          rampSeconds,
          holdSeconds,
          emulatorUrl,
          s3,
          audioKey,
          audioSeconds,
        });
        const perStreamSecondMs = (m.cpuSeconds * 1000) / (m.streams * m.wallSeconds);
        const perCore = m.streams / (m.cpuSeconds / m.wallSeconds);
        console.log(
          [
            String(m.streams).padStart(7),
            side.padEnd(6),
            perStreamSecondMs.toFixed(2).padStart(15),
            m.requestsPerStreamSecond.toFixed(2).padStart(12),
            String(m.lateSends).padStart(10),
            `${m.lagP99Ms.toFixed(0)}/${m.lagMaxMs.toFixed(0)}`.padStart(14),
            perCore.toFixed(0).padStart(12),
            String(m.failed).padStart(6),
            // Behind real time, the CPU figure counts less work than the streams need: not a capacity.
            m.requestsPerStreamSecond >= HELD_RATE && m.failed === 0 ? 'held' : 'NOT HELD',
          ].join('  '),
        );
      }
    }
  } finally {
    await rig?.close();
    await stack.close();
  }
}

run().catch((err: unknown) => {
  console.error((err as Error).message);
  process.exit(1);
});
