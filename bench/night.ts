/**
 * Night benchmark (issue 7): a synthetic night of calls through the real stack, planned `balanced`
 * and then `fixed` (a second pass with a fresh output prefix), each compared with its ideal makespan.
 *
 *   npm run bench:night              # 40 calls of 3–130 minutes
 *   npm run bench:night -- --quick   # 8 calls of 1–12 minutes, under two minutes
 *   npm run bench:night -- --calls 20 --max-minutes 60 --budget 16 --speed 100 [--strategies balanced]
 *
 * Per pass it prints, measured in that run: the wall time from the first start to the last result; the
 * ideal bound max(longest session, total session audio ÷ budget) ÷ speed and the ratio of the two;
 * requests per audio hour by endpoint (from each result.json); the workers process's peak RSS
 * (VmHWM; the workers are restarted before each pass); and the transcode share of the wall time (the
 * union of the transcode activities' intervals, from the workflows' histories); the machine's CPU
 * saturation and each process's cores (ffmpeg counted as the workers' children), so that a CPU-bound
 * pass shows as one; and where the budget's slot-seconds went (streaming, per-session overhead,
 * dispatch, starved, tail: bench/lib/makespan.ts), which is what stands between the ratio and 1; and
 * what an audio hour cost (bench/lib/cost-meter.ts), with the machine's speed in a fixed unit.
 * Rendering the night's audio is not measured: files are cached under `.bench-cache/night/`.
 *
 * Text requests run at the service's rate compressed like its clock (`--text-rate compressed`, the
 * default): at speed 100 a night's recognition takes 1/100 of its real time, and so must the 50
 * requests/s of text analysis, or the benchmark measures a night in which text analysis is 100 times
 * its real share. `--text-rate real` keeps 45/s whatever the speed.
 */
import { join, resolve } from 'node:path';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import { planOptionsOf } from '../schemas/call-spec.ts';
import type { PipelineClient } from '../cli/stack-client.ts';
import { demoReasonsModel } from '../cli/demo-reasons.ts';
import { createServiceClient } from '../service/index.ts';
import { DEFAULT_TEXT_GRAINS, TEXT_GRAINS, type TextGrain, type TextGrains } from '../schemas/text-grains.ts';
import { DEFAULT_RATE_LIMIT } from '../schemas/emulator-accounts.ts';
import { resolveSource } from '../cli/submit.ts';
import type { ResultDocument } from '../schemas/result.ts';
import { startBenchStack } from './lib/bench-stack.ts';
import { BENCH_CACHE, nightSpecs, renderCalls } from './lib/night-set.ts';
import { runCalls, type CallsRun } from './lib/run-calls.ts';
import {
  dialogActUnitsPerAudioHour,
  fileMakespanBound,
  makespanBound,
  slotSeconds,
  requestsPerAudioHour,
} from './lib/makespan.ts';
import { RECOGNITION_MODES, type RecognitionMode } from '../schemas/recognition.ts';
import { activityTimes, stageWalls } from './lib/stage-breakdown.ts';
import { startCpuMeter, threadCpu, type CpuUse } from './lib/cpu-meter.ts';
import {
  deltaBy,
  heartbeatsAtRealTime,
  namespaceActions,
  perHour,
  referenceTranscode,
  scrape,
} from './lib/cost-meter.ts';
import { mediaTools } from '../schemas/process-settings.ts';
import { toolEnv } from '../cli/tools/provision.ts';
import { peakRssMb } from './lib/proc-memory.ts';
import { unionMs } from './lib/activity-intervals.ts';
import { requestLogLines, textRequestsPerAudioHour } from './lib/text-requests.ts';

type Strategy = 'balanced' | 'fixed';

/** One pass of the night: a planning strategy and a recognition mode, under its key in the output. */
interface Variant {
  key: string;
  strategy: Strategy;
  recognition: RecognitionMode;
  /** Issue 40's features (`--features compare`): off or on; absent, the defaults. */
  features?: 'off' | 'on';
}

/** The activities that recognize: a stream session, or a group of pieces by file requests. */
const RECOGNITION_ACTIVITIES = new Set(['recognizeSession', 'recognizePieces']);

const longestCall = (run: CallsRun) =>
  [...run.calls].sort((a, b) => (b.doc?.audio.durationSeconds ?? 0) - (a.doc?.audio.durationSeconds ?? 0))[0];

/** The longest call's wall time per stage and its activities' waits and run times (stage-breakdown.ts). */
function longestCallBreakdown(run: CallsRun) {
  const call = longestCall(run);
  if (!call?.doc) return undefined;
  return {
    name: call.name,
    audioSeconds: round(call.doc.audio.durationSeconds),
    stages: stageWalls(call.doc),
    activities: activityTimes(call.activities),
  };
}

/**
 * Each call's course through the pass, in seconds from its start, in the order the calls ended: its
 * probe's and plan's start and end, its recognition's first start and last end, and its last activity's
 * end. The call that ended last, and what it waited on, is the pass's critical path.
 */
function callTimelines(run: CallsRun): string[] {
  const at = (ms: number) => round((ms - run.t0) / 1000, 1);
  const span = (acts: CallsRun['calls'][number]['activities']) =>
    acts.length === 0
      ? '-'
      : `${at(Math.min(...acts.map((a) => a.startMs)))}–${at(Math.max(...acts.map((a) => a.endMs)))}`;
  return run.calls
    .filter((c) => c.activities.length > 0)
    .map((c) => ({ c, end: Math.max(...c.activities.map((a) => a.endMs)) }))
    .sort((a, b) => a.end - b.end)
    .map(
      ({ c, end }) =>
        `${c.name}: probe ${span(c.activities.filter((a) => a.type === 'probeSource'))}` +
        ` plan ${span(c.activities.filter((a) => a.type === 'planSource'))}` +
        ` recognize ${span(c.activities.filter((a) => RECOGNITION_ACTIVITIES.has(a.type)))} end ${at(end)}`,
    );
}

/**
 * The largest activity inputs and results in the pass's histories, with their activity type and call:
 * what would come near Temporal's payload limits (a warning at 512 KiB) on longer calls.
 */
function largestPayloads(run: CallsRun, top = 5) {
  return run.calls
    .flatMap((c) =>
      c.activities.flatMap((a) => [
        { type: a.type, part: 'input', bytes: a.inputBytes, call: c.name },
        { type: a.type, part: 'result', bytes: a.resultBytes, call: c.name },
      ]),
    )
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, top);
}

/**
 * The longest call's time outside recognition: from its first activity to its first recognition, and
 * from its last recognition to its last activity (probe, plan; merge, speakers, text steps, publish).
 */
function outsideRecognitionSeconds(run: CallsRun): number {
  const acts = longestCall(run)?.activities ?? [];
  const rec = acts.filter((a) => RECOGNITION_ACTIVITIES.has(a.type));
  if (acts.length === 0 || rec.length === 0) return 0;
  const first = Math.min(...acts.map((a) => a.scheduledMs));
  const last = Math.max(...acts.map((a) => a.endMs));
  return (
    (Math.min(...rec.map((a) => a.startMs)) - first + last - Math.max(...rec.map((a) => a.endMs))) / 1000
  );
}

const USAGE = `npm run bench:night -- [options]   (bench/README.md, "Night")
  --quick                 8 calls of 1–12 minutes (default: 40 calls of 3–130 minutes)
  --calls N               the first N calls of the night (seeded: a prefix of the full night)
  --min-minutes M         shortest call (default 3, quick 1)
  --max-minutes M         longest call, always the first (default 130, quick 12)
  --budget N              concurrent recognition sessions (default 16)
  --speed X               the emulator's clock (default 100)
  --text-rate compressed|real   text-request rate sped up like the clock (default) or not
  --nlp-rps N             the client's text requests per second (default 45 × speed when compressed)
  --strategies a,b        planning passes (default balanced,fixed)
  --recognition a,b       recognition passes instead, each planned by the first strategy: stream, file,
                          auto (e.g. stream,file: file mode's wall over stream mode's, in one run)
  --file-rtf R            the emulator answers a file request after R × its audio (default 0.25)
  --account-sessions N    the account's sessions shared through the session budget
                          (CALLPIPE_ASR_ACCOUNT_SESSIONS) and the emulator's account limit; absent, each
                          worker process counts its own (--budget)
  --probe-slots N         probes at once per media worker (CALLPIPE_PROBE_CONCURRENCY; default the stack's, 2)
  --features compare      each strategy's pass with call reasons and transcript quality off, then on
                          (reasons with a model trained from the demo's scripted examples): text
                          requests per audio hour on over off (issue 40's 1.15 bound)
  --garbled S             a night of poorly recognized calls: share S (0–1) of the customer's lines
                          misheard or unknown (default 0)
  --seed N                the night's seed (default 7)
  --keep                  keep the stack's home (logs, the emulator's request log, each pass's activities)
  --stereo                every call stereo (the same lengths, containers and rates)
  --sentiment-grain G     sentiment per utterance, turn or window (default: the configuration's, window)
  --dialog-acts G         dialog acts per utterance, turn or window, or off (default: turn)
  --repeat N              each strategy's pass N times (fresh workers each); prints the least CPU of them
  --profile DIR           the workers' V8 CPU profiles (node --cpu-prof), one per pass, into DIR
  --node-options=FLAGS    Node/V8 flags for the workers (NODE_OPTIONS), e.g. --node-options=--max-semi-space-size=64
  --transcripts FILE      the first pass's transcripts: written to FILE, or compared with it when it exists
Prints JSON per pass: wall and ideal, recognition makespan, requests per audio hour by endpoint (the
results' own counts and, from the emulator's request log, text requests with the budget of 1,360), and
its cost per audio hour (Temporal actions by kind, history events per call, S3 requests by operation,
service requests by endpoint, audio streamed, CPU seconds by process, worker thread and activity type);
and the machine's speed: the CPU seconds ffmpeg takes for one fixed synthetic hour (machine.reference).`;

/** Text requests per second at real time: under the emulator account's default 50/s, as the stack runs. */
const TEXT_RPS = 45;

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Speaker, start, end and text of every utterance, one string each: what must not depend on how the call was cut. */
function transcriptOf(doc: ResultDocument | undefined): string[] {
  return (
    doc?.utterances.map((u) => JSON.stringify([u.speaker, round(u.start, 2), round(u.end, 2), u.text])) ?? []
  );
}

/** Per call whose transcripts differ: the first utterance that does, and both utterance counts. */
function transcriptDifferences(names: string[], a: [string, string[][]], b: [string, string[][]]) {
  return names.flatMap((call, i) => {
    const [x, y] = [a[1][i]!, b[1][i]!];
    const at = x.findIndex((u, k) => u !== y[k]);
    // A prefix of the other differs where it ends.
    const first = at !== -1 ? at : x.length !== y.length ? x.length : undefined;
    if (first === undefined) return [];
    return [{ call, utterance: first, [a[0]]: x[first], [b[0]]: y[first], counts: [x.length, y.length] }];
  });
}

type CostFigures = Awaited<ReturnType<typeof passCost>>;

/**
 * Each strategy's CPU seconds per audio hour, each figure the least of its repeats: a busy machine only
 * ever adds CPU time (cache misses, migrations), so the least is the closest to the pipeline's own.
 */
function leastCpu(strategies: string[], repeat: number, passes: Record<string, { cost: CostFigures }>) {
  const least = (records: Record<string, number>[]) => {
    const out: Record<string, number> = {};
    for (const record of records)
      for (const [k, v] of Object.entries(record)) out[k] = Math.min(out[k] ?? Infinity, v);
    return out;
  };
  return Object.fromEntries(
    strategies.map((strategy) => {
      const cpu = Array.from(
        { length: repeat },
        (_, i) => passes[`${strategy}-${i + 1}`]!.cost.perAudioHour.cpuSeconds,
      );
      return [
        strategy,
        {
          pipeline: Math.min(...cpu.map((c) => c.pipeline)),
          byProcess: least(cpu.map((c) => c.byProcess)),
          workersByThread: least(cpu.map((c) => c.workersByThread)),
          byActivityType: least(cpu.map((c) => c.byActivityType)),
        },
      ];
    }),
  );
}

/**
 * The first pass's transcripts against `file`'s (a run before a change): the calls that differ, with
 * their first differing utterance. Without the file, it is written, for the run after.
 */
function transcriptsFile(file: string, names: string[], transcript: string[][]) {
  if (!existsSync(file)) {
    writeFileSync(file, JSON.stringify(Object.fromEntries(names.map((n, i) => [n, transcript[i]]))));
    return { written: file };
  }
  const before = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string[]>;
  const differences = transcriptDifferences(
    names,
    ['before', names.map((n) => before[n] ?? [])],
    ['now', transcript],
  );
  return {
    comparedWith: file,
    calls: names.length,
    callsWithDifferentTranscripts: differences.length,
    differences,
  };
}

function passFigures(
  run: CallsRun,
  budget: number,
  speed: number,
  rssMb: number | undefined,
  requestLog: { path: string; from: number } | undefined,
  fileRtf: number,
) {
  const docs = run.calls.flatMap((c) => (c.doc ? [c.doc] : []));
  const audioSeconds = docs.reduce((s, d) => s + d.audio.durationSeconds, 0);
  const bound = makespanBound(docs, budget, speed);
  const activities = run.calls.flatMap((c) => c.activities);
  const transcodeMs = unionMs(activities.filter((a) => a.type === 'transcodeSource'));
  const recognizeMs = unionMs(activities.filter((a) => RECOGNITION_ACTIVITIES.has(a.type)));
  const recognitions = activities.filter((a) => RECOGNITION_ACTIVITIES.has(a.type));
  const firstRecognition = Math.min(...recognitions.map((a) => a.startMs));
  // Recognition's own makespan: what the planner and the session budget decide. The rest of the wall
  // time is the text analysis of the last calls to finish recognition.
  const recognitionMakespan = (Math.max(...recognitions.map((a) => a.endMs)) - run.t0) / 1000;
  // What stood between the start and the first recognition: that call's activities up to it, each as
  // seconds from the start when asked for (queued), started and ended.
  const firstCall = run.calls.find((c) => c.activities.some((a) => a.startMs === firstRecognition));
  const secondsOf = (ms: number) => round((ms - run.t0) / 1000, 2);
  const startup = (firstCall?.activities ?? [])
    .filter((a) => a.startMs <= firstRecognition)
    .sort((a, b) => a.scheduledMs - b.scheduledMs)
    .map((a) => `${a.type} ${secondsOf(a.scheduledMs)}/${secondsOf(a.startMs)}/${secondsOf(a.endMs)}`);
  return {
    calls: run.calls.length,
    done: run.calls.filter((c) => c.result.status === 'done').length,
    failed: run.calls
      .filter((c) => c.result.status !== 'done')
      .map((c) => `${c.name}: ${c.result.stage ?? ''} ${c.result.reason ?? c.result.status}`),
    audioHours: round(audioSeconds / 3600, 2),
    sessions: bound.sessions,
    sessionAudioSeconds: Math.round(bound.totalSessionSeconds),
    longestSessionSeconds: round(bound.longestSessionSeconds),
    wallSeconds: round(run.wallSeconds),
    idealSeconds: round(bound.idealSeconds),
    ratio: round(run.wallSeconds / bound.idealSeconds, 3),
    ...fileFigures(run, docs, budget, speed, fileRtf),
    longestCall: longestCallBreakdown(run),
    timeline: callTimelines(run),
    largestPayloads: largestPayloads(run),
    requestsPerAudioHour: requestsPerAudioHour(docs),
    dialogActUnitsPerAudioHour: dialogActUnitsPerAudioHour(docs),
    // What the emulator received during the pass, by endpoint: the text-request budget (issues 15, 16).
    ...(requestLog
      ? {
          textRequestsPerAudioHour: textRequestsPerAudioHour(
            requestLogLines(requestLog.path, requestLog.from),
            audioSeconds,
          ),
        }
      : {}),
    workersPeakRssMb: rssMb,
    // Audio seconds per second of a session's activity: below `speed` when requests cannot keep the
    // schedule (a CPU-bound machine) or sessions wait.
    effectiveSpeed: round(
      bound.totalSessionSeconds / (recognitions.reduce((t, a) => t + a.endMs - a.startMs, 0) / 1000),
    ),
    recognitionMakespanSeconds: round(recognitionMakespan),
    recognitionRatio: round(recognitionMakespan / bound.idealSeconds, 3),
    // budget × recognition makespan, by what the slots did: what stands between the ratio and 1.
    slotSeconds: slotSeconds(recognitions, run.t0, budget, bound.totalSessionSeconds / speed),
    transcodeShare: round(transcodeMs / 1000 / run.wallSeconds, 3),
    transcodeSeconds: round(transcodeMs / 1000),
    recognitionSpanSeconds: round(recognizeMs / 1000),
    firstRecognitionAfterSeconds: round((firstRecognition - run.t0) / 1000),
    // queued/started/ended, seconds from the start
    startup,
  };
}

/**
 * File recognition's figures of a pass with pieces (issue 38): its ideal (fileMakespanBound) and the
 * pass's wall over it.
 */
function fileFigures(run: CallsRun, docs: ResultDocument[], budget: number, speed: number, rtf: number) {
  const outside = outsideRecognitionSeconds(run);
  const file = fileMakespanBound(docs, budget, speed, rtf, outside);
  if (file.pieces === 0) return {};
  return {
    file: {
      pieces: file.pieces,
      pieceAudioSeconds: Math.round(file.pieceAudioSeconds),
      streamedSeconds: Math.round(file.streamedSeconds),
      longestCallOutsideRecognitionSeconds: round(outside),
      idealSeconds: round(file.idealSeconds),
      ratio: round(run.wallSeconds / file.idealSeconds, 3),
    },
  };
}

/**
 * The stack's CPU (workers, their ffmpeg children, emulator, Temporal, S3) of pass b over pass a's, and
 * the cores each pass got (its CPU seconds over its wall). On a machine the passes cannot have to
 * themselves, a pass bound by CPU takes its CPU seconds over the cores it gets: then the walls' ratio is
 * this ratio times the cores' ratio, whatever order the work ran in.
 */
function cpuRatios(a: string, b: string, passA: { wallSeconds: number; cpu: CpuUse }, passB: typeof passA) {
  const stack = (cpu: CpuUse) => Object.values(cpu.processSeconds).reduce((n, x) => n + x, 0);
  return {
    [`${b}StackCpuOver${a}StackCpu`]: round(stack(passB.cpu) / stack(passA.cpu), 3),
    stackCpuSeconds: { [a]: round(stack(passA.cpu)), [b]: round(stack(passB.cpu)) },
    stackCores: {
      [a]: round(stack(passA.cpu) / passA.wallSeconds, 2),
      [b]: round(stack(passB.cpu) / passB.wallSeconds, 2),
    },
  };
}

/** Per audio hour, pass b's text requests, Temporal actions, S3 requests and history events over a's. */
function costRatios(a: string, b: string, ca: CostFigures, cb: CostFigures) {
  const text = (c: CostFigures) =>
    Object.entries(c.perAudioHour.serviceRequests)
      .filter(([k]) => k.startsWith('nlp/'))
      .reduce((n, [, v]) => n + v, 0);
  const ratio = (x: number, y: number) => (y > 0 ? round(x / y, 3) : null);
  return {
    [`${b}Over${a}PerAudioHour`]: {
      textRequests: ratio(text(cb), text(ca)),
      temporalActions: ratio(cb.perAudioHour.actions.total, ca.perAudioHour.actions.total),
      s3Requests: ratio(cb.perAudioHour.s3Requests.total, ca.perAudioHour.s3Requests.total),
      historyEventsPerCall: ratio(cb.historyEventsPerCall.mean, ca.historyEventsPerCall.mean),
      fileAudioSeconds: round(cb.perAudioHour.fileAudioSeconds),
    },
  };
}

/**
 * What one audio hour of the pass cost (bench/lib/cost-meter.ts): Temporal actions by kind (from every
 * history in the pass's window; heartbeats as the workers counted them), history events per call, S3
 * requests by operation, service requests by endpoint, audio streamed (restarts included), and CPU
 * seconds by process, the workers' threads and activity type.
 */
async function passCost(input: {
  client: Client;
  fromMs: number;
  audioHours: number;
  speed: number;
  /** Text requests at the service's rate × the speed (`--text-rate compressed`). */
  textCompressed: boolean;
  counters: [Awaited<ReturnType<typeof scrape>>, Awaited<ReturnType<typeof scrape>>];
  threads: [Record<string, number>, Record<string, number>];
  cpu: CpuUse;
}) {
  const [c0, c1] = input.counters;
  const hours = input.audioHours;
  const heartbeats = deltaBy(c0, c1, 'callpipe_activity_heartbeats_sent_total', 'activity_type');
  const history = await namespaceActions(input.client, input.fromMs, Date.now());
  const actions = {
    ...history.actions,
    activityHeartbeat: Object.values(heartbeats).reduce((a, b) => a + b, 0),
  };
  const threads = Object.fromEntries(
    Object.entries(input.threads[1]).map(([name, s]) => [name, s - (input.threads[0][name] ?? 0)]),
  );
  const byProcess = input.cpu.processSeconds;
  // The pipeline's CPU: workers, their ffmpeg, Temporal, S3; the emulator stands for the service.
  const pipeline = ['workers', 'workers children', 'temporal', 's3'].reduce(
    (n, k) => n + (byProcess[k] ?? 0),
    0,
  );
  const streamed = deltaBy(c0, c1, 'callpipe_asr_audio_seconds_streamed_total').total ?? 0;
  const filed = deltaBy(c0, c1, 'callpipe_asr_file_audio_seconds_total').total ?? 0;
  return {
    audioHours: hours,
    workflows: history.workflows,
    historyEventsPerCall: {
      mean: round(history.historyEventsPerCall.mean),
      max: history.historyEventsPerCall.max,
    },
    perAudioHour: {
      actions: perHour(actions, hours),
      heartbeatsByActivity: perHour(heartbeats, hours),
      heartbeatsAtRealTime: round(
        heartbeatsAtRealTime(heartbeats, input.speed, input.textCompressed) / hours,
      ),
      // What the histories' run times give for the heartbeats: beside the workers' count, a check.
      heartbeatsEstimatedFromHistories: round(history.estimatedHeartbeats / hours),
      s3Requests: perHour(deltaBy(c0, c1, 'callpipe_s3_requests_total', 'operation'), hours),
      s3RequestsByActivity: perHour(deltaBy(c0, c1, 'callpipe_s3_requests_total', 'activity_type'), hours),
      serviceRequests: perHour(deltaBy(c0, c1, 'callpipe_service_requests_total', 'endpoint'), hours),
      audioSecondsStreamed: round(streamed / hours),
      // Audio sent in file requests (pieces), retried ones included: what the service bills of file mode.
      fileAudioSeconds: round(filed / hours),
      cpuSeconds: {
        pipeline: round(pipeline / hours),
        byProcess: perHour(byProcess, hours),
        workersByThread: perHour(threads, hours),
        byActivityType: perHour(
          deltaBy(c0, c1, 'callpipe_activity_cpu_seconds_total', 'activity_type'),
          hours,
        ),
      },
    },
  };
}

/**
 * The passes' call specs with issue 40's features off (no reasons, no quality step) and on (the
 * defaults: quality on; reasons with a model trained from the demo's scripted examples).
 */
async function featureSpecs(pc: PipelineClient, home: string, log: (line: string) => void) {
  const chars = pc.config.insights.reasonsChars;
  const model = await demoReasonsModel(createServiceClient(pc.config.service), home, chars, log);
  const quality = {
    checkBelow: pc.config.insights.misrecognitionBelow,
    reviewBelow: pc.config.insights.reviewBelow,
  };
  return {
    off: { reasons: undefined, quality: undefined },
    on: { quality, ...(model ? { reasons: { model, text: 'customer' as const, chars } } : {}) },
  };
}

/** Text requests per audio hour of each strategy's pass with the features over without: the +15 % bound. */
function featuresComparison(
  strategies: string[],
  repeat: number,
  passes: Record<
    string,
    { textRequestsPerAudioHour?: { total: number; byEndpoint: Record<string, number> } }
  >,
) {
  return Object.fromEntries(
    strategies.map((strategy) => {
      const pass = (mode: string) => passes[`${strategy}-features-${mode}${repeat > 1 ? '-1' : ''}`];
      const off = pass('off')?.textRequestsPerAudioHour;
      const on = pass('on')?.textRequestsPerAudioHour;
      return [
        strategy,
        off && on
          ? {
              textRequestsPerAudioHourOff: off.total,
              textRequestsPerAudioHourOn: on.total,
              onOverOff: round(on.total / off.total, 3),
              withinBound: on.total <= 1.15 * off.total,
              added: {
                detect_misrecognition: on.byEndpoint.detect_misrecognition ?? 0,
                classifier: on.byEndpoint.classifier ?? 0,
              },
            }
          : null,
      ];
    }),
  );
}

async function run(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      calls: { type: 'string' },
      'min-minutes': { type: 'string' },
      'max-minutes': { type: 'string' },
      budget: { type: 'string', default: '16' },
      speed: { type: 'string', default: '100' },
      // `compressed`: the service's text rate (the emulator's 50/s, the client's 45/s) sped up like its
      // clock, so text analysis keeps its real share of a night; `real`: 50/s and 45/s whatever the speed.
      'text-rate': { type: 'string', default: 'compressed' },
      'nlp-rps': { type: 'string' },
      strategies: { type: 'string', default: 'balanced,fixed' },
      recognition: { type: 'string' },
      'file-rtf': { type: 'string', default: '0.25' },
      'account-sessions': { type: 'string' },
      'probe-slots': { type: 'string' },
      features: { type: 'string' },
      garbled: { type: 'string' },
      seed: { type: 'string', default: '7' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      stereo: { type: 'boolean', default: false },
      'sentiment-grain': { type: 'string' },
      'dialog-acts': { type: 'string' },
      repeat: { type: 'string', default: '1' },
      profile: { type: 'string' },
      'node-options': { type: 'string' },
      transcripts: { type: 'string' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const quick = values.quick;
  const shape = {
    calls: Number(values.calls ?? (quick ? 8 : 40)),
    minSeconds: Number(values['min-minutes'] ?? (quick ? 1 : 3)) * 60,
    maxSeconds: Number(values['max-minutes'] ?? (quick ? 12 : 130)) * 60,
    seed: Number(values.seed),
    allStereo: values.stereo,
    garbled: Number(values.garbled ?? 0),
  };
  if (!(shape.garbled >= 0 && shape.garbled <= 1))
    throw new Error(`--garbled takes a share 0–1, not ${values.garbled}`);
  const budget = Number(values.budget);
  const speed = Number(values.speed);
  const strategies = values.strategies.split(',').map((s) => s.trim()) as Strategy[];
  const fileRtf = Number(values['file-rtf']);
  const accountSessions = values['account-sessions'] ? Number(values['account-sessions']) : undefined;
  if (accountSessions !== undefined && !(Number.isInteger(accountSessions) && accountSessions > 0))
    throw new Error(`--account-sessions takes a whole number of sessions, not ${values['account-sessions']}`);
  const probeSlots = values['probe-slots'] ? Number(values['probe-slots']) : undefined;
  if (probeSlots !== undefined && !(Number.isInteger(probeSlots) && probeSlots > 0))
    throw new Error(`--probe-slots takes a whole number of probes, not ${values['probe-slots']}`);
  const variants: Variant[] = values.recognition
    ? values.recognition.split(',').map((m) => {
        const recognition = m.trim() as RecognitionMode;
        if (!(RECOGNITION_MODES as readonly string[]).includes(recognition))
          throw new Error(`--recognition takes ${RECOGNITION_MODES.join(', ')}, not ${m}`);
        return { key: recognition, strategy: strategies[0]!, recognition };
      })
    : values.features === 'compare'
      ? strategies.flatMap((strategy) =>
          (['off', 'on'] as const).map((features) => ({
            key: `${strategy}-features-${features}`,
            strategy,
            recognition: 'stream' as const,
            features,
          })),
        )
      : strategies.map((strategy) => ({ key: strategy, strategy, recognition: 'stream' as const }));
  if (values.features !== undefined && values.features !== 'compare')
    throw new Error(`--features takes compare, not ${values.features}`);
  const repeat = Number(values.repeat);
  if (!Number.isInteger(repeat) || repeat < 1) throw new Error(`--repeat must be a whole number ≥ 1`);
  const log = (line: string) => console.error(`[night] ${line}`);
  // The bench's stack takes no configuration from the environment: the defaults, unless told otherwise.
  const grains = DEFAULT_TEXT_GRAINS;
  const grainOption = (name: string, value: string | undefined, allowed: readonly string[]) => {
    if (value !== undefined && !allowed.includes(value))
      throw new Error(`--${name} must be one of ${allowed.join(', ')}, not ${value}`);
    return value;
  };
  const textGrains: TextGrains = {
    ...grains,
    sentiment: (grainOption('sentiment-grain', values['sentiment-grain'], TEXT_GRAINS) ??
      grains.sentiment) as TextGrain,
    dialogActs: (grainOption('dialog-acts', values['dialog-acts'], [...TEXT_GRAINS, 'off']) ??
      grains.dialogActs) as TextGrains['dialogActs'],
  };

  const specs = nightSpecs(shape);
  log(`rendering what the cache lacks of ${specs.length} calls (not measured)…`);
  const paths = await renderCalls(specs, join(BENCH_CACHE, 'night'), log);

  if (values['text-rate'] !== 'compressed' && values['text-rate'] !== 'real')
    throw new Error(`--text-rate must be compressed or real, not ${values['text-rate']}`);
  const textScale = values['text-rate'] === 'compressed' ? speed : 1;
  const nlpRps = values['nlp-rps'] ? Number(values['nlp-rps']) : TEXT_RPS * textScale;
  const textRateLimit = {
    requestsPerSecond: DEFAULT_RATE_LIMIT.requestsPerSecond * textScale,
    burst: DEFAULT_RATE_LIMIT.burst * textScale,
  };
  log(`text requests: ${nlpRps}/s against the emulator account's ${textRateLimit.requestsPerSecond}/s`);
  const bench = await startBenchStack({
    label: 'night',
    speed,
    budget,
    nlpRps,
    textRateLimit,
    fileRtf,
    ...(accountSessions ? { accountSessions } : {}),
    keep: values.keep,
    log,
    workerEnv: {
      ...(accountSessions ? { CALLPIPE_ASR_ACCOUNT_SESSIONS: String(accountSessions) } : {}),
      // The stack sets its workers' probe slots from its own configuration; this goes over it.
      ...(probeSlots ? { CALLPIPE_PROBE_CONCURRENCY: String(probeSlots) } : {}),
      // A profile is written when the workers exit, as they do at the end of each pass.
      ...(values.profile || values['node-options']
        ? {
            NODE_OPTIONS: [
              process.env.NODE_OPTIONS,
              values['node-options'],
              values.profile ? `--cpu-prof --cpu-prof-dir=${resolve(values.profile)}` : undefined,
            ]
              .filter(Boolean)
              .join(' '),
          }
        : {}),
    },
  });
  try {
    const { pc, stack } = bench;
    log('uploading the night (not measured)…');
    const sources = await Promise.all(
      specs.map(async (spec, i) => ({
        name: spec.name,
        source: await resolveSource(paths[i]!, pc.store, pc.config),
      })),
    );
    const recordingSeconds = specs.reduce((s, c) => s + c.durationSeconds, 0);
    // The machine's speed in a fixed unit, measured in this run: figures of two machines compare by it.
    const reference = referenceTranscode(mediaTools({ ...process.env, ...toolEnv(stack.tools) }).ffmpeg);
    log(`reference transcode: ${JSON.stringify(reference)}`);
    const passes: Record<
      string,
      ReturnType<typeof passFigures> & { cpu: CpuUse; cost: Awaited<ReturnType<typeof passCost>> }
    > = {};
    const transcripts: Record<string, string[][]> = {};
    const repeatsDiffering: Record<string, string[]> = {};
    const features = values.features ? await featureSpecs(pc, stack.addresses.home, log) : undefined;
    for (const { key: name, strategy, recognition, features: mode } of variants)
      for (let r = 1; r <= repeat; r++) {
        const key = repeat > 1 ? `${name}-${r}` : name;
        // Fresh workers per pass: their peak RSS belongs to this pass alone.
        const workers = await stack.startWorkers();
        log(`${key}: ${specs.length} calls, ${round(recordingSeconds / 3600, 2)} h of recordings…`);
        const plan = planOptionsOf({
          ...stack.config,
          limits: { ...stack.config.limits, planStrategy: strategy },
        });
        const text = textGrains;
        const cpu = startCpuMeter({
          workers: workers.pid,
          emulator: stack.processes.emulator?.pid,
          temporal: stack.processes.temporal.pid,
          s3: stack.processes.s3.pid,
        });
        const logPath = stack.addresses.requestLog;
        const requestLog = logPath ? { path: logPath, from: requestLogLines(logPath).length } : undefined;
        const counters = await scrape(stack.addresses.metricsUrl);
        const threads = threadCpu(workers.pid);
        const fromMs = Date.now();
        const result = await runCalls(pc, sources, {
          prefix: `night/${Date.now()}-${name}/`,
          batchId: `night-${name}`,
          extra: { plan, text, recognition, ...(features && mode ? features[mode] : {}) },
        });
        const cpuUse = cpu.read();
        const figures = passFigures(result, budget, speed, peakRssMb(workers.pid), requestLog, fileRtf);
        passes[key] = {
          ...figures,
          // Cores kept busy over the pass (workers' children: ffmpeg), and the machine's busy share: near
          // 1, the pass is CPU-bound and pacing is not what sets its length.
          cpu: cpuUse,
          cost: await passCost({
            client: pc.client,
            fromMs,
            audioHours: figures.audioHours,
            speed,
            textCompressed: values['text-rate'] === 'compressed',
            counters: [counters, await scrape(stack.addresses.metricsUrl)],
            threads: [threads, threadCpu(workers.pid)],
            cpu: cpuUse,
          }),
        };
        const transcript = result.calls.map((c) => transcriptOf(c.doc));
        // Repeats of one strategy must agree: a difference is the pipeline's, not the plan's.
        if (r === 1) transcripts[name] = transcript;
        else
          repeatsDiffering[key] = transcriptDifferences(
            specs.map((spec) => spec.name),
            [`${name}-1`, transcripts[name]!],
            [key, transcript],
          ).map((d) => d.call);
        if (values.keep) {
          // Every activity's interval, for a closer look at a pass than its figures give.
          const file = join(stack.addresses.home, `activities-${key}.json`);
          writeFileSync(
            file,
            JSON.stringify(
              result.calls.map((c) => ({ call: c.name, t0: result.t0, activities: c.activities })),
            ),
          );
          log(`${key}: activities in ${file}`);
        }
        log(`${key}: ${JSON.stringify(passes[key])}`);
      }
    // Again after the passes: one ffmpeg run of a few seconds varies with the machine's moment (a
    // shared host), so the pipeline's CPU is also given in units of the mean of both.
    const referenceEnd = referenceTranscode(mediaTools({ ...process.env, ...toolEnv(stack.tools) }).ffmpeg);
    log(`reference transcode after the passes: ${JSON.stringify(referenceEnd)}`);
    const referenceMean = (reference.cpuSeconds + referenceEnd.cpuSeconds) / 2;
    const [a, b] = variants.map((v) => v.key);
    const firstKey = (strategy: string | undefined) => (repeat > 1 ? `${strategy}-1` : strategy);
    const [passA, passB] = [passes[firstKey(a) ?? ''], passes[firstKey(b) ?? '']];
    // The first utterance that differs, per call: what a reader needs to tell a moved cut from noise.
    const differences =
      a && b && transcripts[a] && transcripts[b]
        ? transcriptDifferences(
            specs.map((spec) => spec.name),
            [a, transcripts[a]],
            [b, transcripts[b]],
          )
        : [];
    const summary = {
      night: {
        calls: specs.length,
        recordingHours: round(recordingSeconds / 3600, 2),
        stereo: specs.filter((s) => s.stereo).length,
        containers: [...new Set(specs.map((s) => s.container))],
        sampleRates: [...new Set(specs.map((s) => s.sampleRate))].sort((x, y) => x - y),
        minutes: [Math.min(...specs.map((s) => s.durationSeconds)) / 60, shape.maxSeconds / 60],
        garbled: shape.garbled,
      },
      budget,
      ...(accountSessions ? { accountSessions } : {}),
      speed,
      fileRtf,
      machine: {
        reference,
        referenceEnd,
        // Pipeline CPU seconds per audio hour ÷ the reference's mean CPU seconds: comparable across
        // machines and across runs on one machine whose speed moved.
        pipelineCpuInReferenceUnits: Object.fromEntries(
          Object.entries(passes).map(([key, pass]) => [
            key,
            round(pass.cost.perAudioHour.cpuSeconds.pipeline / referenceMean, 3),
          ]),
        ),
      },
      textRequestsPerSecond: nlpRps,
      // What the text steps ran with (redaction always runs): the configuration's or the options'.
      textSteps: { redaction: 'on', ...textGrains },
      passes,
      ...(features ? { features: featuresComparison(strategies, repeat, passes) } : {}),
      ...(repeat > 1
        ? {
            leastCpuPerAudioHour: leastCpu(
              variants.map((v) => v.key),
              repeat,
              passes,
            ),
            repeatsWithDifferentTranscripts: repeatsDiffering,
          }
        : {}),
      ...(values.transcripts && a && transcripts[a]
        ? {
            transcriptsFile: transcriptsFile(
              values.transcripts,
              specs.map((spec) => spec.name),
              transcripts[a],
            ),
          }
        : {}),
      ...(a && b && passA && passB
        ? {
            comparison: {
              [`${b}WallOver${a}Wall`]: round(passB.wallSeconds / passA.wallSeconds, 3),
              [`${b}IdealOver${a}Ideal`]: round(passB.idealSeconds / passA.idealSeconds, 3),
              ...costRatios(a, b, passA.cost, passB.cost),
              ...cpuRatios(a, b, passA, passB),
              callsWithDifferentTranscripts: differences.length,
              differences,
            },
          }
        : {}),
    };
    console.log(JSON.stringify(summary, null, 2));
    if (Object.values(passes).some((p) => p.done !== p.calls)) process.exitCode = 1;
  } finally {
    await bench.close();
  }
}

run().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
