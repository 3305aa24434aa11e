/**
 * Runs a set of recordings through the real pipeline (one processRecording per recording, as
 * `callpipe process` starts them) and collects what the benchmarks measure: the wall time from the
 * first start to the last result, each call's result document, and its activities' intervals.
 */
import type { PipelineClient } from '../../cli/stack-client.ts';
import { submitRecording, type Submitted } from '../../cli/submit.ts';
import type { RecordingSource } from '../../schemas/recording.ts';
import type { ResultDocument } from '../../schemas/result.ts';
import type { CallSpecOverrides } from '../../schemas/call-spec.ts';
import type { ProcessRecordingResult } from '../../workflows/process-recording.ts';
import { activityIntervals, type Interval } from './activity-intervals.ts';

interface CallRun {
  name: string;
  submitted: Submitted;
  result: ProcessRecordingResult;
  doc?: ResultDocument;
  activities: Interval[];
}

export interface RunCallsOptions {
  /** Output prefix of this run (a fresh one per run: results of one run never satisfy another). */
  prefix: string;
  batchId: string;
  extra?: CallSpecOverrides;
  /** Called once every call is started, while they run (fault drills act here). */
  during?: (submitted: Submitted[]) => Promise<void>;
}

export interface CallsRun {
  wallSeconds: number;
  t0: number;
  calls: CallRun[];
}

export async function runCalls(
  pc: PipelineClient,
  sources: { name: string; source: RecordingSource }[],
  options: RunCallsOptions,
): Promise<CallsRun> {
  const output = { bucket: pc.config.s3.bucket, prefix: options.prefix };
  const t0 = Date.now();
  const submitted: Submitted[] = [];
  for (const { source } of sources) {
    // redo: each run is a new version of the work (its own workflow ids), whatever ran before.
    submitted.push(
      await submitRecording(pc, source, {
        output,
        redo: true,
        batchId: options.batchId,
        extra: options.extra,
      }),
    );
  }
  const during = options.during?.(submitted);
  const results = await Promise.all(
    submitted.map((s) => s.handle.result() as Promise<ProcessRecordingResult>),
  );
  const wallSeconds = (Date.now() - t0) / 1000;
  await during;
  const calls: CallRun[] = [];
  for (const [i, s] of submitted.entries()) {
    const result = results[i]!;
    const doc = result.resultKey
      ? (JSON.parse(await pc.store.getText(result.resultKey)) as ResultDocument)
      : undefined;
    calls.push({
      name: sources[i]!.name,
      submitted: s,
      result,
      doc,
      activities: await activityIntervals(s.handle),
    });
  }
  return { wallSeconds, t0, calls };
}
