/**
 * Session budget benchmark (issue 18, item 3): the same set of calls recognized by one asr worker process
 * of 16 slots (the baseline: one process, nothing shared) and by four asr worker processes of 16 slots
 * each sharing the emulator account's 16 sessions through the account's budget
 * (`CALLPIPE_ASR_ACCOUNT_SESSIONS`, workflows/session-budget.ts).
 *
 *   npm run bench:budget                         # 24 calls of 2–20 minutes at speed 10
 *   npm run bench:budget -- --quick              # 8 calls of 1–6 minutes at speed 10
 *   npm run bench:budget -- --calls 24 --speed 10 --workers 4 --sessions 16 [--order budget-first]
 *
 * Per pass, measured in that run: calls done and failed; the wall time from the first start to the last
 * result; recognition's makespan (first start to the last recognition's end, from the histories); the
 * emulator account's peak of open sessions and its `550 No Resource` answers (from the emulator's own
 * counters, reset before each pass); restarts. Then the ratio of the two makespans. The workflows, media
 * and text workers run in processes of their own, the same in both passes; only the asr processes change.
 * Rendering the calls is not measured (cached under `.bench-cache/budget/`).
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { planOptionsOf } from '../schemas/call-spec.ts';
import { DEFAULT_RATE_LIMIT } from '../schemas/emulator-accounts.ts';
import { resolveSource } from '../cli/submit.ts';
import type { ManagedProcess } from '../cli/stack/process.ts';
import { writeWorkflowBundle } from '../workers/runtime.ts';
import type { EmulatorStats } from '../emulator/server.ts';
import { startBenchStack } from './lib/bench-stack.ts';
import { BENCH_CACHE, nightSpecs, renderCalls } from './lib/night-set.ts';
import { runCalls } from './lib/run-calls.ts';
import { makespanBound } from './lib/makespan.ts';
import { queueWorkerProcess } from './lib/workers-process.ts';

/** Text requests per second at real time, under the emulator account's default 50/s. */
const TEXT_RPS = 45;

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;
const log = (line: string) => console.error(`[bench] ${line}`);

async function run(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      calls: { type: 'string' },
      speed: { type: 'string' },
      workers: { type: 'string', default: '4' },
      sessions: { type: 'string', default: '16' },
      order: { type: 'string', default: 'baseline-first' },
      keep: { type: 'boolean', default: false },
    },
  });
  const quick = values.quick;
  const speed = Number(values.speed ?? 10);
  // The emulator's 1-s deadlines are 100 ms at speed 10: a stall of a loaded 2-core machine would end a
  // session and spend a restart neither pass asked for (as in the integration stack).
  process.env.CALLPIPE_EMULATOR_DEADLINE_SLACK_MS ??= '2000';
  const sessions = Number(values.sessions);
  const workers = Number(values.workers);
  // 8-kHz WAV only: the transcodes stay cheap, so recognition (what the budget shares) sets the makespan.
  const specs = nightSpecs({
    calls: Number(values.calls ?? (quick ? 8 : 24)),
    minSeconds: quick ? 60 : 120,
    maxSeconds: quick ? 360 : 1200,
    seed: 18,
  }).map((spec) => ({
    ...spec,
    container: 'wav' as const,
    sampleRate: 8000,
    name: spec.name.replace(/-\d+\.\w+$/, '-8000.wav'),
  }));
  const paths = await renderCalls(specs, join(BENCH_CACHE, 'budget'), log);
  const textRateLimit = {
    requestsPerSecond: DEFAULT_RATE_LIMIT.requestsPerSecond * speed,
    burst: DEFAULT_RATE_LIMIT.burst * speed,
  };
  const bench = await startBenchStack({
    label: 'budget',
    speed,
    budget: sessions,
    nlpRps: TEXT_RPS * speed,
    textRateLimit,
    accountSessions: sessions,
    workers: false,
    keep: values.keep,
    log,
  });
  const running: ManagedProcess[] = [];
  try {
    const { pc, stack } = bench;
    const bundlePath = await writeWorkflowBundle(bench.home);
    const start = async (entry: 'workflows' | 'media' | 'asr' | 'nlp', name: string, env = {}) => {
      const p = queueWorkerProcess(stack, entry, {
        name,
        bundlePath,
        env: { CALLPIPE_LOG_LEVEL: 'warn', ...env },
      });
      await p.start();
      running.push(p);
      return p;
    };
    await Promise.all([start('workflows', 'workflows'), start('media', 'media'), start('nlp', 'nlp')]);
    const sources = await Promise.all(
      specs.map(async (spec, i) => ({
        name: spec.name,
        source: await resolveSource(paths[i]!, pc.store, pc.config),
      })),
    );
    const emulatorUrl = stack.addresses.emulatorUrl!;
    const emulatorStats = async () =>
      (await (await fetch(`${emulatorUrl}/emulator/stats`)).json()) as EmulatorStats;
    const plan = planOptionsOf({
      ...stack.config,
      limits: { ...stack.config.limits, asrConcurrentSessions: sessions },
    });

    const pass = async (label: string, asrProcesses: number, env: Record<string, string>) => {
      const asr = await Promise.all(
        Array.from({ length: asrProcesses }, (_, i) => start('asr', `asr-${label}-${i}`, env)),
      );
      await fetch(`${emulatorUrl}/emulator/stats/reset`, { method: 'POST' });
      log(`${label}: ${asrProcesses} asr process(es), ${specs.length} calls…`);
      const result = await runCalls(pc, sources, {
        prefix: `bench-budget/${label}-${Date.now()}/`,
        batchId: `bench-budget-${label}`,
        extra: { plan, pacingSpeed: speed },
      });
      const stats = await emulatorStats();
      await Promise.all(asr.map((p) => p.stop()));
      const docs = result.calls.flatMap((c) => (c.doc ? [c.doc] : []));
      const recognitions = result.calls
        .flatMap((c) => c.activities)
        .filter((a) => a.type === 'recognizeSession');
      const bound = makespanBound(docs, sessions, speed);
      return {
        asrProcesses,
        calls: result.calls.length,
        done: result.calls.filter((c) => c.result.status === 'done').length,
        failed: result.calls
          .filter((c) => c.result.status === 'failed')
          .map((c) => `${c.name}: ${c.result.reason}`),
        wallSeconds: round(result.wallSeconds, 1),
        recognitionMakespanSeconds: round(
          (Math.max(...recognitions.map((a) => a.endMs)) - result.t0) / 1000,
          1,
        ),
        idealRecognitionSeconds: round(bound.idealSeconds, 1),
        sessions: bound.sessions,
        peakOpenSessions: stats.accounts[0]?.peakSessions,
        noResource550: stats.byCode['550'] ?? 0,
        restarts: docs.reduce((s, d) => s + d.processing.restarts, 0),
      };
    };

    const baselineEnv = { CALLPIPE_ASR_CONCURRENT_SESSIONS: String(sessions) };
    const budgetEnv = {
      CALLPIPE_ASR_CONCURRENT_SESSIONS: String(sessions),
      CALLPIPE_ASR_ACCOUNT_SESSIONS: String(sessions),
    };
    const passes: Record<string, Awaited<ReturnType<typeof pass>>> = {};
    const order = values.order === 'budget-first' ? ['budget', 'baseline'] : ['baseline', 'budget'];
    for (const label of order) {
      passes[label] =
        label === 'baseline'
          ? await pass('baseline', 1, baselineEnv)
          : await pass('budget', workers, budgetEnv);
      log(JSON.stringify({ [label]: passes[label] }));
    }
    const { baseline, budget } = passes as Required<typeof passes>;
    console.log(
      JSON.stringify(
        {
          speed,
          accountSessions: sessions,
          calls: specs.length,
          recordingSeconds: specs.reduce((s, c) => s + c.durationSeconds, 0),
          order,
          baseline,
          budget,
          ratios: {
            wall: round(budget!.wallSeconds / baseline!.wallSeconds),
            recognitionMakespan: round(
              budget!.recognitionMakespanSeconds / baseline!.recognitionMakespanSeconds,
            ),
          },
        },
        null,
        2,
      ),
    );
  } finally {
    await Promise.all(running.map((p) => p.stop().catch(() => undefined)));
    await bench.close();
  }
}

run().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
