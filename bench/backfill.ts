/**
 * Backfill benchmark (issue 6, "Done when"): N short generated recordings under one prefix, backfilled
 * on a local stack of its own (free ports, temp CALLPIPE_HOME, emulator at speed 100) with
 * continue-as-new; then the same backfill again, which must skip every call without starting a
 * recognition. Prints wall times, calls per second, the runs and the largest history (events) of any
 * run, and checks every call was done exactly once (one processRecording workflow per call).
 *
 *   node scripts/on-node.mjs ts bench/backfill.ts                 # 2,000 recordings
 *   node scripts/on-node.mjs ts bench/backfill.ts --count 200 --concurrency 40 --children-per-run 300
 *
 * Recordings: bench/lib/unique-recordings.ts (a few distinct calls, uploaded under many keys).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { isolatedStackConfig, startStack } from '../cli/stack/stack.ts';
import { connectPipeline } from '../cli/stack-client.ts';
import { outputLocation } from '../cli/submit.ts';
import { progressLine, startBackfill } from '../cli/commands/backfill.ts';
import { backfillProgressQuery } from '../workflows/backfill.ts';
import { processRecording } from '../workflows/process-recording.ts';
import { uniqueRecordings, uploadRecordings } from './lib/unique-recordings.ts';

const DISTINCT = 10;

function streamStarts(logPath: string | undefined): number {
  if (!logPath || !existsSync(logPath)) return 0;
  return readFileSync(logPath, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"started"')).length;
}

async function run(): Promise<void> {
  const { values } = parseArgs({
    options: {
      count: { type: 'string', default: '2000' },
      seconds: { type: 'string', default: '3' },
      concurrency: { type: 'string', default: '50' },
      /** Deprecated spelling of --concurrency. */
      window: { type: 'string' },
      'children-per-run': { type: 'string', default: '500' },
      'page-size': { type: 'string', default: '250' },
      speed: { type: 'string', default: '100' },
      keep: { type: 'boolean', default: false },
    },
  });
  const count = Number(values.count);
  if (values.window !== undefined)
    console.error(
      'bench/backfill: --window is deprecated; use --concurrency (the name callpipe backfill uses)',
    );
  const concurrency = Number(values.window ?? values.concurrency);
  const home = mkdtempSync(join(tmpdir(), 'callpipe-bench-backfill-'));
  const log = (line: string) => console.error(`[bench] ${line}`);
  const config = isolatedStackConfig(home, Number(values.speed));
  const stack = await startStack({ config, ports: 'auto', log });
  const pc = await connectPipeline(stack.config, stack.addresses.webUiUrl);
  try {
    log(`rendering ${DISTINCT} distinct ${values.seconds} s calls and uploading ${count} recordings…`);
    const body = await uniqueRecordings({ distinct: DISTINCT, seconds: Number(values.seconds), dir: home });
    const prefix = `recordings/bench/`;
    await uploadRecordings(pc.store, body, count, prefix);

    const request = {
      batchId: `bench-${count}`,
      source: { kind: 'prefix' as const, bucket: pc.store.bucket, prefix },
      output: outputLocation(undefined, pc.config),
      concurrency,
      childrenPerRun: Number(values['children-per-run']),
      pageSize: Number(values['page-size']),
    };
    log(
      `backfill of ${count} recordings: concurrency ${request.concurrency}, ${request.childrenPerRun} children per run…`,
    );
    const t0 = Date.now();
    const first = await startBackfill(pc, request);
    const timer = setInterval(() => {
      first.handle
        .query(backfillProgressQuery)
        .then((p) => log(progressLine(p)))
        .catch(() => undefined);
    }, 10_000);
    const result = await first.handle.result().finally(() => clearInterval(timer));
    const wallSeconds = (Date.now() - t0) / 1000;

    // Every run of the chain, as visibility saw it: the largest history of any run.
    let runs = 0;
    let largestHistory = 0;
    for await (const w of pc.client.workflow.list({ query: `WorkflowId = '${first.workflowId}'` })) {
      runs += 1;
      largestHistory = Math.max(largestHistory, w.historyLength);
    }
    // Why calls failed, if any did (from the batch report).
    const report = JSON.parse(await pc.store.getText(result.reportJsonKey)) as {
      rows: { status: string; stage?: string; reason?: string }[];
    };
    const failures: Record<string, number> = {};
    for (const r of report.rows.filter((row) => row.status === 'failed')) {
      const why = `${r.stage ?? '?'}: ${(r.reason ?? '').slice(0, 160)}`;
      failures[why] = (failures[why] ?? 0) + 1;
    }
    const children = (
      await pc.client.workflow.count(
        `WorkflowType = '${processRecording.name}' AND CallpipeBatchId = "${request.batchId}"`,
      )
    ).count;

    log('the same backfill again (every call should be skipped)…');
    const startsBefore = streamStarts(stack.addresses.requestLog);
    const t1 = Date.now();
    const again = await startBackfill(pc, request);
    const second = await again.handle.result();
    const secondSeconds = (Date.now() - t1) / 1000;
    const newStarts = streamStarts(stack.addresses.requestLog) - startsBefore;

    const summary = {
      count,
      recordingSeconds: Number(values.seconds),
      concurrency: request.concurrency,
      childrenPerRun: request.childrenPerRun,
      emulatorSpeed: Number(values.speed),
      first: {
        status: result.status,
        done: result.done,
        partial: result.partial,
        failed: result.failed,
        wallSeconds,
        callsPerSecond: Math.round(((result.done + result.partial) / wallSeconds) * 100) / 100,
        runs,
        largestHistoryEvents: largestHistory,
        largestHistoryEventsSeenByWorkflow: result.maxHistoryEvents,
        processRecordingWorkflows: children,
        // A partial call (a text step failed) was processed once too: its result.json is written.
        exactlyOnce: children === count && result.done + result.partial === count,
        failures,
      },
      second: {
        status: second.status,
        skipped: second.skipped,
        started: second.started,
        wallSeconds: secondSeconds,
        recognitionsStarted: newStarts,
      },
    };
    console.log(JSON.stringify(summary, null, 2));
    if (!summary.first.exactlyOnce || second.skipped !== count || newStarts !== 0) process.exitCode = 1;
  } finally {
    await pc.close();
    await stack.stop();
    if (!values.keep) rmSync(home, { recursive: true, force: true });
  }
}

run().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
