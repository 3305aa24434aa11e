/**
 * A worker whose activity blocks its event loop recovers: the event-loop watchdog names the activity
 * and stops the process with its exit code, `callpipe up`'s supervisor starts it again, and the other
 * work that process held finishes (Temporal retries it after its heartbeat timeout). Real parts: the test
 * stack's Temporal, a worker process run as the stack runs its workers, the product's supervisor.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ManagedProcess } from '../../cli/stack/process.ts';
import { stackEnv } from '../../cli/stack/stack.ts';
import { superviseStack } from '../../cli/stack/supervisor.ts';
import { typeScriptNode } from '../../scripts/node-runtime.mjs';
import { WATCHDOG_EXIT_CODE } from '../../workers/exit-codes.ts';
import { stackConfig, temporalClient } from '../helpers/stack.ts';

const dir = mkdtempSync(join(tmpdir(), 'callpipe-stuck-worker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function logLines(logFile: string): Record<string, unknown>[] {
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('a worker whose activity blocks its event loop', () => {
  it('is reported, restarted, and the other work of the process finishes', async () => {
    const config = stackConfig();
    const taskQueue = `stuck-worker-${randomUUID()}`;
    const logFile = join(dir, 'stuck-worker.log');
    const worker = new ManagedProcess({
      name: 'workers',
      command: typeScriptNode(),
      args: [fileURLToPath(new URL('../helpers/stuck-worker.ts', import.meta.url))],
      env: {
        ...process.env,
        ...stackEnv(config),
        CALLPIPE_METRICS_PORT: '0',
        STUCK_WORKER_TASK_QUEUE: taskQueue,
      },
      logFile,
      readyWhenLogged: '"workers ready"',
      startTimeoutMs: 120_000,
    });
    await worker.start();
    const firstPid = worker.pid;
    const notices: string[] = [];
    const supervisor = superviseStack(
      {
        processes: { workers: worker },
        restart: async () => {
          await worker.start();
          return worker;
        },
      },
      { notice: (line) => notices.push(line) },
    );
    const { client, close } = await temporalClient(config);
    try {
      const result = await client.workflow.execute('blockedBesideOrdinary', {
        taskQueue,
        workflowId: `stuck-worker-${randomUUID()}`,
        workflowExecutionTimeout: '10 minutes',
      });

      // The other work: its attempt lost with the stuck process ran again in the restarted one.
      expect(result.ordinary.attempt).toBeGreaterThan(1);
      expect(result.ordinary.pid).not.toBe(firstPid);
      expect(result.blocked).toMatch(/^failed: .*heartbeat/i);

      const lines = logLines(logFile);
      const report = lines.find((line) => String(line.msg).includes('the event loop is blocked'));
      expect(report).toMatchObject({ exitCode: WATCHDOG_EXIT_CODE, boundMs: 3000 });
      expect(report!.running).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ activityType: 'blockEventLoop', attempt: 1, taskQueue }),
          expect.objectContaining({ activityType: 'ordinaryWork', attempt: 1, taskQueue }),
        ]),
      );
      const blocked = lines.find((line) => line.msg === 'event loop watchdog: the blocked activity');
      expect(blocked).toMatchObject({ activity: { activityType: 'blockEventLoop' } });
      expect((blocked!.stack as string[]).join('\n')).toContain('catastrophicPattern');
      // Started again, and ready again.
      expect(lines.filter((line) => line.msg === 'workers ready').length).toBeGreaterThanOrEqual(2);
      expect(notices.join('\n')).toContain(`exited with code ${WATCHDOG_EXIT_CODE}`);
      expect(notices.join('\n')).toContain('event-loop watchdog');
      expect(notices.some((line) => line.includes('restarting workers'))).toBe(true);
    } finally {
      supervisor.stop();
      await close();
      await worker.stop();
    }
  });
});
