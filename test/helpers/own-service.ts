/**
 * A service emulator and workers of a test file's own, on the shared stack's Temporal and S3: for files
 * that count the service's requests (the emulator's request log) while other files use the stack's
 * emulator at the same time. The `callpipe` command it runs has the same configuration, so the CLI's own
 * requests (a dictionary upload) reach this emulator too, and its workflows this file's workers.
 */
import { join } from 'node:path';
import type { Config } from '../../schemas/config.ts';
import { loadConfig } from '../../schemas/config-loader.ts';
import { startEmulator, type RunningEmulator } from '../../emulator/server.ts';
import type { EmulatorOptions } from '../../emulator/options.ts';
import { TEST_DEADLINE_SLACK_MS, TEST_EMULATOR_SPEED } from '../integration/global-setup.ts';
import { callpipe, type CallpipeRun } from './cli.ts';
import { envForEmulator, inProcessWorkers } from './pipeline.ts';
import { readRequestLog, type RequestLogEntry } from './request-log.ts';

export interface OwnService {
  /** The stack's variables with this file's emulator and task-queue prefix. */
  env: Record<string, string>;
  config: Config;
  /** `callpipe <args…>` with `env`. */
  callpipe(...args: string[]): Promise<CallpipeRun>;
  /** Every request the emulator answered so far. */
  requests(): RequestLogEntry[];
  stop(): Promise<void>;
}

/**
 * An emulator of the test's own on a free port, its request log at `<dir>/<label>-requests.jsonl`, paced
 * as the stack's (`options` may change that) with the stack's deadline slack: only what a test injects
 * may cost a restart.
 */
export async function testEmulator(
  dir: string,
  label: string,
  options: EmulatorOptions = {},
): Promise<{ emulator: RunningEmulator; requestLogPath: string }> {
  const requestLogPath = join(dir, `${label}-requests.jsonl`);
  const emulator = await startEmulator({
    port: 0,
    speed: TEST_EMULATOR_SPEED,
    requestLogPath,
    deadlineSlackMs: TEST_DEADLINE_SLACK_MS,
    ...options,
  });
  return { emulator, requestLogPath };
}

export async function ownService(label: string, dir: string): Promise<OwnService> {
  const { emulator, requestLogPath } = await testEmulator(dir, label);
  const env = envForEmulator(emulator, label);
  const config = loadConfig({ env });
  let workers: Awaited<ReturnType<typeof inProcessWorkers>>;
  try {
    workers = await inProcessWorkers(config);
  } catch (err) {
    await emulator.close();
    throw err;
  }
  return {
    env,
    config,
    callpipe: (...args) => callpipe(args, env),
    requests: () => readRequestLog(requestLogPath),
    async stop() {
      await workers.stop();
      await emulator.close();
    },
  };
}
