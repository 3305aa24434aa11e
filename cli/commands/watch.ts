/**
 * `callpipe watch`: starts (or updates) the watch of a prefix and returns once it runs; `watch status`
 * and `watch stop`. The watch's id derives from the prefix and the output, so the same command again
 * updates the running watch with its new settings.
 */
import {
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  type WorkflowHandle,
} from '@temporalio/client';
import { CliError, parseCommandArgs } from '../command.ts';
import { connectPipeline, type PipelineClient } from '../stack-client.ts';
import { callSpec, outputLocation } from '../submit.ts';
import { latencyFirst } from '../../schemas/call-spec.ts';
import { normalizePrefix, parseS3Url } from '../../schemas/call-keys.ts';
import { personalDataIn, shortHash, slug } from '../../activities/storage/call-id.ts';
import { taskQueues } from '../../schemas/config.ts';
import type { BackfillFilters } from '../../schemas/backfill.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import {
  DEFAULT_POLL_SECONDS,
  DEFAULT_RECONCILE_SECONDS,
  DEFAULT_SETTLE_SECONDS,
  watchInputSchema,
  type WatchInput,
  type WatchSource,
  type WatchStatus,
} from '../../schemas/watch.ts';
import { DEFAULT_CONCURRENCY } from '../../schemas/backfill.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../workflows/search-attribute-keys.ts';
import { callFileHelp, storeCallFiles } from '../call-files.ts';
import { RECOGNITION_OPTION, recognitionFlag, recognitionHelp } from '../recognition-flag.ts';
import { configureWatchUpdate, stopWatchUpdate, watch, watchStatusQuery } from '../../workflows/watch.ts';

export const summary = 'processes recordings as they land under an s3:// prefix, each once, until stopped';
export const help = `Usage: callpipe watch <s3://bucket/prefix/> [options]
       callpipe watch status [<s3://bucket/prefix/> | <watch id>] [--out …] [--json]
       callpipe watch stop <s3://bucket/prefix/ | watch id> [--out …] [--detach] [--json]

Starts the watch of a prefix (a long-running workflow), or updates the running one with these settings,
and returns once it runs. Every recording that lands under the prefix is processed once, with the call
ids, skip-if-done and output layout of \`callpipe backfill\`; what is there already and not done is
processed too. A recording is taken once its size and ETag have stayed the same for --settle (an upload
in parts is invisible until it completes; a file replaced while settling settles again).

  --out <s3://bucket/prefix> where results go (default: the configured output prefix)
  --settle <duration>       how long a recording must stay unchanged (default ${DEFAULT_SETTLE_SECONDS}s; 90s, 2m, 0)
  --poll <duration>         how often the prefix is listed (default ${DEFAULT_POLL_SECONDS}s)
  --reconcile <duration>    how often the whole prefix is listed again (default ${DEFAULT_RECONCILE_SECONDS / 60}m)
  --sqs <queue url>         take S3 event notifications (AWS format) from this SQS queue; the listing
                            then only reconciles. Every message read is deleted: one queue per watch.
  --concurrency <N>         calls processed at once (default ${DEFAULT_CONCURRENCY})
  --plan <latency|throughput>  latency (default): while the account has sessions free, each call is cut
                            in silence into short sessions that stream side by side; throughput: the
                            configured plan, as a backfill's
  --ext <wav,mp3,…>         extensions to take (default: the recording formats, others by content)
  --min-bytes <N>, --max-bytes <N>   size filter
${callFileHelp(28)}
${recognitionHelp(28)}
  --wait-timeout <duration> how long to wait for a worker to run the watch (default 60s)
  --json                    machine-readable output (one JSON document)

status: the watches running (or the one named): phase, pending, running, started, done, failed, skipped.
stop:   no new calls; the running ones finish; waits for the watch to end unless --detach.
A bare number of a duration is seconds. Exit code 1 when the watch does not run (or no worker took it).`;

const WAIT_TIMEOUT_MS = 60_000;

const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };

/** A duration option (`30s`, `2m`, `1h`, `500ms`; a bare number is seconds) in seconds. */
export function durationSeconds(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/.exec(value.trim());
  if (!m) throw new CliError(`watch: --${name} must be a duration such as 30s, 2m or 1h (got '${value}')`);
  return Number(m[1]) * UNIT_SECONDS[m[2] ?? 's']!;
}

function intOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new CliError(`watch: --${name} must be a positive integer`);
  return n;
}

/**
 * The watch id of a prefix and an output: readable, stable, and without personal data (a prefix whose
 * name holds a number or an address is named by its hash alone).
 */
export function watchIdOf(source: WatchSource, output: OutputLocation): string {
  const where = (source.prefix || source.bucket).replace(/\/+$/, '').split('/').slice(-2).join('-');
  const name = personalDataIn(where) ? 'prefix' : slug(where);
  const hash = shortHash(
    `${source.bucket}/${source.prefix}|${output.bucket}/${normalizePrefix(output.prefix)}`,
    10,
  );
  return `watch-${name}-${hash}`;
}

function sourceOf(url: string | undefined): WatchSource {
  const s3 = url ? parseS3Url(url) : undefined;
  if (!s3) throw new CliError(`watch: '${url ?? ''}' is not s3://bucket/prefix/`);
  return { bucket: s3.bucket, prefix: s3.key };
}

/** The watch a target names: a watch id as is, an s3:// prefix with the output. */
function watchIdFor(target: string, out: string | undefined, pc: PipelineClient): string {
  if (/^watch-[A-Za-z0-9._:-]+$/.test(target)) return target;
  return watchIdOf(sourceOf(target), outputLocation(out, pc.config));
}

function webUiLink(pc: PipelineClient, watchId: string): string | undefined {
  if (!pc.webUiUrl) return undefined;
  const query = encodeURIComponent(`CallpipeBatchId="${watchId}"`);
  return `${pc.webUiUrl}/namespaces/${pc.config.temporal.namespace}/workflows?query=${query}`;
}

async function isRunning(handle: WorkflowHandle): Promise<boolean> {
  try {
    return (await handle.describe()).status.name === 'RUNNING';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** Waits until a worker answers the watch's status query: the watch runs. */
async function untilRunning(handle: WorkflowHandle<typeof watch>, timeoutMs: number): Promise<WatchStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await handle.query(watchStatusQuery).catch(() => undefined);
    if (status) return status;
    if (Date.now() > deadline)
      throw new CliError(
        `watch: the watch was started but no worker ran it within ${timeoutMs / 1000} s: are the workers up (callpipe up)?`,
        1,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Starts the watch, or updates the running one; resolves once it runs. */
export async function startWatch(
  pc: PipelineClient,
  input: WatchInput,
  waitTimeoutMs = WAIT_TIMEOUT_MS,
): Promise<{ status: WatchStatus; updated: boolean; handle: WorkflowHandle<typeof watch> }> {
  const existing = pc.client.workflow.getHandle<typeof watch>(input.watchId);
  if (await isRunning(existing)) {
    await existing.executeUpdate(configureWatchUpdate, { args: [input] }).catch((err: unknown) => {
      // Refused by the watch (it is stopping): its reason, as one line.
      const reason = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
      throw new CliError(`watch: ${reason}`, 1);
    });
    return { status: await untilRunning(existing, waitTimeoutMs), updated: true, handle: existing };
  }
  const handle = await pc.client.workflow.start(watch, {
    taskQueue: input.taskQueue ?? taskQueues(pc.config).workflows,
    workflowId: input.watchId,
    args: [input],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    typedSearchAttributes: [{ key: SEARCH_ATTRIBUTE_KEYS.batchId, value: input.watchId }],
    staticSummary: `watch ${input.watchId}`,
  });
  return { status: await untilRunning(handle, waitTimeoutMs), updated: false, handle };
}

export function statusLine(s: WatchStatus): string {
  return (
    `${s.watchId}  ${s.phase}  ${s.mode}, settle ${s.settleSeconds} s  pending ${s.pending}  running ${s.running}  ` +
    `started ${s.started}  done ${s.done}${s.partial ? `  partial ${s.partial}` : ''}  failed ${s.failed}  ` +
    `skipped ${s.skipped}  run ${s.run}${s.sourceProblem ? `  (source: ${s.sourceProblem})` : ''}`
  );
}

async function startCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('watch', argv, {
    out: { type: 'string' },
    settle: { type: 'string' },
    poll: { type: 'string' },
    reconcile: { type: 'string' },
    sqs: { type: 'string' },
    concurrency: { type: 'string' },
    plan: { type: 'string' },
    ext: { type: 'string' },
    'min-bytes': { type: 'string' },
    'max-bytes': { type: 'string' },
    rules: { type: 'string' },
    dictionary: { type: 'string' },
    'wait-timeout': { type: 'string' },
    json: { type: 'boolean', default: false },
    ...RECOGNITION_OPTION,
  });
  const recognition = recognitionFlag('watch', values.recognition);
  if (positionals.length !== 1) throw new CliError('watch: give one s3://bucket/prefix/ (or status / stop)');
  const source = sourceOf(positionals[0]);
  if (values.out && !parseS3Url(values.out)) throw new CliError('watch: --out must be s3://bucket/prefix');
  if (values.sqs !== undefined && !/^https?:\/\/[^/]+\/.+/.test(values.sqs))
    throw new CliError(
      `watch: --sqs must be a queue URL (https://sqs.<region>.amazonaws.com/<account>/<queue>)`,
    );
  const filters: BackfillFilters = {
    ...(values.ext ? { extensions: values.ext.split(',').map((e) => e.trim().replace(/^\./, '')) } : {}),
    ...(values['min-bytes'] ? { minBytes: intOption('min-bytes', values['min-bytes']) } : {}),
    ...(values['max-bytes'] ? { maxBytes: intOption('max-bytes', values['max-bytes']) } : {}),
  };
  const settle = durationSeconds('settle', values.settle);
  const poll = durationSeconds('poll', values.poll);
  const reconcile = durationSeconds('reconcile', values.reconcile);
  if (poll === 0 || reconcile === 0) throw new CliError('watch: --poll and --reconcile must be more than 0');
  const waitTimeout = durationSeconds('wait-timeout', values['wait-timeout']);
  const plan = values.plan ?? 'latency';
  if (plan !== 'latency' && plan !== 'throughput')
    throw new CliError(`watch: --plan must be latency or throughput (got '${plan}')`);

  const pc = await connectPipeline();
  try {
    const output = outputLocation(values.out, pc.config);
    const files = await storeCallFiles(pc.store, pc.config, {
      rules: values.rules,
      dictionary: values.dictionary,
    });
    const parsed = watchInputSchema.safeParse({
      watchId: watchIdOf(source, output),
      source,
      output,
      filters,
      ...(settle !== undefined ? { settleSeconds: settle } : {}),
      ...(poll !== undefined ? { pollSeconds: poll } : {}),
      ...(reconcile !== undefined ? { reconcileSeconds: reconcile } : {}),
      ...(values.concurrency ? { concurrency: intOption('concurrency', values.concurrency) } : {}),
      ...(values.sqs ? { sqs: { queueUrl: values.sqs } } : {}),
      spec:
        plan === 'latency'
          ? latencyFirst(callSpec(pc.config, output, files, recognition))
          : callSpec(pc.config, output, files, recognition),
    });
    if (!parsed.success)
      throw new CliError(
        `watch: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    const { status, updated } = await startWatch(
      pc,
      parsed.data,
      waitTimeout !== undefined ? waitTimeout * 1000 : WAIT_TIMEOUT_MS,
    );
    const ui = webUiLink(pc, status.watchId);
    if (values.json) console.log(JSON.stringify({ ...status, updated, ...(ui ? { webUi: ui } : {}) }));
    else {
      console.log(`${updated ? 'updated' : 'watching'}: ${statusLine(status)}`);
      if (ui) console.log(`Web UI: ${ui}`);
      console.log(`stop it with: callpipe watch stop ${status.watchId}`);
    }
    return 0;
  } finally {
    await pc.close();
  }
}

async function statusCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('watch status', argv, {
    out: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  const pc = await connectPipeline();
  try {
    let ids: string[];
    if (positionals[0]) ids = [watchIdFor(positionals[0], values.out, pc)];
    else {
      ids = [];
      for await (const w of pc.client.workflow.list({
        query: `WorkflowType = 'watch' AND ExecutionStatus = 'Running'`,
      }))
        ids.push(w.workflowId);
    }
    const statuses: WatchStatus[] = [];
    for (const id of ids) {
      const handle = pc.client.workflow.getHandle<typeof watch>(id);
      if (await isRunning(handle)) {
        const s = await handle.query(watchStatusQuery).catch(() => undefined);
        if (s) statuses.push(s);
      } else if (positionals[0]) {
        // A stopped watch: its last status is its result.
        const s = await handle.result().catch(() => undefined);
        if (s) statuses.push(s);
      }
    }
    if (values.json) console.log(JSON.stringify(statuses, null, 2));
    else if (statuses.length === 0)
      console.log(positionals[0] ? `no such watch: ${ids[0]}` : 'no watch is running');
    else for (const s of statuses) console.log(statusLine(s));
    return positionals[0] && statuses.length === 0 ? 1 : 0;
  } finally {
    await pc.close();
  }
}

async function stopCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('watch stop', argv, {
    out: { type: 'string' },
    detach: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  });
  if (positionals.length !== 1)
    throw new CliError('watch stop: give the s3://bucket/prefix/ or the watch id');
  const pc = await connectPipeline();
  try {
    const id = watchIdFor(positionals[0]!, values.out, pc);
    const handle = pc.client.workflow.getHandle<typeof watch>(id);
    if (!(await isRunning(handle))) throw new CliError(`watch stop: no running watch ${id}`, 1);
    const stopping = await handle.executeUpdate(stopWatchUpdate);
    if (!values.json && !values.detach && stopping.running > 0)
      console.error(`stopping ${id}: waiting for ${stopping.running} running call(s) to finish`);
    const status = values.detach ? stopping : await handle.result();
    if (values.json) console.log(JSON.stringify(status));
    else console.log(`${values.detach ? 'stopping' : 'stopped'}: ${statusLine(status)}`);
    return 0;
  } finally {
    await pc.close();
  }
}

export async function run(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === 'status') return statusCommand(rest);
  if (first === 'stop') return stopCommand(rest);
  return startCommand(argv);
}
