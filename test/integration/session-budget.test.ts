/**
 * One session budget per account across asr worker processes (issue 18, item 3), on the real stack's
 * Temporal and S3, with an emulator of the test's own whose account allows 3 sessions: three asr worker
 * processes of 3 slots each (9 > 3) recognize four calls while one of them is SIGKILLed. The emulator
 * answers no `550 No Resource` (its request log), its peak of open sessions is the account's limit, the
 * killed worker's leases come back by expiry, and every call is done with its scripted transcript.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningEmulator } from '../../emulator/server.ts';
import type { WorkflowHandle } from '@temporalio/client';
import { taskQueues, type Config } from '../../schemas/config.ts';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { resolveSource, submitRecording } from '../../cli/submit.ts';
import type { ManagedProcess } from '../../cli/stack/process.ts';
import {
  asrWorkerProcess,
  compareTranscript,
  expectedUtterances,
  inProcessWorkers,
  makeCall,
  configForEmulator,
  type GeneratedCall,
} from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { readRequestLog } from '../helpers/request-log.ts';
import { testEmulator } from '../helpers/own-service.ts';
import { sessionBudgetAddress } from '../../workers/session-budget-client.ts';
import { sessionBudgetQuery } from '../../workflows/session-budget.ts';
import type { ProcessRecordingResult } from '../../workflows/process-recording.ts';
import type { ResultDocument } from '../../schemas/result.ts';
import { activityIntervals, type Interval } from '../../bench/lib/activity-intervals.ts';

/** The most intervals open at once, each from when it was asked for (scheduled) to its end. */
function peakDemand(intervals: Interval[]): number {
  const edges = intervals.flatMap((i) => [
    { at: i.scheduledMs, d: 1 },
    { at: i.endMs, d: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let open = 0;
  let peak = 0;
  for (const e of edges) peak = Math.max(peak, (open += e.d));
  return peak;
}

/** Slow enough that sessions are open when a worker is killed (a 40-s session streams for 2 s). */
const SPEED = 20;
const ACCOUNT_SESSIONS = 3;
const WORKERS = 3;
/**
 * Longer than the emulator takes to close a killed worker's sessions (its idle timeout, 10 s ÷ speed,
 * plus the test's deadline slack), so the account never sees more open sessions than leases.
 */
const LEASE_SECONDS = 8;

let dir: string;
let pc: PipelineClient;
let calls: GeneratedCall[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-budget-'));
  pc = await connectPipeline(stackConfig());
  calls = await Promise.all(
    [0, 1, 2, 3].map((i) =>
      makeCall(dir, `call-${i}.wav`, {
        durationSeconds: 120,
        stereo: true,
        seed: 40 + i,
        sampleRate: 8000,
      }),
    ),
  );
}, 120_000);

afterAll(async () => {
  await pc?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The stack's configuration on the test's emulator, with the account's sessions and the short lease. */
function budgetConfig(emulator: Parameters<typeof configForEmulator>[0]): Config {
  const base = configForEmulator(emulator, 'budget', SPEED);
  return {
    ...base,
    limits: {
      ...base.limits,
      asrConcurrentSessions: ACCOUNT_SESSIONS,
      asrAccountSessions: ACCOUNT_SESSIONS,
      asrLeaseSeconds: LEASE_SECONDS,
    },
  };
}

/** Every call submitted (again) to the test's own queues, paced at SPEED, in sessions of 40 s. */
async function submitAll(config: Config) {
  const submitted = [];
  for (const call of calls) {
    const source = await resolveSource(call.path, pc.store, pc.config);
    submitted.push(
      await submitRecording(pc, source, {
        output: { bucket: pc.config.s3.bucket, prefix: `budget/${config.temporal.taskQueuePrefix}/` },
        redo: true,
        extra: {
          queues: taskQueues(config),
          pacingSpeed: SPEED,
          heartbeatTimeoutSeconds: 5,
          plan: { strategy: 'fixed', maxSessionSeconds: 40 },
        },
      }),
    );
  }
  return submitted;
}

/** Waits until sessions stream, then SIGKILLs an asr worker that holds leases of the budget. */
async function killWorkerHoldingLeases(
  emulator: RunningEmulator,
  budget: WorkflowHandle,
  asrWorkers: ManagedProcess[],
): Promise<void> {
  let victim: ManagedProcess | undefined;
  for (let i = 0; i < 600 && !victim; i++) {
    await sleep(100);
    if (emulator.stats().sessions.completed < 2) continue;
    const view = await budget.query(sessionBudgetQuery);
    victim = asrWorkers.find((w) =>
      Object.entries(view.leasedBy).some(([holder, n]) => n > 0 && holder.split(':')[1] === String(w.pid)),
    );
  }
  expect(victim, 'a worker holding leases while sessions stream').toBeDefined();
  await victim!.kill();
}

/** Every call done, its transcript the script's. */
async function expectTranscriptsWhole(submitted: Awaited<ReturnType<typeof submitAll>>): Promise<void> {
  const results: ProcessRecordingResult[] = await Promise.all(submitted.map((s) => s.handle.result()));
  for (const [i, result] of results.entries()) {
    expect(result.status, result.reason).toBe('done');
    const doc = JSON.parse(await pc.store.getText(result.resultKey!)) as ResultDocument;
    const { missing, extra } = compareTranscript(
      doc.utterances,
      expectedUtterances(calls[i]!.script, ['agent', 'customer']),
    );
    expect(missing).toEqual([]);
    expect(extra).toEqual([]);
    // No `restarts` check: a stream a loaded machine stalls past the emulator's idle deadline restarts
    // (and its transcript is still whole, above); what the budget decides is the 550s, checked below.
  }
}

describe('one session budget across asr worker processes', () => {
  it('three workers of 3 slots on a 3-session account, one SIGKILLed: no 550, every call done', async () => {
    const { emulator, requestLogPath } = await testEmulator(dir, 'budget', {
      speed: SPEED,
      concurrentSessions: ACCOUNT_SESSIONS,
    });
    const config = budgetConfig(emulator);
    const asrEnv = {
      CALLPIPE_ASR_CONCURRENT_SESSIONS: String(ACCOUNT_SESSIONS),
      CALLPIPE_ASR_ACCOUNT_SESSIONS: String(ACCOUNT_SESSIONS),
      CALLPIPE_ASR_LEASE_SECONDS: String(LEASE_SECONDS),
      CALLPIPE_LOG_LEVEL: 'warn',
    };
    const asrWorkers: ManagedProcess[] = Array.from({ length: WORKERS }, (_, i) =>
      asrWorkerProcess(config, join(dir, `asr-${i}.log`), asrEnv),
    );
    // Workflows (the budget's among them), media and text in this process; recognition only in the children.
    const others = await inProcessWorkers(config, ['workflows', 'media', 'probe', 'nlp']);
    const budget = pc.client.workflow.getHandle(sessionBudgetAddress(config).workflowId);
    try {
      await Promise.all(asrWorkers.map((w) => w.start()));
      const submitted = await submitAll(config);

      // Once sessions are streaming, SIGKILL a worker that holds leases.
      await killWorkerHoldingLeases(emulator, budget, asrWorkers);

      await expectTranscriptsWhole(submitted);

      // The test means something only if more sessions were ready at once than the account allows (nine
      // slots would have opened them all): the budget held them back, in the task queue.
      const sessions = (await Promise.all(submitted.map((s) => activityIntervals(s.handle))))
        .flat()
        .filter((i) => i.type === 'recognizeSession');
      expect(peakDemand(sessions)).toBeGreaterThan(ACCOUNT_SESSIONS);

      const refused = readRequestLog(requestLogPath).filter((e) => e.code === 550);
      expect(refused).toEqual([]);
      const account = emulator.stats().accounts[0]!;
      expect(account.peakSessions).toBe(ACCOUNT_SESSIONS);
      const view = await budget.query(sessionBudgetQuery);
      expect(view.peak).toBeLessThanOrEqual(ACCOUNT_SESSIONS);
      // The killed worker's leases came back by expiry, not by its goodbye.
      expect(view.expired).toBeGreaterThanOrEqual(1);
      console.log(
        `budget: ${view.grants} leases granted, ${view.expired} expired, peak ${view.peak}; ` +
          `${peakDemand(sessions)} sessions ready at once at most; ` +
          `emulator: ${emulator.stats().sessions.started} sessions, peak ${account.peakSessions} open`,
      );
    } finally {
      await Promise.all(asrWorkers.map((w) => w.stop().catch(() => undefined)));
      await others.stop();
      await budget.terminate('test over').catch(() => undefined);
      await emulator.close();
    }
  });
});
