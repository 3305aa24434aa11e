/**
 * `callpipe rescore`: scores stored results again with a rule file (workflows/rescore.ts): categories,
 * scorecard, metrics and `rules` of every result.json under a prefix, or of a manifest's calls, without
 * recognizing or analysing anything again. Starts the batch (or attaches to the running one of the same
 * results and rules) and follows it.
 */
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy, type WorkflowHandle } from '@temporalio/client';
import { CliError, parseCommandArgs } from '../command.ts';
import { connectPipeline, type PipelineClient } from '../stack-client.ts';
import { outputLocation } from '../submit.ts';
import { storeRules } from '../call-files.ts';
import { defaultRules } from '../../activities/insights/rule-file.ts';
import { locationUrl, outputLocationOf, parseS3Url } from '../../schemas/call-keys.ts';
import { tablesOf } from '../../schemas/call-spec.ts';
import { taskQueues } from '../../schemas/config.ts';
import { rescoreInputSchema, type RescoreSource } from '../../schemas/rescore.ts';
import { reasonsSettingsOf } from '../../schemas/call-spec.ts';
import { lineClassifiers } from '../../schemas/rules.ts';
import type { OutputLocation } from '../../schemas/recording.ts';
import {
  rescore,
  rescoreProgressQuery,
  type RescoreProgress,
  type RescoreResult,
} from '../../workflows/rescore.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../workflows/search-attribute-keys.ts';
import { batchIdOf, manifestSource } from './backfill.ts';

export const summary = 'scores stored results again with a rule file (no recognition, no text analysis)';
export const help = `Usage: callpipe rescore <s3://bucket/results-prefix | --manifest <file.csv | s3://bucket/key>> [--rules file] [options]

Recomputes the categories, scorecard and metrics of every finished call's result.json under a prefix
(the output prefix the calls were processed to), or of the calls a manifest lists (their results found
under --out), with a rule file, and records the rules' name, version and digest in each. Nothing is
recognized or analysed again: it costs no service request, except with a reasons model
(CALLPIPE_REASONS_MODEL or the rule file's reasons.model): then each call not yet classified with it is
classified from its stored, redacted text, one request a call; and with classifier rules, each line of
their speakers not yet classified with their model is, one request per distinct line and model. A call
already scored with the same rules is left as it is (\`current\`) unless --force; each call is written
at most once per batch, whatever retries happen. The same prefix and rules again attach to the batch while it runs.

  --rules <file>            the rule file (YAML or JSON; default CALLPIPE_RULES, else the shipped one),
                            checked before anything starts
  --manifest <file|s3://…>  CSV as \`callpipe backfill\` takes it: its calls' results are rescored
  --out <s3://bucket/prefix> where a manifest's results are (default: the configured output prefix)
  --force                   write every result again, even those already scored with these rules
  --page-size <N>           objects (prefix) or manifest rows per page (default 1000)
  --pages-per-run <N>       pages per workflow run before continue-as-new (default 50)
  --concurrency <N>         results scored at once within a page (default 8)
  --detach                  start or attach, print the ids and return without waiting
  --json                    machine-readable output (one JSON document)
Exit code: 0 when no result failed to score, 1 otherwise. Report: <results>batches/<batch id>/report.{json,csv}.`;

function intOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new CliError(`rescore: --${name} must be a positive integer`);
  return n;
}

export function progressLine(p: RescoreProgress): string {
  return (
    `${p.phase.padEnd(9)} listed ${p.listed} updated ${p.updated} current ${p.current} ` +
    `missing ${p.missing} failed ${p.failed} run ${p.run}`
  );
}

type RescoreValues = ReturnType<typeof parseRescoreArgs>['values'];

function parseRescoreArgs(argv: string[]) {
  const parsed = parseCommandArgs('rescore', argv, {
    rules: { type: 'string' },
    manifest: { type: 'string' },
    out: { type: 'string' },
    force: { type: 'boolean', default: false },
    'page-size': { type: 'string' },
    'pages-per-run': { type: 'string' },
    concurrency: { type: 'string' },
    detach: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  });
  const { values, positionals } = parsed;
  if (positionals.length > 1) throw new CliError('rescore: give one s3://bucket/prefix (or --manifest)');
  if ((positionals.length === 1) === Boolean(values.manifest))
    throw new CliError(
      'rescore: give either the s3://bucket/prefix of the results or --manifest <file.csv | s3://…>',
    );
  if (values.out && !parseS3Url(values.out)) throw new CliError('rescore: --out must be s3://bucket/prefix');
  return parsed;
}

/** What is rescored: a manifest's calls (results under --out) or every result under a prefix. */
async function rescoreTarget(
  pc: PipelineClient,
  values: RescoreValues,
  prefix: string | undefined,
): Promise<{ source: RescoreSource; output: OutputLocation; identity: string }> {
  if (values.manifest) {
    const m = await manifestSource(pc, values.manifest);
    if (m.source.kind !== 'manifest') throw new CliError('rescore: --manifest must name a CSV');
    return { source: m.source, output: outputLocation(values.out, pc.config), identity: m.identity };
  }
  const s3 = parseS3Url(prefix!);
  if (!s3) throw new CliError(`rescore: '${prefix}' is not s3://bucket/prefix`);
  let output: OutputLocation;
  try {
    output = outputLocationOf(prefix!, pc.config.s3.bucket);
  } catch (err) {
    throw new CliError(`rescore: ${(err as Error).message}`);
  }
  return {
    source: { kind: 'prefix', bucket: output.bucket, prefix: output.prefix },
    output,
    identity: locationUrl(output),
  };
}

/** Follows a rescore to its end, a line on stderr per change of its progress. */
async function followRescore(handle: WorkflowHandle<typeof rescore>, quiet: boolean): Promise<RescoreResult> {
  let finished = false;
  const result = handle.result().finally(() => {
    finished = true;
  });
  let last = '';
  while (!finished) {
    const p = await handle.query(rescoreProgressQuery).catch(() => undefined);
    const line = p ? progressLine(p) : '';
    if (p && !quiet && line !== last) process.stderr.write(`${line}\n`);
    last = line;
    await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, 1000))]);
  }
  return result;
}

/** The batch id of one execution of a rescore workflow: its id and the time it starts. */
function executionBatchId(workflowId: string): string {
  return `${workflowId}-${new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}`;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseRescoreArgs(argv);
  const sizes = {
    pageSize: intOption('page-size', values['page-size']),
    pagesPerRun: intOption('pages-per-run', values['pages-per-run']),
    concurrency: intOption('concurrency', values.concurrency),
  };

  const pc = await connectPipeline();
  try {
    const stored = await storeRules(pc.store, pc.config, values.rules);
    const rulesDigest = stored?.loaded.digest ?? defaultRules().digest;
    const reasons = reasonsSettingsOf(pc.config, stored?.loaded.rules.reasons?.model);
    const classifiesLines = lineClassifiers(stored?.loaded.rules ?? defaultRules().rules).length > 0;
    const { source, output, identity } = await rescoreTarget(pc, values, positionals[0]);
    // The same results and rules are the same workflow (a second start attaches to a running one);
    // each execution is its own batch, so a call written by it is known as such on a retry.
    const scoredWith = `${rulesDigest}${reasons ? `|${reasons.model}|${reasons.text}|${reasons.chars}` : ''}`;
    const workflowId = `rescore-${batchIdOf(source, output, `${identity}|${scoredWith}`, pc.config.callIds)}`;
    const batchId = executionBatchId(workflowId);
    const input = rescoreInputSchema.parse({
      batchId,
      source,
      output,
      ...(stored ? { rulesKey: stored.key } : {}),
      rulesDigest,
      force: values.force,
      // The tables of calls processed to `output`, as their spec placed them (schemas/call-spec.ts).
      tables: tablesOf(pc.config, output),
      ...(reasons ? { reasons } : {}),
      ...(reasons || classifiesLines ? { nlpTaskQueue: taskQueues(pc.config).nlp } : {}),
      ...Object.fromEntries(Object.entries(sizes).filter(([, v]) => v !== undefined)),
    });
    const handle = await pc.client.workflow.start(rescore, {
      taskQueue: taskQueues(pc.config).workflows,
      workflowId,
      args: [input],
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      typedSearchAttributes: [{ key: SEARCH_ATTRIBUTE_KEYS.batchId, value: batchId }],
      staticSummary: `rescore ${locationUrl(output)} with ${stored?.loaded.rules.name ?? 'the shipped rules'}`,
    });
    // Attached to a running batch: its id, not the one made here.
    const running = (await handle.query(rescoreProgressQuery).catch(() => undefined))?.batchId ?? batchId;
    if (values.detach) {
      if (values.json) console.log(JSON.stringify({ batchId: running, workflowId }));
      else console.log(`rescore ${running}  workflow ${workflowId}`);
      return 0;
    }
    if (!values.json) console.error(`rescore ${running} (workflow ${workflowId})`);
    const r = await followRescore(handle, values.json);
    if (values.json) console.log(JSON.stringify({ workflowId, ...r }, null, 2));
    else {
      console.log(
        `done: ${r.updated} updated, ${r.current} already current, ${r.missing} missing, ${r.failed} failed ` +
          `(${r.run + 1} run(s)); rules ${rulesDigest.slice(0, 19)}…`,
      );
      console.log(`report: s3://${output.bucket}/${r.reportCsvKey} (and report.json)`);
    }
    return r.failed > 0 ? 1 : 0;
  } finally {
    await pc.close();
  }
}
