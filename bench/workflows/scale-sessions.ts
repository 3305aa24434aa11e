/**
 * The real-time scale benchmark's workflow (bench/realtime-scale.ts, side `temporal`): opens `count`
 * recognition sessions on the asr task queue, evenly over `rampMs`, as processRecording asks for them
 * (the same timeouts and heartbeat), and waits for them all. Bench-only: it is not in workflows/index.ts.
 */
import { proxyActivities, sleep } from '@temporalio/workflow';
import type {
  RecognizeSessionInput,
  RecognizeSessionOutput,
} from '../../activities/asr/recognize-session.ts';

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
  for (let i = 0; i < input.count; i++) {
    runs.push(
      recognizeSession({
        ...input.session,
        callId: `scale-${i}`,
        session: i,
        resultKey: `${input.resultPrefix}${i}.json`,
      }),
    );
    await sleep(input.rampMs / input.count);
  }
  return Promise.all(runs);
}
