/**
 * The real-time scale benchmark's workflow (bench/realtime-scale.ts, side `temporal`): opens `count`
 * recognition sessions on the asr task queue, evenly over `rampMs`, as processRecording asks for them
 * (the same timeouts and heartbeat), and waits for them all. Bench-only: it is not in workflows/index.ts.
 */
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { RecognizeSessionInput, RecognizeSessionOutput } from '../../activities/asr/asr-activities.ts';

/** The shortest timer worth asking a Temporal server for. */
const TIMER_RESOLUTION_MS = 1000;

export interface ScaleSessionsInput {
  asrTaskQueue: string;
  count: number;
  rampMs: number;
  /** Session i gets `${resultPrefix}${i}.json` and `session: i`. */
  session: Omit<RecognizeSessionInput, 'session' | 'resultKey' | 'callId'>;
  resultPrefix: string;
}

export async function scaleSessions(input: ScaleSessionsInput): Promise<RecognizeSessionOutput[]> {
  const { recognizeSession } = proxyActivities<{
    recognizeSession(i: RecognizeSessionInput): Promise<RecognizeSessionOutput>;
  }>({
    taskQueue: input.asrTaskQueue,
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: '30 seconds',
    retry: { maximumAttempts: 1 },
  });
  const runs: Promise<RecognizeSessionOutput>[] = [];
  // A server's timers fire about once a second at best (the dev server's timer queue), so a timer per
  // session would stretch a ramp of 256 sessions over 30 s to 256 s: each tick opens every session due.
  const tickMs = Math.max(TIMER_RESOLUTION_MS, input.rampMs / input.count);
  const began = Date.now();
  while (runs.length < input.count) {
    const due = Math.min(
      input.count,
      Math.floor(((Date.now() - began) / Math.max(1, input.rampMs)) * input.count) + 1,
    );
    while (runs.length < due) {
      const i = runs.length;
      runs.push(
        recognizeSession({
          ...input.session,
          callId: `scale-${i}`,
          session: i,
          resultKey: `${input.resultPrefix}${i}.json`,
        }),
      );
    }
    if (runs.length < input.count) await sleep(tickMs);
  }
  return Promise.all(runs);
}
