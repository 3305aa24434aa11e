/**
 * The real-time scale benchmark's `temporal` side: the asr worker as it runs in production (`workers/asr.ts`
 * in a process of its own: Temporal's core, the failure boundary, heartbeats, metrics), its sessions asked
 * for by a workflow (bench/workflows/scale-sessions.ts) that a workflow worker in this process runs. The
 * worker process's CPU comes from /proc; pacing from the emulator's counters (accepted audio requests, and
 * 412/552/651 answers), since the worker cannot be instrumented from outside.
 */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { ManagedProcess } from '../../cli/stack/process.ts';
import { PROJECT_ROOT } from '../../cli/tools/provision.ts';
import { LOCAL_CLIENT_ID, LOCAL_CLIENT_SECRET, LOCAL_DOMAIN_ID } from '../../schemas/config.ts';
import type { EmulatorStats } from '../../emulator/server.ts';
import type { StreamStack } from './stream-stack.ts';
import { cpuSeconds, threadCpu } from './cpu-meter.ts';
import { typeScriptNode } from '../../scripts/node-runtime.mjs';
import type { scaleSessions } from '../workflows/scale-sessions.ts';

const WORKFLOWS = fileURLToPath(new URL('../workflows/scale-sessions.ts', import.meta.url));
const WORKFLOW_QUEUE = 'bench-scale-workflows';
const PREFIX = 'benchscale';
/** temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED (a worker runs it). */
const PENDING_ACTIVITY_STATE_STARTED = 2;

interface WholeWorkerMeasure {
  streams: number;
  /** Sessions streaming when the hold began (all of them, unless the worker could not start them in a minute). */
  open: number;
  wallSeconds: number;
  cpuSeconds: number;
  /** CPU seconds over the hold by thread name (cpu-meter.ts threadCpu). */
  threadCpuSeconds: Record<string, number>;
  requestsPerStreamSecond: number;
  /** 412, 552 and 651 answers during the hold: pacing lost. */
  sessionErrors: number;
  /** The sessions' workflow ended (a session failed) before the hold was over. */
  failed: boolean;
}

async function emulatorStats(url: string): Promise<EmulatorStats> {
  return (await (await fetch(`${url}/emulator/stats`)).json()) as EmulatorStats;
}

/** Sessions of the workflow whose activity is running. */
async function started(handle: WorkflowHandle): Promise<number> {
  const { raw } = await handle.describe();
  return (raw.pendingActivities ?? []).filter((a) => a.state === PENDING_ACTIVITY_STATE_STARTED).length;
}

function sessionErrors(stats: EmulatorStats): number {
  return ['412', '552', '651'].reduce((n, code) => n + (stats.byStatus[code] ?? 0), 0);
}

export interface WholeWorkerRig {
  measure(streams: number, rampSeconds: number, holdSeconds: number): Promise<WholeWorkerMeasure>;
  close(): Promise<void>;
}

export async function startWholeWorkerRig(
  stack: StreamStack,
  audio: { key: string; seconds: number; model: string },
  /** Writes a V8 CPU profile of each worker process into this directory (`node --cpu-prof`). */
  profileDir?: string,
): Promise<WholeWorkerRig> {
  const temporal = stack.temporal;
  if (!temporal) throw new Error('the whole-worker side needs a stream stack with Temporal');
  // The bench's output is its table: the workflow worker's bundling and state changes stay out of it.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const workerConnection = await NativeConnection.connect({ address: temporal.address });
  const workflows = await Worker.create({
    connection: workerConnection,
    taskQueue: WORKFLOW_QUEUE,
    workflowsPath: WORKFLOWS,
  });
  const running = workflows.run();
  const client = new Client({ connection: await Connection.connect({ address: temporal.address }) });

  const env = (streams: number): NodeJS.ProcessEnv => ({
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_'))),
    CALLPIPE_TEMPORAL_ADDRESS: temporal.address,
    CALLPIPE_TASK_QUEUE_PREFIX: PREFIX,
    CALLPIPE_S3_ENDPOINT: stack.s3.endpoint ?? '',
    CALLPIPE_S3_REGION: stack.s3.region ?? 'us-east-1',
    CALLPIPE_S3_BUCKET: stack.s3.bucket,
    CALLPIPE_S3_ACCESS_KEY_ID: stack.s3.accessKeyId ?? '',
    CALLPIPE_S3_SECRET_ACCESS_KEY: stack.s3.secretAccessKey ?? '',
    CALLPIPE_S3_FORCE_PATH_STYLE: 'true',
    CALLPIPE_SERVICE_URL: `${stack.emulatorUrl}/api/dev`,
    CALLPIPE_AUTH_URL: `${stack.emulatorUrl}/v1/oauth/accesstokens`,
    CALLPIPE_CLIENT_ID: LOCAL_CLIENT_ID,
    CALLPIPE_CLIENT_SECRET: LOCAL_CLIENT_SECRET,
    CALLPIPE_DOMAIN_ID: LOCAL_DOMAIN_ID,
    CALLPIPE_MODEL: audio.model,
    CALLPIPE_SERVICE_SPEED: '1',
    CALLPIPE_ASR_CONCURRENT_SESSIONS: String(streams),
    CALLPIPE_METRICS_PORT: '0',
    CALLPIPE_LOG_LEVEL: 'warn',
  });

  return {
    async measure(streams, rampSeconds, holdSeconds) {
      const worker = new ManagedProcess({
        name: `asr-${streams}`,
        command: typeScriptNode(),
        // Node refuses --cpu-prof in NODE_OPTIONS: it goes on the command line.
        args: [
          ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
          join(PROJECT_ROOT, 'workers', 'asr.ts'),
        ],
        env: env(streams),
        cwd: PROJECT_ROOT,
        logFile: join(stack.home, 'logs', `asr-${streams}.log`),
        readyWhenLogged: '"workers ready"',
        startTimeoutMs: 120_000,
      });
      await worker.start();
      const handle = await client.workflow.start<typeof scaleSessions>('scaleSessions', {
        taskQueue: WORKFLOW_QUEUE,
        workflowId: `scale-${streams}-${Date.now()}`,
        args: [
          {
            asrTaskQueue: `${PREFIX}-asr`,
            count: streams,
            rampMs: rampSeconds * 1000,
            session: { audioKey: audio.key, start: 0, end: audio.seconds, maxRestarts: 0 },
            resultPrefix: `bench/results/temporal-${streams}-${Date.now()}/`,
          },
        ],
      });
      try {
        // The hold starts once every session is streaming (activity started), as on the other sides.
        await sleep(rampSeconds * 1000);
        const waitUntil = Date.now() + 60_000;
        let open = 0;
        while ((open = await started(handle)) < streams && Date.now() < waitUntil) await sleep(500);
        await sleep(2000);
        const before = await emulatorStats(stack.emulatorUrl);
        const cpu0 = cpuSeconds(worker.pid);
        const threads0 = threadCpu(worker.pid);
        const t0 = performance.now();
        await sleep(holdSeconds * 1000);
        const cpu = cpuSeconds(worker.pid) - cpu0;
        const threads = Object.fromEntries(
          Object.entries(threadCpu(worker.pid)).map(([name, s]) => [name, s - (threads0[name] ?? 0)]),
        );
        const wallSeconds = (performance.now() - t0) / 1000;
        const after = await emulatorStats(stack.emulatorUrl);
        const { status } = await handle.describe();
        return {
          streams,
          open,
          wallSeconds,
          cpuSeconds: cpu,
          threadCpuSeconds: threads,
          requestsPerStreamSecond: (after.chunks - before.chunks) / streams / wallSeconds,
          sessionErrors: sessionErrors(after) - sessionErrors(before),
          failed: status.name !== 'RUNNING',
        };
      } finally {
        await handle.terminate('measured').catch(() => undefined);
        await worker.stop();
      }
    },
    async close() {
      workflows.shutdown();
      await running;
      await client.connection.close();
      await workerConnection.close();
    },
  };
}
