/**
 * bench/latency: how soon a same-day call is analysed. A stack of its own (`startBenchStack`: real
 * Temporal, S3, ffmpeg, workers; the emulator at --speed 1, real-time pacing), a watch on a prefix with a
 * short settle (its calls get latency-first plans, as `callpipe watch` starts them), and stereo
 * speech-like calls (the night bench's synthetic calls, with silences) of 2, 5, 10 and 30 minutes
 * uploaded under it. For each call: the time from the end of its upload to its `result.json`.
 *
 * - **alone**: one call at a time, the account's sessions free;
 * - **behind a backlog**: first enough 10-minute calls started as a backfill would (throughput plan) to
 *   queue about `--backlog-factor` × the account's sessions, then, once sessions wait, one call of each
 *   length uploaded at once.
 *
 * Per length and phase it prints p50 and p95 of the latency, the ideal (the longest piece's audio ÷ speed,
 * plus the settle) and their ratio, the sessions per call and the plan each call got. Target: p95 within
 * 2 minutes of upload for calls up to 30 minutes, alone. Exit code 1 when a call fails.
 *
 *   npm run bench:latency                                  # 2 calls per length alone, one backlog round
 *   npm run bench:latency -- --lengths 2,5 --alone 1 --backlog 0
 */
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { startBenchStack } from './lib/bench-stack.ts';
import { BENCH_CACHE, renderCalls, type CallSpec as RenderedCall } from './lib/night-set.ts';
import { startWatch, watchIdOf } from '../cli/commands/watch.ts';
import { callSpec, outputLocation, resolveSource, submitRecording } from '../cli/submit.ts';
import type { PipelineClient } from '../cli/stack-client.ts';
import { latencyFirst } from '../schemas/call-spec.ts';
import { watchInputSchema } from '../schemas/watch.ts';
import { callIdOf, callIdRuleOf } from '../activities/storage/call-id.ts';
import { callOutputKeys } from '../schemas/call-keys.ts';
import { sessionRoom } from '../activities/watch/session-room.ts';
import { taskQueues } from '../schemas/config.ts';
import { stopWatchUpdate } from '../workflows/watch.ts';
import type { OutputLocation } from '../schemas/recording.ts';
import type { ResultDocument } from '../schemas/result.ts';
import { RECOGNITION_MODES, type RecognitionMode } from '../schemas/recognition.ts';
import { activityIntervals } from './lib/activity-intervals.ts';
import { deltaBy, scrape } from './lib/cost-meter.ts';
import { activityTimes, breakdownLine, stageWalls, type ActivityTimes } from './lib/stage-breakdown.ts';

const USAGE = `Usage: npm run bench:latency -- [--lengths 2,5,10,30] [--alone 2] [--backlog 1] [--sessions 64]
       [--settle 5] [--speed 1] [--backlog-factor 3] [--recognition stream|file|auto] [--file-rtf 0.25]
       [--nlp-rps N] [--keep]`;

/** The stereo filler calls of a backlog, and the sessions each is planned into (throughput plan). */
const FILLER_SECONDS = 600;
/** Longest wait for one call's result before the bench gives up on it. */
const CALL_TIMEOUT_MS = 30 * 60_000;
const POLL_MS = 250;

interface Measured {
  name: string;
  minutes: number;
  phase: 'alone' | 'backlog';
  latencySeconds: number;
  idealSeconds: number;
  sessions: number;
  longestSeconds: number;
  plan: string;
  /** The recognition stage's wall time (result.json processing.wallSeconds.recognize). */
  recognizeSeconds: number;
  /**
   * Text requests by step (result.json processing.requests, recognition left out), and the dialog acts'
   * units: what one request per unit would have sent, against one per distinct text.
   */
  text?: { requests: Record<string, number>; dialogActUnits: number | undefined };
  /**
   * Where the latency went: `upload to start` (the watch's settle and listing), each stage's wall time,
   * `result seen` (the bench's poll); per activity type its waits and run times, and its CPU seconds
   * (the workers' and their ffmpeg's, shared among the activities running: alone, this call's).
   */
  breakdown?: {
    stages: Record<string, number>;
    activities: Record<string, ActivityTimes>;
    cpuSeconds: Record<string, number>;
  };
  status: 'done' | 'failed';
}

const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Nearest-rank percentile. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}

/** The plan a result says it got: `latency`, or the throughput plan it fell back to and why. */
function planOf(doc: ResultDocument): string {
  if (doc.recognition && doc.recognition.used !== 'stream') return doc.recognition.used;
  const decisions = doc.audio.channelAnalysis?.decisions ?? [];
  if (decisions.some((d) => d.startsWith('cut for latency'))) return 'latency';
  const fallback = decisions.find((d) => d.startsWith('latency plan not used'));
  return fallback ? `throughput (${/\(([^)]*)\)/.exec(fallback)?.[1] ?? '?'})` : 'throughput';
}

function textRequestsOf(doc: ResultDocument): Measured['text'] {
  const requests = Object.fromEntries(
    Object.entries(doc.processing.requests)
      .filter(([step]) => step !== 'recognition')
      .map(([step, cost]) => [step, cost.requests]),
  );
  return { requests, dialogActUnits: doc.dialogActs?.units };
}

async function untilResult(pc: PipelineClient, output: OutputLocation, key: string) {
  const callId = callIdOf({ bucket: pc.store.bucket, key }, callIdRuleOf(pc.config));
  const keys = callOutputKeys(output, callId);
  const deadline = Date.now() + CALL_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (await pc.store.exists(keys.result)) return { at: Date.now(), key: keys.result };
    if (await pc.store.exists(keys.error)) return { at: Date.now(), error: keys.error };
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new Error(`no result for ${key} within ${CALL_TIMEOUT_MS / 60_000} minutes`);
}

/** A call's latency by stage (see {@link Measured.breakdown}). */
async function breakdownOf(
  pc: PipelineClient,
  doc: ResultDocument,
  uploadedMs: number,
  seenMs: number,
  cpu: Record<string, number>,
): Promise<NonNullable<Measured['breakdown']>> {
  const { workflowId, runId, startedAt } = doc.processing;
  const started = Date.parse(startedAt);
  const walls = stageWalls(doc);
  const stages = {
    'upload to start': round((started - uploadedMs) / 1000),
    ...walls,
    'result seen': round((seenMs - started) / 1000 - (walls.total ?? 0)),
  };
  const intervals = await activityIntervals(pc.client.workflow.getHandle(workflowId, runId));
  const cpuSeconds = Object.fromEntries(
    Object.entries(cpu)
      .filter(([, v]) => v >= 0.05)
      .map(([k, v]) => [k, round(v, 2)]),
  );
  return { stages, activities: activityTimes(intervals), cpuSeconds };
}

async function run(): Promise<void> {
  const { values } = parseArgs({
    options: {
      lengths: { type: 'string', default: '2,5,10,30' },
      alone: { type: 'string', default: '2' },
      backlog: { type: 'string', default: '1' },
      sessions: { type: 'string', default: '64' },
      settle: { type: 'string', default: '5' },
      speed: { type: 'string', default: '1' },
      'backlog-factor': { type: 'string', default: '3' },
      recognition: { type: 'string', default: 'stream' },
      'file-rtf': { type: 'string', default: '0.25' },
      // The client's text requests per second (CALLPIPE_NLP_RPS); default the configuration's.
      'nlp-rps': { type: 'string' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const lengths = values.lengths.split(',').map((m) => Number(m.trim()));
  const alone = Number(values.alone);
  const rounds = Number(values.backlog);
  const sessions = Number(values.sessions);
  const settle = Number(values.settle);
  const speed = Number(values.speed);
  const factor = Number(values['backlog-factor']);
  const recognition = values.recognition as RecognitionMode;
  if (!(RECOGNITION_MODES as readonly string[]).includes(recognition)) throw new Error(USAGE);
  const fileRtf = Number(values['file-rtf']);
  if (
    [...lengths, sessions, speed].some((n) => !(n > 0)) ||
    !(alone >= 0) ||
    !(rounds >= 0) ||
    !(settle >= 0)
  )
    throw new Error(USAGE);
  const log = (line: string) => console.error(`[latency] ${line}`);

  // Every upload is a call of its own content (its own seed): nothing is shared or skipped as done.
  const call = (name: string, seconds: number, seed: number): RenderedCall => ({
    name,
    durationSeconds: seconds,
    stereo: true,
    container: 'wav',
    sampleRate: 8000,
    seed,
  });
  const aloneCalls = Array.from({ length: alone }, (_, rep) =>
    lengths.map((m) => call(`alone-${m}m-${rep}.wav`, m * 60, 7100 + m * 10 + rep)),
  ).flat();
  const backlogCalls = Array.from({ length: rounds }, (_, r) =>
    lengths.map((m) => call(`behind-${m}m-${r}.wav`, m * 60, 7500 + m * 10 + r)),
  );
  // The throughput plan cuts a 10-minute stereo call into sessions of the planner's floor (60 s).
  const fillerSessions = Math.ceil((2 * FILLER_SECONDS) / 60);
  const fillersPerRound = Math.ceil((factor * sessions) / fillerSessions);
  const fillers = Array.from({ length: rounds }, (_, r) =>
    Array.from({ length: fillersPerRound }, (_, i) =>
      call(`filler-${r}-${i}.wav`, FILLER_SECONDS, 7900 + r * 100 + i),
    ),
  );
  const all = [...aloneCalls, ...backlogCalls.flat(), ...fillers.flat()];
  log(`rendering what the cache lacks of ${all.length} calls (not measured)…`);
  const paths = new Map(
    (await renderCalls(all, join(BENCH_CACHE, 'latency'), log)).map((p, i) => [all[i]!.name, p]),
  );

  const bench = await startBenchStack({
    label: 'latency',
    speed,
    budget: sessions,
    ...(sessions > 64 ? { accountSessions: sessions } : {}),
    fileRtf,
    ...(values['nlp-rps'] ? { nlpRps: Number(values['nlp-rps']) } : {}),
    keep: values.keep,
    log,
  });
  const measured: Measured[] = [];
  try {
    const { pc } = bench;
    const output = outputLocation(undefined, pc.config);
    const prefix = 'incoming/latency/';
    const input = watchInputSchema.parse({
      watchId: watchIdOf({ bucket: pc.store.bucket, prefix }, output),
      source: { bucket: pc.store.bucket, prefix },
      output,
      settleSeconds: settle,
      pollSeconds: 1,
      spec: latencyFirst(callSpec(pc.config, output, undefined, recognition)),
    });
    const { handle } = await startWatch(pc, input);
    log(
      `watching s3://${pc.store.bucket}/${prefix} (settle ${settle} s, ${sessions} sessions, speed ${speed})`,
    );

    // Keys sort in upload order: the watch lists the keys after the last it took (a key sorting before it
    // would wait for the reconciliation).
    let uploads = 0;
    const metricsUrl = bench.stack.addresses.metricsUrl;
    const measure = async (c: RenderedCall, phase: Measured['phase']): Promise<Measured> => {
      const key = `${prefix}${String(uploads++).padStart(3, '0')}-${c.name}`;
      const counters = await scrape(metricsUrl);
      await pc.store.putFile(key, paths.get(c.name)!);
      const uploaded = Date.now();
      const done = await untilResult(pc, output, key);
      const cpuSeconds = deltaBy(
        counters,
        await scrape(metricsUrl),
        'callpipe_activity_cpu_seconds_total',
        'activity_type',
      );
      const latencySeconds = (done.at - uploaded) / 1000;
      const minutes = c.durationSeconds / 60;
      if (!('key' in done) || !done.key) {
        log(`${c.name}: FAILED after ${round(latencySeconds)} s (${done.error})`);
        return {
          name: c.name,
          minutes,
          phase,
          latencySeconds,
          idealSeconds: NaN,
          sessions: 0,
          longestSeconds: 0,
          plan: '?',
          recognizeSeconds: NaN,
          status: 'failed',
        };
      }
      const doc = JSON.parse(await pc.store.getText(done.key)) as ResultDocument;
      const longestSeconds = Math.max(...doc.sessions.map((s) => s.end - s.start));
      // A piece takes its audio × the service's real-time factor; a stream session its audio.
      const longestWork = Math.max(
        ...doc.sessions.map((s) => (s.end - s.start) * (s.recognition === 'file' ? fileRtf : 1)),
      );
      const m: Measured = {
        name: c.name,
        minutes,
        phase,
        latencySeconds,
        idealSeconds: longestWork / speed + settle,
        recognizeSeconds: doc.processing.wallSeconds.recognize ?? 0,
        text: textRequestsOf(doc),
        sessions: doc.sessions.length,
        longestSeconds,
        plan: planOf(doc),
        breakdown: await breakdownOf(pc, doc, uploaded, done.at, cpuSeconds),
        status: 'done',
      };
      log(
        `${phase} ${c.name}: ${round(latencySeconds)} s (ideal ${round(m.idealSeconds)} s), ` +
          `${m.sessions} sessions, longest ${round(longestSeconds)} s, plan ${m.plan}`,
      );
      log(`  ${breakdownLine(m.breakdown!.stages, m.breakdown!.activities)}`);
      log(`  CPU s by activity: ${JSON.stringify(m.breakdown!.cpuSeconds)}`);
      log(`  text requests: ${JSON.stringify(m.text)}`);
      return m;
    };

    for (const c of aloneCalls) measured.push(await measure(c, 'alone'));

    const asrQueue = taskQueues(pc.config).asr;
    for (let r = 0; r < rounds; r++) {
      log(
        `backlog round ${r + 1}: ${fillersPerRound} calls of ${FILLER_SECONDS / 60} min (throughput plan)…`,
      );
      const fillerOutput = outputLocation(`s3://${pc.store.bucket}/bench-latency/backlog-${r}/`, pc.config);
      const started = await Promise.all(
        fillers[r]!.map(async (c) =>
          submitRecording(pc, await resolveSource(paths.get(c.name)!, pc.store, pc.config), {
            output: fillerOutput,
            batchId: `bench-latency-backlog-${r}`,
          }),
        ),
      );
      // Behind a backlog: once sessions wait for a slot.
      const deadline = Date.now() + 5 * 60_000;
      for (;;) {
        const room = await sessionRoom({ temporal: pc.client }, { asrQueue, workerSessions: sessions });
        if (room.waiting > 0) {
          log(`${room.waiting} sessions wait: uploading one call of each length`);
          break;
        }
        if (Date.now() > deadline) throw new Error('the backlog never made sessions wait');
        await new Promise((res) => setTimeout(res, 1000));
      }
      measured.push(...(await Promise.all(backlogCalls[r]!.map((c) => measure(c, 'backlog')))));
      await Promise.all(started.map((s) => s.handle.result()));
    }
    await handle.executeUpdate(stopWatchUpdate).catch(() => undefined);
  } finally {
    await bench.close();
  }

  // Figures.
  const lines: string[] = [];
  const summary: Record<string, unknown>[] = [];
  for (const phase of ['alone', 'backlog'] as const) {
    for (const m of lengths) {
      const rows = measured.filter((x) => x.phase === phase && x.minutes === m && x.status === 'done');
      if (rows.length === 0) continue;
      const lat = rows.map((x) => x.latencySeconds);
      const ideal = percentile(
        rows.map((x) => x.idealSeconds),
        0.5,
      );
      const p50 = percentile(lat, 0.5);
      const p95 = percentile(lat, 0.95);
      const recognizeP95 = percentile(
        rows.map((x) => x.recognizeSeconds),
        0.95,
      );
      const plans = [...new Set(rows.map((x) => x.plan))].join(', ');
      const sessionsPerCall = rows.map((x) => x.sessions).join('/');
      lines.push(
        `${phase.padEnd(8)} ${String(m).padStart(3)} min  n=${rows.length}  p50 ${round(p50)} s  p95 ${round(p95)} s  ` +
          `ideal ${round(ideal)} s  p95/ideal ${round(p95 / ideal, 2)}  recognition p95 ${round(recognizeP95)} s  ` +
          `sessions ${sessionsPerCall}  plan ${plans}`,
      );
      summary.push({
        phase,
        minutes: m,
        n: rows.length,
        p50,
        p95,
        ideal,
        ratio: p95 / ideal,
        recognizeP95,
        sessions: rows.map((x) => x.sessions),
        plans,
      });
    }
  }
  console.log(lines.join('\n'));
  const aloneP95 = measured
    .filter((x) => x.phase === 'alone' && x.status === 'done')
    .map((x) => x.latencySeconds);
  if (aloneP95.length > 0) {
    const worst = Math.max(
      ...lengths.map((m) => {
        const lat = measured
          .filter((x) => x.phase === 'alone' && x.minutes === m)
          .map((x) => x.latencySeconds);
        return lat.length ? percentile(lat, 0.95) : 0;
      }),
    );
    console.log(
      `target (p95 within 120 s of upload, alone): worst p95 ${round(worst)} s: ${worst <= 120 ? 'met' : 'NOT met'}`,
    );
  }
  console.log(
    JSON.stringify({
      recognition,
      fileRtf,
      settle,
      speed,
      nlpRps: values['nlp-rps'] ? Number(values['nlp-rps']) : "the configuration's",
      latency: summary,
      calls: measured,
    }),
  );
  if (measured.some((x) => x.status === 'failed')) process.exitCode = 1;
}

run().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
