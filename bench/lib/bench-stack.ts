/**
 * A local stack of a benchmark's own: free ports, a temp CALLPIPE_HOME, the emulator at `speed`, and
 * `budget` concurrent recognition sessions per asr worker. Torn down by `close()`, home included
 * unless kept.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isolatedStackConfig, startStack, type RunningStack } from '../../cli/stack/stack.ts';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { defaultAccountInput } from '../../emulator/accounts.ts';

export interface BenchStackOptions {
  label: string;
  speed: number;
  /** Concurrent recognition sessions (CALLPIPE_ASR_CONCURRENT_SESSIONS), the planner's budget too. */
  budget: number;
  /** Text requests per second across workers (CALLPIPE_NLP_RPS). */
  nlpRps?: number;
  /** The emulator account's text-request rate limit (99997 beyond it); default the emulator's 50/s. */
  textRateLimit?: { requestsPerSecond: number; burst: number };
  /** The emulator account's concurrent recognition sessions (550 beyond it); default the emulator's 64. */
  accountSessions?: number;
  /** Emulator fault-injection file. */
  faultsFile?: string;
  /** The emulator's processing time of a file request × its audio seconds (default the emulator's 0.25). */
  fileRtf?: number;
  /** Extra worker environment (e.g. short heartbeat timeouts). */
  workerEnv?: Record<string, string>;
  /** Start the stack's workers (default true); drills run their own. */
  workers?: boolean;
  /** Prebuilt workflow bundle for the stack's workers. */
  workflowBundlePath?: string;
  /** Temporal: the dev server (default) or the production topology's server on PostgreSQL. */
  temporal?: 'dev' | 'postgresql';
  keep?: boolean;
  log: (line: string) => void;
}

export interface BenchStack {
  home: string;
  stack: RunningStack;
  pc: PipelineClient;
  close(): Promise<void>;
}

export async function startBenchStack(options: BenchStackOptions): Promise<BenchStack> {
  const home = mkdtempSync(join(tmpdir(), `callpipe-bench-${options.label}-`));
  let emulatorAccounts: string | undefined;
  if (options.textRateLimit || options.accountSessions) {
    emulatorAccounts = join(home, 'emulator-accounts.json');
    writeFileSync(
      emulatorAccounts,
      JSON.stringify([
        defaultAccountInput({
          ...(options.textRateLimit ? { rateLimit: options.textRateLimit } : {}),
          ...(options.accountSessions ? { concurrentSessions: options.accountSessions } : {}),
        }),
      ]),
    );
  }
  const config = isolatedStackConfig(home, options.speed, {
    limits: {
      asrConcurrentSessions: options.budget,
      ...(options.nlpRps ? { nlpRequestsPerSecond: options.nlpRps } : {}),
    },
    stack: {
      ...(options.faultsFile ? { emulatorFaults: options.faultsFile } : {}),
      ...(options.fileRtf !== undefined ? { emulatorFileRtf: options.fileRtf } : {}),
      ...(emulatorAccounts ? { emulatorAccounts } : {}),
    },
  });
  const stack = await startStack({
    config,
    ports: 'auto',
    log: options.log,
    workerEnv: options.workerEnv,
    workers: options.workers,
    workflowBundlePath: options.workflowBundlePath,
    temporal: options.temporal,
  });
  let pc: PipelineClient;
  try {
    pc = await connectPipeline(stack.config, stack.addresses.webUiUrl);
  } catch (err) {
    await stack.stop();
    throw err;
  }
  const close = async () => {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await pc.close().catch(() => undefined);
    await stack.stop();
    if (!options.keep) rmSync(home, { recursive: true, force: true });
  };
  // The stack's children run in process groups of their own: an interrupted benchmark must stop them.
  const interrupted = () => {
    options.log('interrupted: stopping the stack…');
    void close().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  return { home, stack, pc, close };
}
