/**
 * `callpipe backfill`: starts (or attaches to) the backfill of a prefix or a manifest and follows it
 * with a progress bar. The batch id, and so the workflow id, derive from the input and the output: the
 * same command twice attaches to the running batch, or, once it finished, runs it again (skipping done
 * calls).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy, type WorkflowHandle } from '@temporalio/client';
import { CliError, parseCommandArgs } from '../command.ts';
import { connectPipeline, type PipelineClient } from '../stack-client.ts';
import { callSpec, outputLocation } from '../submit.ts';
import { normalizePrefix, parseS3Url, uploadKey } from '../../schemas/call-keys.ts';
import { callIdRuleOf, reportedSource, shortHash, slug } from '../../activities/storage/call-id.ts';
import { taskQueues, type CallIdMode } from '../../schemas/config.ts';
import { MANIFEST_LIMITS } from '../../schemas/manifest.ts';
import { ManifestError, readManifest, tooLargeManifest } from '../../activities/backfill/manifest.ts';
import { isPermanentS3Error, isS3CredentialsRefusal } from '../../activities/storage/s3-errors.ts';
import {
  backfillInputSchema,
  type BackfillFilters,
  type BackfillInput,
  type BackfillRequest,
  type BackfillSource,
} from '../../schemas/backfill.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../workflows/search-attribute-keys.ts';
import { callFileHelp, storeCallFiles } from '../call-files.ts';
import { RECOGNITION_OPTION, recognitionFlag, recognitionHelp } from '../recognition-flag.ts';
import {
  backfill,
  backfillProgressQuery,
  type BackfillProgress,
  type BackfillResult,
} from '../../workflows/backfill.ts';

export const summary = 'processes everything under an s3:// prefix or listed in a CSV manifest';
export const help = `Usage: callpipe backfill <s3://bucket/prefix | --manifest <file.csv | s3://bucket/key>> [options]

Starts one backfill batch (or attaches to the running one of the same input and output), waits for it
showing its progress, and prints the calls done, partial (results written, a text step failed), failed
and skipped, and where the batch report is. Calls whose result.json exists are skipped without
starting any work; every other recording gets one processRecording workflow, at most --concurrency at once.

  --manifest <file|s3://…>  CSV with a uri or key column, and optional call_id, agent, direction,
                            started_at, channels (e.g. agent,customer) and any other columns, which
                            travel into each result's source.metadata. A local file is uploaded first.
  --out <s3://bucket/prefix> where results go (default: the configured output prefix)
  --concurrency <N>         calls processed at once (sliding window; default 20)
  --ext <wav,mp3,…>         extensions to take (default: wav,mp3,m4a,mp4,aac,ogg,opus,flac,webm,wma)
  --min-bytes <N>, --max-bytes <N>   size filter
  --from <ISO>, --until <ISO>        date filter (manifest started_at, else the object's last-modified)
  --page-size <N>           recordings listed per page (default 200)
  --children-per-run <N>    children per workflow run before continue-as-new (default 500)
  --redo                    process calls again even when done
${callFileHelp(28)}
${recognitionHelp(28)}
  --detach                  start or attach, print the ids and return without waiting
  --json                    machine-readable output (one JSON document)

The manifest is checked whole before anything starts (a local file by the command, one in S3 by the
command when it may read it, else by the batch's first step): a header that repeats a column, a call id
given to two different recordings, a bad cell, or an empty file refuses it, with every problem by its
line; nothing is started. A row that repeats an earlier one exactly is processed once and reported as a
duplicate. At most ${MANIFEST_LIMITS.maxRows.toLocaleString('en-US')} rows and ${MANIFEST_LIMITS.maxBytes / 1024 ** 2} MiB (docs/input-limits.md).

Exit code: 0 when the batch finished with no failed or cancelled call (partial calls are not
failures), 1 otherwise (and when the manifest is refused, --detach too).

Control a running batch: \`callpipe status <id>\`, and the workflow's updates pause / resume / cancel
(e.g. \`temporal workflow update execute --name pause -w <id>\`), or cancel it in the Web UI.`;

/**
 * The batch id of an input: readable, and stable for the same source, output and filters. It is a
 * workflow id, a search attribute and a key prefix, so a number or an address in the prefix or the
 * manifest's name is masked as in call ids (`s3://b/09012345678/` → `prefix-xxxxxxxxxxx-…`).
 */
export function batchIdOf(
  source: BackfillSource,
  output: OutputLocation,
  identity: string,
  callIds: CallIdMode = 'auto',
): string {
  const where = source.kind === 'prefix' ? source.prefix || source.bucket : basename(source.key);
  const name = slug(reportedSource(where.replace(/\/+$/, '').split('/').slice(-2).join('-'), callIds));
  return `${source.kind}-${name}-${shortHash(`${identity}|${output.bucket}/${normalizePrefix(output.prefix)}`, 10)}`;
}

export function backfillWorkflowId(batchId: string): string {
  return `backfill-${batchId}`;
}

export interface StartedBackfill {
  batchId: string;
  workflowId: string;
  handle: WorkflowHandle<typeof backfill>;
  input: BackfillInput;
}

/**
 * Starts a batch, or attaches to the running one with the same id (USE_EXISTING). Its calls' settings
 * are the configuration's for its output unless the request gives them.
 */
export async function startBackfill(
  pc: PipelineClient,
  request: Omit<BackfillRequest, 'spec'> & { spec?: BackfillRequest['spec'] },
): Promise<StartedBackfill> {
  const spec = request.spec ?? callSpec(pc.config, request.output);
  const input = backfillInputSchema.parse({ ...request, spec });
  const workflowId = backfillWorkflowId(input.batchId);
  const handle = await pc.client.workflow.start(backfill, {
    taskQueue: taskQueues(pc.config).workflows,
    workflowId,
    args: [input],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    typedSearchAttributes: [{ key: SEARCH_ATTRIBUTE_KEYS.batchId, value: input.batchId }],
    staticSummary: `backfill ${input.batchId}`,
  });
  return { batchId: input.batchId, workflowId, handle, input };
}

/**
 * A manifest's refusal as the command prints it: its name, every problem by its line, and that nothing
 * started (schemas/manifest.ts, activities/backfill/manifest.ts).
 */
function refused(manifest: string, err: unknown): unknown {
  if (!(err instanceof ManifestError)) return err;
  return new CliError(`--manifest ${manifest}: ${err.message}\nnothing was started`, 1);
}

/**
 * A local manifest is validated whole (within its bounds, read as a stream) before it goes to the input
 * prefix, content-addressed; an s3:// one is validated where it is when the command may read it (else
 * the batch's first step does, and the batch fails with the same problems). Nothing starts from a
 * manifest that is refused.
 */
export async function manifestSource(
  pc: PipelineClient,
  manifest: string,
): Promise<{ source: BackfillSource; identity: string }> {
  const s3 = parseS3Url(manifest);
  if (s3) {
    if (!s3.key) throw new CliError(`--manifest '${manifest}' names a bucket, not an object`);
    const object = pc.store.withBucket(s3.bucket);
    const head = await object.head(s3.key);
    if (!head) throw new CliError(`no such manifest: ${manifest}`, 1);
    if (head.size > MANIFEST_LIMITS.maxBytes) throw refused(manifest, tooLargeManifest(head.size));
    const body = await object.getStream(s3.key).catch((err: unknown) => {
      // Readable by the workers only: the batch's first step validates it.
      if (isPermanentS3Error(err) && !isS3CredentialsRefusal(err)) return undefined;
      throw err;
    });
    if (body)
      await readManifest(body, s3.bucket, { callIds: callIdRuleOf(pc.config) }).catch((err: unknown) =>
        Promise.reject(refused(manifest, err)),
      );
    return {
      source: { kind: 'manifest', bucket: s3.bucket, key: s3.key },
      identity: `${manifest}@${head.etag}`,
    };
  }
  const path = resolve(manifest);
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) throw new CliError(`no such file: ${manifest}`, 1);
  if (info.size > MANIFEST_LIMITS.maxBytes) throw refused(manifest, tooLargeManifest(info.size));
  // One read: validated and hashed as it streams.
  const hash = createHash('sha256');
  const hashed = createReadStream(path).map((chunk: Buffer) => {
    hash.update(chunk);
    return chunk;
  });
  await readManifest(hashed, pc.store.bucket, { callIds: callIdRuleOf(pc.config) }).catch((err: unknown) =>
    Promise.reject(refused(manifest, err)),
  );
  const digest = hash.digest('hex');
  const key = uploadKey(pc.config.s3.inputPrefix, 'manifests', digest, basename(path));
  if (!(await pc.store.exists(key))) await pc.store.putFile(key, path, { contentType: 'text/csv' });
  return { source: { kind: 'manifest', bucket: pc.store.bucket, key }, identity: `sha256:${digest}` };
}

function intOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new CliError(`backfill: --${name} must be a positive integer`);
  return n;
}

function isoOption(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new CliError(`backfill: --${name} must be an ISO 8601 date or time`);
  return new Date(t).toISOString();
}

const BAR_WIDTH = 30;

export function progressLine(p: BackfillProgress): string {
  const settled = p.done + p.partial + p.failed + p.cancelled;
  const total = p.started + (p.listingFinished ? 0 : 1);
  const fraction = p.listingFinished && p.started === 0 ? 1 : settled / Math.max(1, total);
  const filled = Math.round(Math.min(1, fraction) * BAR_WIDTH);
  return (
    `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${p.phase.padEnd(9)} ` +
    `listed ${p.listed}${p.listingFinished ? '' : '+'} skipped ${p.skipped} running ${p.running} ` +
    `done ${p.done}${p.partial ? ` partial ${p.partial}` : ''} failed ${p.failed}` +
    `${p.cancelled ? ` cancelled ${p.cancelled}` : ''} ` +
    `audio ${p.audioHours.toFixed(2)} h run ${p.run}`
  );
}

/** Follows a batch to its end, redrawing one line on a TTY (a line per change otherwise). */
export async function followBackfill(
  handle: WorkflowHandle<typeof backfill>,
  quiet: boolean,
): Promise<BackfillResult> {
  const tty = process.stderr.isTTY && !quiet;
  let done = false;
  // `result()` follows continue-as-new to the last run.
  const result = handle.result().finally(() => {
    done = true;
  });
  let last = '';
  while (!done) {
    const p = await handle.query(backfillProgressQuery).catch(() => undefined);
    if (p && !quiet) {
      const line = progressLine(p);
      if (tty) process.stderr.write(`\r\x1b[2K${line}`);
      else if (line !== last) process.stderr.write(`${line}\n`);
      last = line;
    }
    await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, 1000))]);
  }
  if (tty) process.stderr.write('\n');
  return result;
}

/** `callpipe backfill`'s options (parseArgs). */
const BACKFILL_OPTIONS = {
  manifest: { type: 'string' },
  out: { type: 'string' },
  concurrency: { type: 'string' },
  ext: { type: 'string' },
  'min-bytes': { type: 'string' },
  'max-bytes': { type: 'string' },
  from: { type: 'string' },
  until: { type: 'string' },
  'page-size': { type: 'string' },
  'children-per-run': { type: 'string' },
  redo: { type: 'boolean', default: false },
  detach: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  rules: { type: 'string' },
  dictionary: { type: 'string' },
  ...RECOGNITION_OPTION,
} as const;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('backfill', argv, BACKFILL_OPTIONS);
  const recognition = recognitionFlag('backfill', values.recognition);
  if (positionals.length > 1) throw new CliError('backfill: give one s3://bucket/prefix (or --manifest)');
  const hasPrefix = positionals.length === 1;
  if (hasPrefix === Boolean(values.manifest))
    throw new CliError('backfill: give either an s3://bucket/prefix or --manifest <file.csv | s3://…>');
  if (values.out && !parseS3Url(values.out)) throw new CliError('backfill: --out must be s3://bucket/prefix');

  const filters: BackfillFilters = {
    ...(values.ext ? { extensions: values.ext.split(',').map((e) => e.trim().replace(/^\./, '')) } : {}),
    ...(values['min-bytes'] ? { minBytes: Number(values['min-bytes']) } : {}),
    ...(values['max-bytes'] ? { maxBytes: intOption('max-bytes', values['max-bytes']) } : {}),
    ...(values.from ? { from: isoOption('from', values.from) } : {}),
    ...(values.until ? { until: isoOption('until', values.until) } : {}),
  };

  const pc = await connectPipeline();
  try {
    const output = outputLocation(values.out, pc.config);
    let source: BackfillSource;
    let identity: string;
    if (values.manifest) {
      ({ source, identity } = await manifestSource(pc, values.manifest));
    } else {
      const s3 = parseS3Url(positionals[0]!);
      if (!s3) throw new CliError(`backfill: '${positionals[0]}' is not s3://bucket/prefix`);
      source = { kind: 'prefix', bucket: s3.bucket, prefix: s3.key };
      identity = `s3://${s3.bucket}/${s3.key}`;
    }
    const files = await storeCallFiles(pc.store, pc.config, {
      rules: values.rules,
      dictionary: values.dictionary,
    });
    // Other rules are another batch (the same rules: the same batch, whatever the file's path).
    const batchId = batchIdOf(
      source,
      output,
      `${identity}|${JSON.stringify(filters)}${files.rulesKey ? `|${files.rulesKey}` : ''}${files.wordsKey ? `|${files.wordsKey}` : ''}`,
      pc.config.callIds,
    );
    const started = await startBackfill(pc, {
      spec: callSpec(pc.config, output, files, recognition),
      batchId,
      source,
      output,
      filters,
      concurrency: intOption('concurrency', values.concurrency),
      pageSize: intOption('page-size', values['page-size']),
      childrenPerRun: intOption('children-per-run', values['children-per-run']),
      redo: values.redo,
    });
    const ui = pc.webUiUrl
      ? `${pc.webUiUrl}/namespaces/${pc.config.temporal.namespace}/workflows?query=${encodeURIComponent(`CallpipeBatchId="${batchId}"`)}`
      : undefined;
    if (values.detach) {
      if (values.json) console.log(JSON.stringify({ batchId, workflowId: started.workflowId, webUi: ui }));
      else console.log(`batch ${batchId}  workflow ${started.workflowId}${ui ? `\nWeb UI: ${ui}` : ''}`);
      return 0;
    }
    if (!values.json) {
      console.error(`batch ${batchId} (workflow ${started.workflowId})`);
      if (ui) console.error(`Web UI: ${ui}`);
    }
    const result = await followBackfill(started.handle, values.json);
    if (values.json) console.log(JSON.stringify({ workflowId: started.workflowId, ...result }, null, 2));
    else {
      console.log(
        `${result.status}: ${result.done} done, ${result.partial} partial, ${result.failed} failed, ` +
          `${result.skipped} skipped, ${result.cancelled ? `${result.cancelled} cancelled, ` : ''}` +
          `${result.missing} missing, ${result.filtered} filtered out, ${result.audioHours.toFixed(2)} h of audio, ` +
          `${result.run + 1} run(s)`,
      );
      console.log(`report: s3://${output.bucket}/${result.reportCsvKey} (and report.json)`);
      if (result.reportHtmlKey) {
        console.log(
          `night report: s3://${output.bucket}/${result.reportHtmlKey} (callpipe open ${result.batchId})`,
        );
      }
    }
    return result.failed > 0 || result.cancelled > 0 || result.status !== 'done' ? 1 : 0;
  } finally {
    await pc.close();
  }
}
