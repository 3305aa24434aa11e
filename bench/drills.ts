/**
 * Fault drills (issue 7): a small batch (6 calls of 5–10 minutes, mono and stereo, WAV/M4A/MP3, at
 * speed 100) run fault-free once, then once per fault. Each drill prints the audio seconds streamed
 * again (emulator's count of audio received − the plan's session audio), the time lost against the
 * fault-free run, and whether its results are identical to the fault-free ones: every call done once
 * (one processRecording workflow and one result.json per call), same utterances (speaker, start, end,
 * text) call by call.
 *
 *   npm run bench:drills                          # every drill
 *   npm run bench:drills -- --only sigkill,s3     # baseline + the named drills
 *
 * Drills: `sigkill` (the workers process, mid-session), `temporal` (the dev server stopped and started
 * again on its SQLite file, mid-batch; the same workers must reconnect), `s3` (the S3 server stopped and
 * started again, mid-batch), `service-faults` (10 % of text requests answered 99997 and a recognition
 * error every 5 minutes of a session's audio), `token` (every access token revoked mid-batch).
 *
 * Sessions are planned `fixed` (one per track here): faults then land inside long sessions, the hard
 * case for resuming. Heartbeat timeout 5 s (default 30 s): at speed 100 a dead worker is noticed in
 * the same proportion of the work as 30 s would be at a few times real time.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { resolveSource, type Submitted } from '../cli/submit.ts';
import type { ManagedProcess } from '../cli/stack/process.ts';
import { startEmulator, type RunningEmulator } from '../emulator/server.ts';
import type { ResultDocument } from '../schemas/result.ts';
import { processRecording } from '../workflows/process-recording.ts';
import { countResultFiles } from './lib/result-files.ts';
import { startBenchStack, type BenchStack } from './lib/bench-stack.ts';
import { BENCH_CACHE, nightSpecs, renderCalls } from './lib/night-set.ts';
import { runCalls, type CallsRun } from './lib/run-calls.ts';
import { workersProcess } from './lib/workers-process.ts';
import { writeWorkflowBundle } from '../workers/runtime.ts';

const SPEED = 100;
const BUDGET = 16;
const HEARTBEAT_SECONDS = 5;
const DRILLS = ['sigkill', 'temporal', 's3', 'service-faults', 'token'] as const;
type DrillName = (typeof DRILLS)[number];

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const log = (line: string) => console.error(`[drills] ${line}`);

interface DrillContext {
  bench: BenchStack;
  submitted: Submitted[];
  /** Replaces the drill's workers process (after a kill). */
  replaceWorkers(): Promise<void>;
  workers(): ManagedProcess;
  emulator?: RunningEmulator;
  /** Audio seconds the emulator received since the drill started. */
  streamed(): Promise<number>;
}

interface DrillSpec {
  /** The drill's own emulator (faults); default the stack's. */
  emulator?: () => Promise<RunningEmulator>;
  during?: (ctx: DrillContext) => Promise<string>;
}

/** Waits until the emulator has received `seconds` of audio since it started, or throws. */
async function untilStreamed(audioReceived: () => Promise<number>, seconds: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  while ((await audioReceived().catch(() => 0)) < seconds) {
    if (Date.now() > deadline) throw new Error(`the batch never streamed ${seconds} s of audio`);
    await sleep(100);
  }
}

async function stackAudioReceived(bench: BenchStack): Promise<number> {
  const res = await fetch(`${bench.stack.addresses.emulatorUrl}/emulator/stats`);
  return ((await res.json()) as { audioSeconds: number }).audioSeconds;
}

function sessionAudio(docs: ResultDocument[]): number {
  return docs.reduce((s, d) => s + d.sessions.reduce((t, x) => t + (x.end - x.start), 0), 0);
}

/** What the drill's results have that the baseline's have not, call by call. */
function compare(baseline: CallsRun, run: CallsRun) {
  type U = ResultDocument['utterances'][number];
  const row = (u: U | undefined) => (u ? [u.speaker, u.start, u.end, u.text] : null);
  const key = (d: ResultDocument | undefined) => JSON.stringify(d?.utterances.map(row) ?? null);
  const differing = run.calls.flatMap((c, i) => {
    if (key(c.doc) === key(baseline.calls[i]!.doc)) return [];
    const a = baseline.calls[i]!.doc?.utterances ?? [];
    const b = c.doc?.utterances ?? [];
    const at = a.findIndex((u, k) => JSON.stringify(row(u)) !== JSON.stringify(row(b[k])));
    // Enough to see what went wrong: the counts and the first utterance that differs.
    return [
      {
        call: c.name,
        utterances: [a.length, b.length],
        first: at >= 0 ? [row(a[at]), row(b[at])] : undefined,
      },
    ];
  });
  const missing = run.calls.filter((c) => c.result.status !== 'done').map((c) => c.name);
  return { differing, missing };
}

async function run(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      calls: { type: 'string', default: '6' },
      keep: { type: 'boolean', default: false },
    },
  });
  const only = values.only ? (values.only.split(',') as DrillName[]) : [...DRILLS];
  const specs = nightSpecs({ calls: Number(values.calls), minSeconds: 300, maxSeconds: 600, seed: 11 });
  const paths = await renderCalls(specs, join(BENCH_CACHE, 'drills'), log);

  const bench = await startBenchStack({
    label: 'drills',
    speed: SPEED,
    budget: BUDGET,
    nlpRps: 45,
    workers: false,
    keep: values.keep,
    log,
  });
  const emulators: RunningEmulator[] = [];
  try {
    const { pc, stack } = bench;
    const bundlePath = await writeWorkflowBundle(bench.home);
    const sources = await Promise.all(
      specs.map(async (spec, i) => ({
        name: spec.name,
        source: await resolveSource(paths[i]!, pc.store, pc.config),
      })),
    );

    const runDrill = async (name: string, spec: DrillSpec = {}) => {
      const emulator = await spec.emulator?.();
      if (emulator) emulators.push(emulator);
      const prefix = `drill-${name}-${randomUUID().slice(0, 6)}`;
      const env: Record<string, string> = {
        CALLPIPE_TASK_QUEUE_PREFIX: prefix,
        ...(emulator
          ? {
              CALLPIPE_SERVICE_URL: emulator.baseUrl,
              CALLPIPE_AUTH_URL: emulator.authUrl,
              CALLPIPE_CLIENT_ID: emulator.clientId,
              CALLPIPE_CLIENT_SECRET: emulator.clientSecret,
              CALLPIPE_DOMAIN_ID: emulator.domainId,
            }
          : {}),
      };
      let generation = 1;
      let workers = workersProcess(stack, { name: `workers-${name}-1`, bundlePath, env });
      await workers.start();
      const audioReceived = emulator
        ? async () => emulator.stats().audioSeconds
        : () => stackAudioReceived(bench);
      const before = await audioReceived();
      let note = '';
      try {
        const config = { ...pc.config, temporal: { ...pc.config.temporal, taskQueuePrefix: prefix } };
        const result = await runCalls({ ...pc, config }, sources, {
          prefix: `drills/${prefix}/`,
          batchId: prefix,
          extra: { plan: { strategy: 'fixed' }, heartbeatTimeoutSeconds: HEARTBEAT_SECONDS },
          during: spec.during
            ? async (submitted) => {
                note = await spec.during!({
                  bench,
                  submitted,
                  emulator,
                  streamed: async () => (await audioReceived()) - before,
                  workers: () => workers,
                  async replaceWorkers() {
                    generation += 1;
                    workers = workersProcess(stack, {
                      name: `workers-${name}-${generation}`,
                      bundlePath,
                      env,
                    });
                    await workers.start();
                  },
                });
              }
            : undefined,
        });
        const docs = result.calls.flatMap((c) => (c.doc ? [c.doc] : []));
        const received = (await audioReceived()) - before;
        const workflows = (
          await pc.client.workflow.count(
            `WorkflowType = '${processRecording.name}' AND CallpipeBatchId = "${prefix}"`,
          )
        ).count;
        const results = await countResultFiles(bench.pc.store, `drills/${prefix}/`);
        return {
          result,
          docs,
          received,
          sessionAudio: sessionAudio(docs),
          workflows,
          results,
          note,
          workersAlive: workers.running,
        };
      } finally {
        await workers.stop();
      }
    };

    log('fault-free run…');
    const base = await runDrill('baseline');
    const baseline = {
      wallSeconds: round(base.result.wallSeconds),
      sessionAudioSeconds: round(base.sessionAudio),
      reStreamedSeconds: round(base.received - base.sessionAudio, 2),
      calls: base.result.calls.length,
      done: base.result.calls.filter((c) => c.result.status === 'done').length,
    };
    log(`baseline: ${JSON.stringify(baseline)}`);
    const halfway = base.sessionAudio / 2;

    const specsByName: Record<DrillName, DrillSpec> = {
      sigkill: {
        during: async (ctx) => {
          await untilStreamed(ctx.streamed, halfway);
          await ctx.workers().kill();
          const killedAt = Date.now();
          await ctx.replaceWorkers();
          return `workers SIGKILLed at half the batch's audio; new workers ready after ${round((Date.now() - killedAt) / 1000)} s`;
        },
      },
      temporal: {
        during: async (ctx) => {
          await untilStreamed(ctx.streamed, halfway);
          const t = ctx.bench.stack.processes.temporal;
          await t.stop();
          const stoppedAt = Date.now();
          await sleep(3000);
          await t.start();
          const down = round((Date.now() - stoppedAt) / 1000);
          return `Temporal down ${down} s at half the batch's audio; the workers process is not restarted`;
        },
      },
      s3: {
        during: async (ctx) => {
          await untilStreamed(ctx.streamed, halfway);
          const s3 = ctx.bench.stack.processes.s3;
          await s3.stop();
          const stoppedAt = Date.now();
          await sleep(3000);
          await s3.start();
          return `S3 down ${round((Date.now() - stoppedAt) / 1000)} s at half the batch's audio`;
        },
      },
      'service-faults': {
        emulator: () =>
          startEmulator({
            port: 0,
            speed: SPEED,
            seed: 5,
            faults: {
              seed: 5,
              rateLimitBursts: { probability: 0.1 },
              streamErrors: [{ code: 600, afterAudioSeconds: 300 }],
            },
          }),
      },
      token: {
        emulator: () => startEmulator({ port: 0, speed: SPEED, seed: 6 }),
        during: async (ctx) => {
          const emulator = ctx.emulator!;
          const t0 = Date.now();
          await untilStreamed(ctx.streamed, halfway);
          // Every token issued so far stops working now; new ones last as long again.
          emulator.setFaults({ tokenExpiry: { afterSeconds: Math.max(1, (Date.now() - t0) / 1000) } });
          return "every access token revoked at half the batch's audio";
        },
      },
    };

    const drills: Record<string, unknown> = {};
    for (const name of only) {
      log(`drill ${name}…`);
      const d = await runDrill(name, specsByName[name]);
      const { differing, missing } = compare(base.result, d.result);
      const duplicates = d.workflows - specs.length;
      drills[name] = {
        what: d.note || undefined,
        wallSeconds: round(d.result.wallSeconds),
        timeLostSeconds: round(d.result.wallSeconds - base.result.wallSeconds),
        reStreamedSeconds: round(d.received - d.sessionAudio, 2),
        restarts: d.docs.reduce((s, x) => s + x.processing.restarts, 0),
        retries: d.docs.reduce((s, x) => s + x.processing.retries, 0),
        processRecordingWorkflows: d.workflows,
        resultFiles: d.results,
        identical:
          differing.length === 0 && missing.length === 0 && duplicates === 0 && d.results === specs.length,
        differing,
        missing,
        workersAliveAtEnd: d.workersAlive,
      };
      log(`${name}: ${JSON.stringify(drills[name])}`);
    }
    console.log(
      JSON.stringify({ calls: specs.length, speed: SPEED, budget: BUDGET, baseline, drills }, null, 2),
    );
    if (Object.values(drills).some((d) => !(d as { identical: boolean }).identical)) process.exitCode = 1;
  } finally {
    for (const e of emulators) await e.close().catch(() => undefined);
    await bench.close();
  }
}

run().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
