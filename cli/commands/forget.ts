/**
 * `callpipe forget`: erases calls everywhere callpipe wrote them, for a customer's request to have their
 * data erased (workflows/forget.ts does it, resumable and exactly once per request). The calls are named
 * by id or found as `find` finds them; the value asked is never printed. The request's id is derived
 * from what it asks, so the same request twice is one erasure and the second prints the first's record.
 */
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline/promises';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import { CliError, parseCommandArgs } from '../command.ts';
import { connectPipeline, pipelineConfig, type PipelineClient } from '../stack-client.ts';
import { displayWidth, textTable } from '../text-table.ts';
import { callsAsked, CALLS_ASKED_OPTIONS } from '../calls-asked.ts';
import pLimit from 'p-limit';
import { createObjectStore, type ObjectStore } from '../../activities/storage/object-store.ts';
import {
  callHoldings,
  LOOKUPS_AT_ONCE,
  type CallHoldings,
  type CallPlaces,
} from '../../activities/lifecycle/call-objects.ts';
import { namedKey } from '../../activities/lifecycle/lifecycle-activities.ts';
import { assertSafeCallId, KeyError } from '../../schemas/call-keys.ts';
import { taskQueues } from '../../schemas/config.ts';
import { maskedValue } from '../../schemas/personal-digest.ts';
import { forgetInputSchema, lettersOfHex, type ForgetInput } from '../../schemas/lifecycle.ts';
import { forget, type ForgetResult } from '../../workflows/forget.ts';

export const summary = 'erases calls everywhere callpipe wrote them, for an erasure request';
export const help = `Usage: callpipe forget <callId>… [--recordings] [--dry-run] [--yes] [--json]
       callpipe forget --phone N | --customer ID | --email A [options]

Erases what callpipe holds about the calls, for a customer's request to have their data erased (APPI
Art. 35; docs/requests-from-customers.md, docs/lifecycle.md): every object it wrote for them (result.json, transcript.vtt, error.json,
call.html, the redacted audio, the unredacted copies, staging, their table files and locators), their rows
in every Parquet partition of every analysis table (the other rows stay as they were), their lines in the
batch reports and night reports, and their workflow executions in Temporal (histories and visibility).
Then it lists and reads back that nothing of them remains, and keeps an audit record (request id, time,
call ids and counts; never a value) under audit/forget/ in the output bucket.

The erasure is a Temporal workflow: it resumes after a crash, and the same request (same calls, same
options) is one erasure, so asking twice erases once and prints the first one's record. A delete S3
refuses fails the request with the key named.

  --recordings      the source recordings too (they are the call center's: only when asked)
  --dry-run         list what would go, erase nothing
  --yes             do not ask for confirmation (required without a terminal)
  --phone <N>, --email <A>, --customer <ID>
                    the calls that hold this value, found as callpipe find finds them
  --out <s3://bucket/prefix>   where the calls' results are (default: CALLPIPE_S3_OUTPUT_PREFIX)
  --offline         with --phone/--email/--customer: the tables' local mirror as it is
  --json            print the audit record (or, with --dry-run, the listing) as JSON

What it cannot reach: copies made outside callpipe (downloads, exports, mirrors of the tables such as
callpipe query's local copy), and what the Language Analysis Service keeps on its side.`;

/** The request's id: letters only, derived from the calls and the options (see the file's comment). */
export function forgetRequestId(callIds: readonly string[], recordings: boolean, outputUrl: string): string {
  const hash = createHash('sha256')
    .update(JSON.stringify({ calls: [...new Set(callIds)].sort(), recordings, output: outputUrl }))
    .digest('hex');
  return `forget-${lettersOfHex(hash.slice(0, 20))}`;
}

/** The rows of one call in the listing: kind, object (recording keys masked). */
function rowsOf(h: CallHoldings, executions: number): string[][] {
  const rows: string[][] = [];
  for (const o of h.objects) rows.push([h.callId, o.kind, namedKey(o.bucket, o.key)]);
  for (const s of h.shared)
    rows.push([h.callId, s.kind === 'report' ? 'report lines' : 'table rows', namedKey(s.bucket, s.key)]);
  if (executions) rows.push([h.callId, 'workflow executions', String(executions)]);
  if (!h.objects.length && !h.shared.length && !executions) rows.push([h.callId, 'nothing held', '']);
  return rows;
}

/** Widest of the listing's second column: its header and every kind a row can name. */
const WHAT_WIDTH = 'workflow executions'.length;

/**
 * The listing of what would go, printed call by call as each is looked up (thousands of calls take
 * minutes: nothing waits for the last), its columns aligned by the widest call id asked.
 */
function listingPrinter(callIds: readonly string[], write: (line: string) => void) {
  const callWidth = Math.max('call'.length, ...callIds.map((id) => displayWidth(id)));
  const line = (cells: string[]) =>
    textTable([cells, ['x'.repeat(callWidth), 'x'.repeat(WHAT_WIDTH), '']]).split('\n')[0]!;
  return {
    header: () => write(line(['call', 'what', 'object'])),
    call: (h: CallHoldings, executions: number) => {
      for (const row of rowsOf(h, executions)) write(line(row));
    },
  };
}

/** `forget: looked up N of M calls` on stderr, ten times in all (every call for fewer than ten). */
function lookupProgress(total: number): (done: number) => void {
  const step = Math.max(1, Math.ceil(total / 10));
  if (total > 1) process.stderr.write(`forget: looking up what callpipe holds of ${total} calls…\n`);
  return (done) => {
    if (total > 1 && (done % step === 0 || done === total))
      process.stderr.write(`forget: looked up ${done} of ${total} calls\n`);
  };
}

/**
 * Looks every call up (its objects, shared files and workflow executions), a few at a time, handing
 * each to `onCall` in the order asked as soon as it is known.
 */
async function lookUp(
  store: ObjectStore,
  pc: PipelineClient,
  places: CallPlaces,
  callIds: readonly string[],
  recordings: boolean,
  onCall: (h: CallHoldings, executions: number) => void,
): Promise<{ holdings: CallHoldings[]; executions: Map<string, number> }> {
  const limit = pLimit(LOOKUPS_AT_ONCE);
  const counts = callIds.map((id) =>
    limit(() => pc.client.workflow.count(`CallpipeCallId = '${id}'`).then((c) => c.count)),
  );
  // Awaited in order below; a failure is thrown there, not reported as unhandled before its turn.
  for (const c of counts) c.catch(() => undefined);
  const progress = lookupProgress(callIds.length);
  const executions = new Map<string, number>();
  let told = Promise.resolve();
  const holdings = await callHoldings(store, places, callIds, {
    recordings,
    onCall: (h, i) => {
      told = told.then(async () => {
        const n = await counts[i]!;
        executions.set(h.callId, n);
        onCall(h, n);
        progress(i + 1);
      });
      told.catch(() => undefined);
    },
  });
  await told;
  return { holdings, executions };
}

/** Asks on the terminal; refuses without one (a script must say --yes). */
function assertCanConfirm(): void {
  if (!process.stdin.isTTY || !process.stdout.isTTY)
    throw new CliError(
      'forget: no terminal to confirm the erasure on; nothing was erased. Pass --yes to erase without asking',
    );
}

async function confirmed(question: string): Promise<boolean> {
  assertCanConfirm();
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return (await rl.question(`${question} Type yes to erase: `)).trim().toLowerCase() === 'yes';
  } finally {
    rl.close();
  }
}

/** What a dry run would erase, as `--json` prints it: object names, never values. */
function dryRunJson(
  holdings: Awaited<ReturnType<typeof lookUp>>['holdings'],
  executions: Map<string, number>,
): string {
  return JSON.stringify(
    holdings.map((h) => ({
      callId: h.callId,
      objects: h.objects.map((o) => ({ kind: o.kind, object: namedKey(o.bucket, o.key) })),
      shared: h.shared.map((s) => ({ kind: s.kind, object: namedKey(s.bucket, s.key) })),
      workflowExecutions: executions.get(h.callId) ?? 0,
    })),
    null,
    2,
  );
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('forget', argv, {
    recordings: { type: 'boolean', default: false },
    'dry-run': { type: 'boolean', default: false },
    yes: { type: 'boolean', default: false },
    ...CALLS_ASKED_OPTIONS,
    json: { type: 'boolean', default: false },
  });
  for (const id of positionals) {
    try {
      assertSafeCallId(id);
    } catch (err) {
      throw new CliError(`forget: ${(err as KeyError).message}`);
    }
  }
  // Refused before any lookup, which may take minutes for thousands of calls.
  if (!values['dry-run'] && !values.yes) assertCanConfirm();
  const { config } = pipelineConfig();
  const { places, callIds, asked } = await callsAsked('forget', config, values, positionals);
  if (asked && callIds.length === 0) {
    console.log(`no call holds ${maskedValue(asked.kind, asked.value)}; nothing to erase`);
    return 0;
  }
  const store = createObjectStore(config.s3);
  const pc = await connectPipeline(config);
  try {
    const n = callIds.length;
    const dryRun = values['dry-run'];
    // The listing is for a dry run and for the confirmation; with --yes the workflow lists for itself.
    if (dryRun || !values.yes) {
      const printer = listingPrinter(callIds, (line) => console.log(line));
      const streamed = !values.json;
      if (streamed) {
        console.log(dryRun ? 'would erase (dry run, nothing erased):' : 'would erase:');
        printer.header();
      }
      const { holdings, executions } = await lookUp(
        store,
        pc,
        places,
        callIds,
        values.recordings,
        (h, count) => streamed && printer.call(h, count),
      );
      if (dryRun) {
        if (values.json) console.log(dryRunJson(holdings, executions));
        return 0;
      }
      if (!(await confirmed(`Erase ${n} call${n === 1 ? '' : 's'}?`))) {
        console.log('nothing was erased');
        return 1;
      }
    }
    const input: ForgetInput = forgetInputSchema.parse({
      requestId: forgetRequestId(
        callIds,
        values.recordings,
        `s3://${places.output.bucket}/${places.output.prefix}`,
      ),
      callIds,
      places,
      recordings: values.recordings,
      reason: 'forget',
    });
    let result: ForgetResult;
    let before = false;
    process.stderr.write(
      `forget: erasing ${n} call${n === 1 ? '' : 's'} (request ${input.requestId}), then verifying that nothing of them remains…\n`,
    );
    try {
      result = await pc.client.workflow.execute(forget, {
        workflowId: input.requestId,
        taskQueue: taskQueues(config).workflows,
        args: [input],
        // A finished erasure stands (the repeat prints its record); a failed one may run again.
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      before = true;
      result = (await pc.client.workflow.getHandle(input.requestId).result()) as ForgetResult;
    }
    const { audit, auditKey } = result;
    if (values.json) console.log(JSON.stringify({ ...audit, auditKey, repeated: before }, null, 2));
    else
      console.log(
        `${before ? 'already erased by an earlier request' : 'erased'}: ${audit.totals.calls} call(s), ` +
          `${audit.totals.objects} object(s), ${audit.totals.tableRows} table row(s), ` +
          `${audit.totals.reportsRewritten} report file(s), ${audit.totals.workflowExecutions} workflow execution(s); ` +
          `verified; request ${audit.requestId}, audit record s3://${places.output.bucket}/${auditKey}`,
      );
    return 0;
  } finally {
    await pc.close();
  }
}
