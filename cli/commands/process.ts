/** `callpipe process`: uploads/locates recordings, starts one workflow each, waits with progress (unless --detach). */
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { CliError, parseCommandArgs, warnDeprecated } from '../command.ts';
import { connectPipeline } from '../stack-client.ts';
import {
  checkInputs,
  expandInputs,
  locateSource,
  outputLocation,
  submitRecording,
  type Submitted,
} from '../submit.ts';
import { workflowFailureReason } from '../error-message.ts';
import { callFileHelp, storeCallFiles } from '../call-files.ts';
import { RECOGNITION_OPTION, recognitionFlag, recognitionHelp } from '../recognition-flag.ts';
import type { ObjectStore } from '../../activities/storage/object-store.ts';
import { callOutputKeys, locationUrl, parseS3Url } from '../../schemas/call-keys.ts';
import type { OutputLocation, RecordingSource } from '../../schemas/recording.ts';
import {
  progressQuery,
  type ProcessRecordingProgress,
  type ProcessRecordingResult,
} from '../../workflows/process-recording.ts';
import { textTable } from '../text-table.ts';

export const summary = 'processes recordings (local files, directories or s3://bucket/key)';
export const help = `Usage: callpipe process <file | dir | s3://bucket/key>… [--out <dir | s3://bucket/prefix>] [--rules file] [--dictionary file] [--detach] [--json] [--redo] [--recognition stream|file|auto]

A directory stands for the recordings in it (recursively): files whose extension names a recording
format (WAV, MP3, M4A, AMR, 3GP, Opus, FLAC…, and headerless .ulaw, .alaw, .g722, .gsm, .sln…) and any
other file whose content is audio; every other file is listed as skipped, with why.
Uploads local files to the input prefix, starts one processRecording workflow per recording (the same
recording twice is one workflow), waits for the calls with a progress line per call and prints a table
of their outcomes: done, partial (results written, a text step failed: which one is shown), failed
(the stage and the reason; error.json is written) or skipped (result.json already there).

Every input is checked before anything is uploaded or started (it exists, is readable, is not empty;
a local one is the file itself, not a symbolic link, and its content is audio, not text or a document):
if any is not, each bad one is printed with its cause and no call is started. What the command
uploaded for a call that then failed is removed again (not with --detach).

  --out <dir|s3://…>  where results go (default: s3://<bucket>/<output prefix>); a local directory gets
                      a copy of each call's result.json / transcript.vtt / error.json
  --detach            start the calls, print their workflow ids and return without waiting
                      (follow them with \`callpipe status\`); not with --out <dir>
  --json              machine-readable output (one JSON document)
  --redo              process calls again even when done
${callFileHelp(22)}
${recognitionHelp(22)}
  --wait              deprecated: waiting is the default
Exit code: 0 when every call is done, partial or skipped (or, with --detach, was started); 1 when any
failed.`;

export interface CallOutcome extends ProcessRecordingResult {
  workflowId: string;
  source: string;
}

const BAR_WIDTH = 20;

function bar(fraction: number): string {
  const filled = Math.round(Math.max(0, Math.min(1, fraction)) * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`;
}

function progressLine(s: Submitted, p: ProcessRecordingProgress | undefined): string {
  if (!p) return `${s.callId.padEnd(40)} starting…`;
  const fraction = p.sessionsTotal
    ? (p.sessionsTranscoded + p.sessionsRecognized) / (2 * p.sessionsTotal)
    : 0;
  return `${s.callId.padEnd(40)} ${bar(fraction)} ${p.stage.padEnd(9)} sessions ${p.sessionsRecognized}/${p.sessionsTotal}`;
}

/** Waits for every call, redrawing one progress line per call on a TTY (plain lines otherwise). */
export async function waitWithProgress(calls: Submitted[], quiet: boolean): Promise<CallOutcome[]> {
  const tty = process.stderr.isTTY && !quiet;
  const lastStage = new Map<string, string>();
  let drawn = 0;
  let finished = 0;
  const outcomes = calls.map((c) =>
    c.handle
      .result()
      // The workflow itself failed (e.g. nothing writable, not even error.json) or was cancelled or
      // terminated: the call failed, and the others are still waited for and shown.
      .catch((err: unknown): ProcessRecordingResult => ({
        callId: c.callId,
        status: 'failed',
        reason: failureReason(err),
      }))
      .then((r) => {
        finished += 1;
        return { ...r, workflowId: c.workflowId, source: `s3://${c.source.bucket}/${c.source.key}` };
      }),
  );
  const all = Promise.all(outcomes);
  while (finished < calls.length) {
    const progress = await Promise.all(
      calls.map((c) => c.handle.query(progressQuery).catch(() => undefined)),
    );
    const lines = calls.map((c, i) => progressLine(c, progress[i]));
    if (tty) {
      if (drawn) process.stderr.write(`\x1b[${drawn}A`);
      for (const line of lines) process.stderr.write(`\x1b[2K${line}\n`);
      drawn = lines.length;
    } else if (!quiet) {
      // Without a terminal to redraw, a call gets a line when its stage changes.
      calls.forEach((c, i) => {
        const stage = progress[i]?.stage ?? 'starting';
        if (lastStage.get(c.callId) !== stage) process.stderr.write(`${lines[i]}\n`);
        lastStage.set(c.callId, stage);
      });
    }
    await Promise.race([all, new Promise((r) => setTimeout(r, 1000))]);
  }
  return all;
}

/** The reason of a call whose workflow failed, was cancelled or terminated (cli/error-message.ts). */
function failureReason(err: unknown): string {
  const reason = workflowFailureReason(err);
  return reason === 'cancelled' || reason.startsWith('terminated') ? `call ${reason}` : reason;
}

/** What a call's table row says beside its status: the result, and for a partial call the failed steps. */
export function outcomeDetail(o: ProcessRecordingResult): string {
  switch (o.status) {
    case 'failed':
      return [o.stage, o.reason].filter(Boolean).join(': ');
    case 'partial': {
      const steps = (o.stepFailures ?? []).map((f) => f.step).join(', ');
      return `${o.resultKey ?? ''} (${steps || 'a text step'} failed)`.trim();
    }
    default:
      return o.resultKey ?? '';
  }
}

/** One line counting the calls by outcome, e.g. `3 calls: 1 done, 1 partial, 1 failed`. */
export function outcomeTally(outcomes: Pick<ProcessRecordingResult, 'status'>[]): string {
  const counts = (['done', 'partial', 'failed', 'skipped'] as const)
    .map((status) => [status, outcomes.filter((o) => o.status === status).length] as const)
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${n} ${status}`);
  return `${outcomes.length} call${outcomes.length === 1 ? '' : 's'}: ${counts.join(', ')}`;
}

/** Exit code of waiting for calls: 1 only when a call failed (partial and skipped calls are not failures). */
export function outcomeExitCode(outcomes: Pick<ProcessRecordingResult, 'status'>[]): number {
  return outcomes.some((o) => o.status === 'failed') ? 1 : 0;
}

export function outcomeTable(outcomes: CallOutcome[]): string {
  const rows = outcomes.map((o) => [
    o.callId,
    o.status,
    o.durationSeconds !== undefined ? `${o.durationSeconds.toFixed(1)} s` : '',
    o.sessions !== undefined ? String(o.sessions) : '',
    o.utterances !== undefined ? String(o.utterances) : '',
    outcomeDetail(o),
  ]);
  return textTable([['call', 'status', 'audio', 'sessions', 'utterances', 'result / reason'], ...rows]);
}

/** Copies each call's outputs from the output location into `<dir>/<callId>/` (`--out <dir>`). */
export async function copyResults(
  objects: Pick<ObjectStore, 'withBucket'>,
  output: OutputLocation,
  outcomes: Pick<CallOutcome, 'callId'>[],
  dir: string,
): Promise<void> {
  const store = objects.withBucket(output.bucket);
  for (const o of outcomes) {
    const target = join(dir, o.callId);
    await mkdir(target, { recursive: true });
    const keys = callOutputKeys(output, o.callId);
    // Never the unredacted copy: it stays in the location configured for it.
    for (const key of [
      keys.result,
      keys.transcript,
      keys.error,
      ...(keys.redactedAudio ? [keys.redactedAudio] : []),
    ]) {
      const file = key.slice(keys.dir.length);
      if (await store.exists(key)) await writeFile(join(target, file), await store.getBuffer(key));
    }
  }
}

/**
 * Removes what this command uploaded for calls that failed (a file that was no recording stays in no
 * bucket); an object another call of the run still uses (the same file twice) is kept. With --detach
 * the command does not see the outcome, and the upload stays like any other input.
 */
export async function removeFailedUploads(
  store: Pick<ObjectStore, 'deleteKeys'>,
  submitted: Pick<Submitted, 'source'>[],
  outcomes: Pick<CallOutcome, 'status'>[],
  uploads: ReadonlySet<string>,
): Promise<string[]> {
  const kept = new Set(submitted.filter((_, i) => outcomes[i]?.status !== 'failed').map((s) => s.source.key));
  const failed = submitted.filter((s, i) => outcomes[i]?.status === 'failed' && uploads.has(s.source.key));
  const keys = [...new Set(failed.map((s) => s.source.key))].filter((k) => !kept.has(k));
  if (keys.length > 0) await store.deleteKeys(keys);
  return keys;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('process', argv, {
    out: { type: 'string' },
    detach: { type: 'boolean', default: false },
    wait: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    redo: { type: 'boolean', default: false },
    rules: { type: 'string' },
    dictionary: { type: 'string' },
    ...RECOGNITION_OPTION,
  });
  const recognition = recognitionFlag('process', values.recognition);
  if (positionals.length === 0) throw new CliError('process: give at least one file or s3://bucket/key');
  if (values.wait && values.detach) throw new CliError('process: --wait and --detach contradict each other');
  if (values.wait) warnDeprecated('process', '--wait', 'waiting is the default (--detach to return at once)');
  const localOut = values.out && !parseS3Url(values.out) ? resolve(values.out) : undefined;
  if (localOut && values.detach)
    throw new CliError('process: --out <dir> copies the results once the calls finish: not with --detach');

  const pc = await connectPipeline();
  try {
    const output = outputLocation(localOut ? undefined : values.out, pc.config);
    const files = await storeCallFiles(pc.store, pc.config, {
      rules: values.rules,
      dictionary: values.dictionary,
    });
    const submitted: Submitted[] = [];
    const { inputs, skipped } = await expandInputs(positionals);
    for (const s of skipped) process.stderr.write(`skipped ${s.path}: ${s.reason}\n`);
    if (inputs.length === 0) throw new CliError('process: no recording to process', 1);
    // All or nothing: every input checked, then every local one uploaded, before any call starts.
    const problems = await checkInputs(inputs, pc.store);
    if (problems.length > 0) {
      for (const p of problems) process.stderr.write(`process: ${p.input}: ${p.problem}\n`);
      throw new CliError(
        `process: ${problems.length} of ${inputs.length} input${inputs.length === 1 ? '' : 's'} cannot be processed (listed above); nothing was started`,
        1,
      );
    }
    const sources: RecordingSource[] = [];
    /** Objects this command put in the input prefix: removed again when their call fails. */
    const uploads = new Set<string>();
    for (const input of inputs) {
      const located = await locateSource(input, pc.store, pc.config);
      sources.push(located.source);
      if (located.uploaded) uploads.add(located.source.key);
    }
    for (const source of sources)
      submitted.push(await submitRecording(pc, source, { output, redo: values.redo, files, recognition }));
    if (values.detach) {
      if (values.json) {
        console.log(
          JSON.stringify(
            submitted.map((s) => ({ callId: s.callId, workflowId: s.workflowId, source: s.source })),
          ),
        );
      } else {
        for (const s of submitted) console.log(`${s.callId}  started  ${s.workflowId}`);
        if (pc.webUiUrl)
          console.log(`Web UI: ${pc.webUiUrl}/namespaces/${pc.config.temporal.namespace}/workflows`);
      }
      return 0;
    }
    const outcomes = await waitWithProgress(submitted, values.json);
    await removeFailedUploads(pc.store, submitted, outcomes, uploads).catch((err: unknown) =>
      process.stderr.write(
        `process: could not remove the uploads of failed calls (${(err as Error).message}); they stay in the input prefix\n`,
      ),
    );
    if (localOut) await copyResults(pc.store, output, outcomes, localOut);
    if (values.json) console.log(JSON.stringify(outcomes, null, 2));
    else {
      console.log(outcomeTable(outcomes));
      console.log(outcomeTally(outcomes));
      console.log(`results: ${localOut ?? `${locationUrl(output)}`}`);
    }
    return outcomeExitCode(outcomes);
  } finally {
    await pc.close();
  }
}
