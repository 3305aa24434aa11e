import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { typeScriptNode } from '../../scripts/node-runtime.mjs';
import { blockedBoundMs, FALLBACK_BOUND_MS, WATCHDOG_EXIT_CODE } from '../../workers/event-loop-watchdog.ts';
import { describeExit } from '../../cli/stack/process.ts';
import { composeFile } from '../helpers/compose.ts';

const SCRIPT = fileURLToPath(new URL('../helpers/blocked-event-loop.ts', import.meta.url));

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  lines: Record<string, unknown>[];
  stdout: string;
}

/** Runs the blocked-loop script in a child process (its main thread is the one the watchdog watches). */
function run(mode: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(typeScriptNode(), [SCRIPT, mode], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      const lines = stderr
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      resolve({ code, signal, lines, stdout });
    });
  });
}

describe('event-loop watchdog', () => {
  it('reports the blocked activity and where it is blocked, and exits with its own code', async () => {
    const result = await run('regex', { HEARTBEAT_TIMEOUT_MS: '1000' });
    expect(result.code).toBe(WATCHDOG_EXIT_CODE);
    const [report, blocked] = result.lines;
    expect(report).toMatchObject({
      level: 'ERROR',
      boundMs: 1000,
      exitCode: WATCHDOG_EXIT_CODE,
      running: [
        {
          activityType: 'blockTheLoop',
          activityId: '7',
          attempt: 2,
          workflowId: 'wf-1',
          workflowType: 'someWorkflow',
          taskQueue: 'test-queue',
          heartbeatTimeoutMs: 1000,
        },
      ],
    });
    expect(report!.blockedMs).toBeGreaterThan(1000);
    expect(Date.parse(report!.blockedSince as string)).not.toBeNaN();
    // The main thread itself names the activity on its stack, and the function that blocks it.
    expect(blocked).toMatchObject({ activity: { activityType: 'blockTheLoop', attempt: 2 } });
    expect((blocked!.stack as string[]).join('\n')).toContain('catastrophicPattern');
    expect(result.stdout).not.toContain('finished');
  });

  it('kills a process blocked outside JavaScript after the grace, with the reason logged', async () => {
    const result = await run('native', { HEARTBEAT_TIMEOUT_MS: '1000', EXIT_GRACE_MS: '1000' });
    expect(result.signal).toBe('SIGKILL');
    expect(result.lines.map((line) => line.msg)).toEqual([
      expect.stringContaining('the event loop is blocked'),
      expect.stringContaining('did not exit; killing'),
    ]);
  });

  it('leaves a process alone whose activities yield', async () => {
    const result = await run('free', { HEARTBEAT_TIMEOUT_MS: '30000' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('"finished"');
    expect(result.lines).toEqual([]);
  });

  it('bounds a block by the shortest heartbeat timeout of the running activities', () => {
    expect(blockedBoundMs([], FALLBACK_BOUND_MS)).toBe(FALLBACK_BOUND_MS);
    expect(blockedBoundMs([{}], 120_000)).toBe(120_000);
    expect(
      blockedBoundMs([{ heartbeatTimeoutMs: 30_000 }, {}, { heartbeatTimeoutMs: 60_000 }], 120_000),
    ).toBe(30_000);
  });

  it('is restarted wherever it runs: Docker restarts every worker service, `up` names the watchdog', () => {
    const workers = Object.entries(composeFile().services).filter(([name]) => name.startsWith('worker-'));
    expect(workers.length).toBeGreaterThan(0);
    for (const [name, service] of workers)
      expect((service as { restart?: string }).restart, name).toMatch(/^(unless-stopped|always|on-failure)/);
    expect(describeExit({ code: WATCHDOG_EXIT_CODE, signal: null })).toContain('event-loop watchdog');
    expect(describeExit({ code: 1, signal: null })).toBe('exited with code 1');
  });
});
