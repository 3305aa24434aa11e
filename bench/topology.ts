/**
 * The production topology, drilled (issue 18, item 4). Temporal server on PostgreSQL (pinned Go builds
 * under .tools/, built on first use: cli/tools/temporal-server.ts), SeaweedFS, the emulator with an account
 * of `--sessions` recognition sessions, and worker processes per task queue as docker-compose.yml runs them
 * (bench/lib/topology.ts: 2 workflow, 2 media, 3 asr, 2 nlp; the asr ones share the account's budget).
 * Two backfills of the same `--calls` recordings (uploaded under two prefixes, identical call by call):
 * fault-free, then with a random worker process SIGKILLed every `--kill-every` seconds and a new one
 * started in its place. Checks, per pass: every call done exactly once (one processRecording workflow and
 * one result.json per call), the drill's results identical to the fault-free ones call by call (content:
 * audio, sessions' cuts, utterances, talk, text analyses, insights; not times or counters of the run),
 * and the emulator account's peak of open sessions within its limit. Prints wall times, kills, retried
 * activities and restarts. Not part of npm test.
 *
 *   npm run bench:topology
 *   npm run bench:topology -- --calls 200 --seconds 60 --speed 20 --sessions 16 --kill-every 20 [--keep]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { progressLine, startBackfill } from '../cli/commands/backfill.ts';
import { outputLocation } from '../cli/submit.ts';
import { callIdOf, callIdRuleOf } from '../activities/storage/call-id.ts';
import { callOutputKeys } from '../schemas/call-keys.ts';
import type { EmulatorStats } from '../emulator/server.ts';
import { DEFAULT_RATE_LIMIT } from '../schemas/emulator-accounts.ts';
import type { ResultDocument } from '../schemas/result.ts';
import { seededRandom } from '../schemas/seeded-random.ts';
import { backfillProgressQuery } from '../workflows/backfill.ts';
import { processRecording } from '../workflows/process-recording.ts';
import { writeWorkflowBundle } from '../workers/runtime.ts';
import { ensureTemporalServer } from '../cli/tools/temporal-server.ts';
import { countResultFiles } from './lib/result-files.ts';
import { startBenchStack } from './lib/bench-stack.ts';
import { activityIntervals } from './lib/activity-intervals.ts';
import { startWorkerFleet, TOPOLOGY, type WorkerFleet } from './lib/topology.ts';
import { recordingKey, uniqueRecordings, uploadRecordings } from './lib/unique-recordings.ts';

/** Text requests per second at real time, under the emulator account's default 50/s. */
const TEXT_RPS = 45;

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const log = (line: string) => console.error(`[topology] ${line}`);

/**
 * What a call's result says about the call, not about the run that made it: left out are its ids and
 * keys (each pass has its own prefix), `processing` and `writtenAt`, and of each session what a restart or
 * a reused staging changes (restarts, audio sent again).
 */
export function resultContent(doc: ResultDocument): string {
  const {
    callId: _callId,
    source: _source,
    processing: _processing,
    writtenAt: _writtenAt,
    rules: _rules,
    sessions,
    ...content
  } = doc;
  return JSON.stringify({
    ...content,
    sessions: sessions.map((s) => [s.index, s.track, s.speaker, s.start, s.end, s.cut]),
  });
}

interface Pass {
  label: string;
  prefix: string;
  wallSeconds: number;
  docs: (ResultDocument | undefined)[];
  done: number;
  failed: number;
  processRecordingWorkflows: number;
  resultFiles: number;
  peakOpenSessions: number;
  noResource550: number;
  /** Attempts beyond the first, by activity type. */
  retried: Record<string, number>;
  restarts: number;
  kills: string[];
}

async function run(): Promise<void> {
  const { values } = parseArgs({
    options: {
      calls: { type: 'string', default: '200' },
      seconds: { type: 'string', default: '60' },
      speed: { type: 'string', default: '20' },
      sessions: { type: 'string', default: '16' },
      'kill-every': { type: 'string', default: '20' },
      concurrency: { type: 'string', default: '50' },
      seed: { type: 'string', default: '18' },
      keep: { type: 'boolean', default: false },
    },
  });
  const calls = Number(values.calls);
  const speed = Number(values.speed);
  const sessions = Number(values.sessions);
  const killEvery = Number(values['kill-every']);
  // The emulator's 1-s deadlines are 50 ms at speed 20: a stall of a loaded 2-core machine would end a
  // session and spend a restart neither pass asked for (as in the session budget bench).
  process.env.CALLPIPE_EMULATOR_DEADLINE_SLACK_MS ??= '2000';

  const tools = ensureTemporalServer({ log });
  log(
    `Temporal server ${tools.server}${tools.uiServer ? `, UI server ${tools.uiServer}` : ', no UI server'}`,
  );
  const bench = await startBenchStack({
    label: 'topology',
    speed,
    budget: sessions,
    nlpRps: TEXT_RPS * speed,
    textRateLimit: {
      requestsPerSecond: DEFAULT_RATE_LIMIT.requestsPerSecond * speed,
      burst: DEFAULT_RATE_LIMIT.burst * speed,
    },
    accountSessions: sessions,
    workers: false,
    temporal: 'postgresql',
    keep: values.keep,
    log,
  });
  let fleet: WorkerFleet | undefined;
  try {
    const { pc, stack } = bench;
    const emulatorUrl = stack.addresses.emulatorUrl!;
    const emulatorStats = async () =>
      (await (await fetch(`${emulatorUrl}/emulator/stats`)).json()) as EmulatorStats;
    const bundlePath = await writeWorkflowBundle(bench.home);
    fleet = await startWorkerFleet(stack, {
      bundlePath,
      label: 'topology',
      env: { CALLPIPE_LOG_LEVEL: 'warn' },
      queueEnv: {
        asr: {
          CALLPIPE_ASR_CONCURRENT_SESSIONS: String(sessions),
          CALLPIPE_ASR_ACCOUNT_SESSIONS: String(sessions),
          // A killed worker's leases come back after this; it must outlast the time the service keeps a
          // silent session open (the emulator's 10 s idle timeout ÷ speed, plus its slack), as 60 s does
          // at real time.
          CALLPIPE_ASR_LEASE_SECONDS: String(Math.max(10, Math.ceil(60 / speed) + 10)),
        },
      },
    });
    log(`workers: ${fleet.names().join(', ')}`);

    log(`rendering and uploading ${calls} recordings of ${values.seconds} s, twice…`);
    const body = await uniqueRecordings({ seconds: Number(values.seconds), dir: bench.home });
    const run = randomUUID().slice(0, 6);
    for (const label of ['fault-free', 'drill'])
      await uploadRecordings(pc.store, body, calls, `recordings/topology-${run}/${label}/`);

    const random = seededRandom(Number(values.seed));
    const pass = async (label: string, kill: boolean): Promise<Pass> => {
      const source = `recordings/topology-${run}/${label}/`;
      const output = outputLocation(`s3://${pc.store.bucket}/results/topology-${run}/${label}/`, pc.config);
      const batchId = `topology-${run}-${label}`;
      await fetch(`${emulatorUrl}/emulator/stats/reset`, { method: 'POST' });
      log(`${label}: backfill of ${calls} calls…`);
      const t0 = Date.now();
      const started = await startBackfill(pc, {
        batchId,
        source: { kind: 'prefix', bucket: pc.store.bucket, prefix: source },
        output,
        concurrency: Number(values.concurrency),
      });
      const kills: string[] = [];
      let finished = false;
      // A kill every `killEvery` seconds of the pass, on the clock: replacements start meanwhile (a slot
      // whose replacement is still starting is not killed again).
      const replacements: Promise<unknown>[] = [];
      const killer = (async () => {
        for (let k = 1; kill && !finished; k++) {
          await sleep(Math.max(0, t0 + k * killEvery * 1000 - Date.now()));
          if (finished) break;
          const killable = fleet!.killable();
          const at = killable[Math.floor(random() * killable.length)]!;
          const killedAt = round((Date.now() - t0) / 1000);
          const { killed, ready } = await fleet!.killAndReplace(at);
          kills.push(killed);
          replacements.push(
            ready.then((s) =>
              log(`killed ${killed} at ${killedAt} s; its replacement ready ${round(s)} s later`),
            ),
          );
        }
      })();
      const progress = setInterval(() => {
        started.handle
          .query(backfillProgressQuery)
          .then((p) => log(`${label}: ${progressLine(p)}`))
          .catch(() => undefined);
      }, 15_000);
      const result = await started.handle.result().finally(() => {
        finished = true;
        clearInterval(progress);
      });
      const wallSeconds = (Date.now() - t0) / 1000;
      await killer;
      await Promise.all(replacements);
      const stats = await emulatorStats();
      const docs = await Promise.all(
        Array.from({ length: calls }, async (_, i) => {
          const callId = callIdOf(
            { bucket: pc.store.bucket, key: recordingKey(source, i) },
            callIdRuleOf(pc.config),
          );
          const key = callOutputKeys(output, callId).result;
          const text = await pc.store
            .withBucket(output.bucket)
            .getText(key)
            .catch(() => undefined);
          return text ? (JSON.parse(text) as ResultDocument) : undefined;
        }),
      );
      const present = docs.filter((d): d is ResultDocument => !!d);
      // Attempts beyond the first, from the histories: what the kills cost in retried activities.
      const retried: Record<string, number> = {};
      for await (const w of pc.client.workflow.list({
        query: `WorkflowType = '${processRecording.name}' AND CallpipeBatchId = "${batchId}"`,
      })) {
        for (const a of await activityIntervals(pc.client.workflow.getHandle(w.workflowId, w.runId)))
          if (a.attempt > 1) retried[a.type] = (retried[a.type] ?? 0) + a.attempt - 1;
      }
      return {
        label,
        prefix: source,
        wallSeconds: round(wallSeconds),
        docs,
        done: result.done,
        failed: result.failed,
        processRecordingWorkflows: (
          await pc.client.workflow.count(
            `WorkflowType = '${processRecording.name}' AND CallpipeBatchId = "${batchId}"`,
          )
        ).count,
        resultFiles: await countResultFiles(bench.pc.store, output.prefix),
        peakOpenSessions: stats.accounts[0]?.peakSessions ?? 0,
        noResource550: stats.byCode['550'] ?? 0,
        retried,
        restarts: present.reduce((s, d) => s + d.processing.restarts, 0),
        kills,
      };
    };

    const base = await pass('fault-free', false);
    const drill = await pass('drill', true);
    const differing = drill.docs.flatMap((doc, i) => {
      const a = base.docs[i];
      return a && doc && resultContent(a) === resultContent(doc) ? [] : [recordingKey('', i)];
    });
    const summary = (p: Pass) => ({
      wallSeconds: p.wallSeconds,
      done: p.done,
      failed: p.failed,
      processRecordingWorkflows: p.processRecordingWorkflows,
      resultFiles: p.resultFiles,
      exactlyOnce: p.processRecordingWorkflows === calls && p.resultFiles === calls && p.done === calls,
      peakOpenSessions: p.peakOpenSessions,
      noResource550: p.noResource550,
      retriedActivities: Object.values(p.retried).reduce((a, b) => a + b, 0),
      retriedByType: p.retried,
      restarts: p.restarts,
      ...(p.kills.length > 0 ? { kills: p.kills.length, killed: p.kills } : {}),
    });
    const report = {
      topology: TOPOLOGY,
      temporal: 'server on PostgreSQL',
      calls,
      recordingSeconds: Number(values.seconds),
      speed,
      accountSessions: sessions,
      killEverySeconds: killEvery,
      faultFree: summary(base),
      drill: summary(drill),
      identicalToFaultFree: differing.length === 0,
      differing: differing.slice(0, 10),
      wallRatio: round(drill.wallSeconds / base.wallSeconds, 3),
    };
    console.log(JSON.stringify(report, null, 2));
    const ok =
      report.faultFree.exactlyOnce &&
      report.drill.exactlyOnce &&
      report.identicalToFaultFree &&
      base.peakOpenSessions <= sessions &&
      drill.peakOpenSessions <= sessions;
    if (!ok) process.exitCode = 1;
  } finally {
    await fleet?.stop();
    await bench.close();
  }
}

run().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
