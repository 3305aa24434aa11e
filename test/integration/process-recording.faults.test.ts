/**
 * processRecording under faults, each compared with a fault-free run of the same recording. Each test
 * runs an emulator of its own (faults are fixed at its start) and workers on a unique task queue prefix,
 * against the shared stack's Temporal and S3.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningEmulator } from '../../emulator/server.ts';
import type { EmulatorFaultsInput } from '../../schemas/emulator-faults.ts';
import { taskQueues, type Config } from '../../schemas/config.ts';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { resolveSource, submitRecording } from '../../cli/submit.ts';
import {
  childWorkers,
  compareTranscript,
  expectedUtterances,
  inProcessWorkers,
  makeCall,
  configForEmulator,
  type GeneratedCall,
  ANY_SPEAKER,
} from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { muLawSecondsSent, readRequestLog } from '../helpers/request-log.ts';
import { testEmulator } from '../helpers/own-service.ts';
import { progressQuery, type ProcessRecordingResult } from '../../workflows/process-recording.ts';
import { RECOGNITION_HEARTBEAT_SECONDS } from '../../schemas/limits.ts';
import { WORKER_LOST } from '../../activities/asr/liveness-activities.ts';

const SPEED = 100;

interface ResultDoc {
  utterances: { speaker: string; start: number; end: number; text: string }[];
  processing: { retries: number; restarts: number; reStreamedSeconds: number };
}

let dir: string;
let pc: PipelineClient;
let call: GeneratedCall;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-faults-'));
  pc = await connectPipeline(stackConfig());
  // 25 minutes of mono call: long enough for an error after 20 minutes of one session's audio.
  call = await makeCall(dir, 'call-25min.wav', {
    durationSeconds: 1500,
    stereo: false,
    seed: 5,
    sampleRate: 8000,
  });
}, 120_000);

afterAll(async () => {
  await pc?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function emulatorWith(faults: EmulatorFaultsInput | undefined, label: string) {
  return testEmulator(dir, label, { speed: SPEED, faults, seed: 3 });
}

function configFor(emulator: RunningEmulator, label: string): Config {
  return configForEmulator(emulator, label, SPEED);
}

async function run(
  config: Config,
  label: string,
  during?: (r: Awaited<ReturnType<typeof submitRecording>>) => Promise<void>,
  recording: GeneratedCall = call,
  heartbeatTimeoutSeconds = 5,
) {
  const source = await resolveSource(recording.path, pc.store, pc.config);
  const submitted = await submitRecording(pc, source, {
    output: { bucket: pc.config.s3.bucket, prefix: `faults/${label}/` },
    redo: true,
    // One session per track: the faults land at set points of a long session's audio.
    extra: {
      queues: taskQueues(config),
      pacingSpeed: SPEED,
      heartbeatTimeoutSeconds,
      plan: { strategy: 'fixed' },
    },
  });
  await during?.(submitted);
  const result: ProcessRecordingResult = await submitted.handle.result();
  expect(result.status, result.reason).toBe('done');
  const doc = JSON.parse(await pc.store.getText(result.resultKey!)) as ResultDoc;
  return { result, doc, history: await submitted.handle.fetchHistory() };
}

let baseline: ResultDoc;

describe('processRecording under faults: recognition errors', () => {
  it('fault-free run: the transcript equals the script', async () => {
    const { emulator } = await emulatorWith(undefined, 'baseline');
    const config = configFor(emulator, 'baseline');
    const workers = await inProcessWorkers(config);
    try {
      baseline = (await run(config, 'baseline')).doc;
      const { missing, extra } = compareTranscript(
        baseline.utterances,
        expectedUtterances(call.script, [ANY_SPEAKER]),
      );
      expect(missing).toEqual([]);
      expect(extra).toEqual([]);
    } finally {
      await workers.stop();
      await emulator.close();
    }
  });

  it('a recognition error after 20 minutes of audio costs at most 15 s of re-streamed audio, same result', async () => {
    const { emulator, requestLogPath } = await emulatorWith(
      { streamErrors: [{ code: 600, afterAudioSeconds: 1200, times: 1 }] },
      'stream-error',
    );
    const config = configFor(emulator, 'stream-error');
    const workers = await inProcessWorkers(config);
    try {
      const { doc } = await run(config, 'stream-error');
      expect(doc.processing.restarts).toBe(1);
      expect(doc.utterances).toEqual(baseline.utterances);
      // From the request log: every second sent beyond the recording's own length was sent twice.
      const reStreamed = muLawSecondsSent(readRequestLog(requestLogPath)) - 1500;
      expect(reStreamed).toBeGreaterThanOrEqual(0);
      expect(reStreamed).toBeLessThanOrEqual(15);
      console.log(`stream error at 1200 s: re-streamed ${reStreamed.toFixed(2)} s of audio`);
    } finally {
      await workers.stop();
      await emulator.close();
    }
  });
});

describe('processRecording under faults: a killed worker and blocked text requests', () => {
  it('SIGKILL of the worker mid-session: the session budget fails the lost attempt, a new worker resumes it, the result equals the fault-free one', async () => {
    const { emulator, requestLogPath } = await emulatorWith(undefined, 'sigkill');
    const config = configFor(emulator, 'sigkill');
    // The deployed heartbeat timeout (150 s), and a short lease life: only the budget failing the lost
    // worker's attempt retries the session before the test's timeout.
    const lease = { CALLPIPE_ASR_LEASE_SECONDS: '10' };
    const first = childWorkers(config, join(dir, 'sigkill-workers-1.log'), lease);
    await first.start();
    let second: ReturnType<typeof childWorkers> | undefined;
    try {
      const { doc, history } = await run(
        config,
        'sigkill',
        async (submitted) => {
          // Wait until recognition is well under way, then kill the worker as a crash would.
          for (;;) {
            const p = await submitted.handle.query(progressQuery).catch(() => undefined);
            const sent = muLawSecondsSent(readRequestLog(requestLogPath));
            if (p?.stage === 'recognize' && sent > 300) break;
            await sleep(100);
          }
          await first.kill();
          second = childWorkers(config, join(dir, 'sigkill-workers-2.log'), lease);
          await second.start();
        },
        call,
        RECOGNITION_HEARTBEAT_SECONDS,
      );
      expect(doc.utterances).toEqual(baseline.utterances);
      // The session's last attempt started after the budget failed the killed worker's, not after a timeout.
      const types = new Map(
        history.events!.flatMap((e) =>
          e.activityTaskScheduledEventAttributes
            ? [[String(e.eventId), e.activityTaskScheduledEventAttributes.activityType?.name]]
            : [],
        ),
      );
      const retried = history.events!.flatMap((e) => {
        const started = e.activityTaskStartedEventAttributes;
        const type = started && types.get(String(started.scheduledEventId));
        return started && type === 'recognizeSession' && (started.attempt ?? 1) > 1 ? [started] : [];
      });
      expect(retried.length).toBeGreaterThan(0);
      for (const started of retried)
        expect(started.lastFailure?.applicationFailureInfo?.type).toBe(WORKER_LOST);
      const reStreamed = muLawSecondsSent(readRequestLog(requestLogPath)) - 1500;
      console.log(`worker SIGKILL: re-streamed ${reStreamed.toFixed(2)} s of audio`);
      // The retried attempt resumed from the staged results, not from the start of the session.
      expect(reStreamed).toBeLessThan(300);
    } finally {
      await first.stop();
      await second?.stop();
      await emulator.close();
    }
  });

  it('99997 on 30 % of text requests: the call completes and the result records the retries', async () => {
    const { emulator } = await emulatorWith({ seed: 9, rateLimitBursts: { probability: 0.3 } }, 'rate-limit');
    const config = configFor(emulator, 'rate-limit');
    const workers = await inProcessWorkers(config);
    // A shorter call: every one of its text requests meets the 30 % all the same.
    const short = await makeCall(dir, 'call-3min.wav', { durationSeconds: 180, stereo: true, seed: 6 });
    try {
      const { doc } = await run(config, 'rate-limit', undefined, short);
      expect(doc.processing.retries).toBeGreaterThan(0);
      const { missing, extra } = compareTranscript(
        doc.utterances,
        expectedUtterances(short.script, ['agent', 'customer']),
      );
      expect(missing).toEqual([]);
      expect(extra).toEqual([]);
    } finally {
      await workers.stop();
      await emulator.close();
    }
  });
});
