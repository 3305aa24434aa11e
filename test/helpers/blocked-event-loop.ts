/**
 * A process whose main thread an activity blocks, under the event-loop watchdog (unit tests of
 * `workers/event-loop-watchdog.ts` run it as a child): `node blocked-event-loop.ts <mode>`, where mode is
 * - `regex`: a catastrophic regular expression (JavaScript, interruptible);
 * - `native`: a synchronous child process (outside JavaScript: no interrupt is served);
 * - `free`: an activity that awaits and ends; the process exits 0.
 * The activity runs in a mock activity context with the heartbeat timeout of `HEARTBEAT_TIMEOUT_MS`.
 */
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { startEventLoopWatchdog } from '../../workers/event-loop-watchdog.ts';

const mode = process.argv[2];
const heartbeatTimeoutMs = Number(process.env.HEARTBEAT_TIMEOUT_MS ?? 1000);
const watchdog = startEventLoopWatchdog({ exitGraceMs: Number(process.env.EXIT_GRACE_MS ?? 10_000) });

function catastrophicPattern(): boolean {
  return /(a+)+$/.test(`${'a'.repeat(64)}!`);
}

async function work(): Promise<unknown> {
  if (mode === 'regex') return catastrophicPattern();
  if (mode === 'native') return spawnSync('sleep', ['600']).status;
  for (let i = 0; i < 3; i++) await sleep(100);
  return 'done';
}

const env = new MockActivityEnvironment({
  activityType: 'blockTheLoop',
  activityId: '7',
  attempt: 2,
  taskQueue: 'test-queue',
  heartbeatTimeoutMs,
  workflowType: 'someWorkflow',
  workflowExecution: { workflowId: 'wf-1', runId: 'run-1' },
});
const result = await env.run(() =>
  watchdog.interceptor(Context.current()).inbound!.execute!({ args: [], headers: {} }, work),
);
console.log(JSON.stringify({ msg: 'finished', result }));
await watchdog.stop();
