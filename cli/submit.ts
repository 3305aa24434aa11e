/**
 * Submitting recordings: local files are uploaded to the input prefix (content-addressed, so the same
 * file is the same object), S3 sources are looked up, and one processRecording workflow is started per
 * recording version (the same version twice is one workflow: USE_EXISTING on a running one).
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import pLimit from 'p-limit';
import { basename, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy, type WorkflowHandle } from '@temporalio/client';
import { taskQueues, type Config } from '../schemas/config.ts';
import {
  callSpecOf,
  withOverrides,
  type CallSpec,
  type CallSpecFiles,
  type CallSpecOverrides,
} from '../schemas/call-spec.ts';
import type { OutputLocation, RecordingSource } from '../schemas/recording.ts';
import type { ObjectInfo, ObjectStore } from '../activities/storage/object-store.ts';
import {
  isPermanentS3Error,
  isS3CredentialsRefusal,
  s3CodeOf,
  s3StatusOf,
} from '../activities/storage/s3-errors.ts';
import { outputLocationOf, parseS3Url, uploadKey } from '../schemas/call-keys.ts';
import { callIdOf, callIdRuleOf, workflowIdOf } from '../activities/storage/call-id.ts';
import type { PipelineClient } from './stack-client.ts';
import { CliError } from './command.ts';
import type { RecognitionMode } from '../schemas/recognition.ts';
import { notARecording, readHead } from '../activities/media/sniff.ts';
import { extensionOf, RECORDING_EXTENSIONS } from '../schemas/media-formats.ts';
import { processRecording, type ProcessRecordingInput } from '../workflows/process-recording.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../workflows/search-attribute-keys.ts';
import { visibleControls } from '../schemas/display-text.ts';
import { localRecordingProblem, symlinkProblem } from './local-recording.ts';

/** A file a directory argument held that is not a recording, and why. */
export interface SkippedFile {
  path: string;
  reason: string;
}

/**
 * The inputs of `callpipe process`: each argument as it is, except a local directory, which stands for
 * the recordings in it (recursively, in name order): a file is taken by its extension when that names a
 * recording format (schemas/media-formats.ts), otherwise by its content (activities/media/sniff.ts), and
 * everything else is returned as skipped, with why. A file named on its own is always taken: if it is
 * no recording, its call fails at the probe with the reason.
 */
export async function expandInputs(inputs: string[]): Promise<{ inputs: string[]; skipped: SkippedFile[] }> {
  const out: string[] = [];
  const skipped: SkippedFile[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
      a.name.localeCompare(b.name),
    );
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) await walk(path);
      else if (e.isSymbolicLink()) skipped.push({ path, reason: await symlinkProblem(path) });
      else if (!e.isFile()) continue;
      else if (RECORDING_EXTENSIONS.includes(extensionOf(e.name))) out.push(path);
      else {
        const reason = notARecording(e.name, await readHead(path));
        if (reason) skipped.push({ path, reason });
        else out.push(path);
      }
    }
  };
  for (const input of inputs) {
    if (!parseS3Url(input) && existsSync(input) && statSync(input).isDirectory()) await walk(resolve(input));
    else out.push(input);
  }
  return { inputs: out, skipped };
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** An input that cannot be processed, and why. */
export interface InputProblem {
  input: string;
  problem: string;
}

/** Inputs checked at once (a HEAD each for S3 ones). */
const CHECKS_AT_ONCE = 8;

/**
 * A HEAD refused without a reason (its answer has no body): a listing with the same credentials says
 * whether S3 refuses the credentials themselves, which is thrown; otherwise the object is not theirs to read.
 */
async function throwCredentialsRefusal(store: ObjectStore): Promise<void> {
  const probe = await store.listPage('', undefined, 1).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (probe && isS3CredentialsRefusal(probe)) throw probe;
}

/** What is wrong with one input, or undefined: a local file to read, or an object in storage. */
async function inputProblem(input: string, store: ObjectStore): Promise<string | undefined> {
  const s3 = parseS3Url(input);
  if (s3) {
    if (!s3.key) return 'names a bucket, not an object';
    try {
      const head = await store.withBucket(s3.bucket).head(s3.key);
      if (!head) return 'no such object';
      return head.size === 0 ? 'the object is empty (0 bytes)' : undefined;
    } catch (err) {
      // Wrong credentials are no input's problem: the command's error says so once (cli/error-message.ts).
      if (isS3CredentialsRefusal(err) || !isPermanentS3Error(err)) throw err;
      if (s3StatusOf(err) === 403 && !s3CodeOf(err)) await throwCredentialsRefusal(store);
      return `object storage refused to read it (HTTP ${s3StatusOf(err)}${s3CodeOf(err) ? ` ${s3CodeOf(err)}` : ''})`;
    }
  }
  return localRecordingProblem(input);
}

/**
 * Every input checked before any is uploaded or started (exists, readable, not empty; a local one the
 * file itself, not a symbolic link, and audio by its content: cli/local-recording.ts): a command given
 * one bad input among several starts none of them, and names each bad one with its cause.
 */
export async function checkInputs(inputs: string[], store: ObjectStore): Promise<InputProblem[]> {
  const limit = pLimit(CHECKS_AT_ONCE);
  const problems = await Promise.all(inputs.map((input) => limit(() => inputProblem(input, store))));
  return inputs.flatMap((input, i) => (problems[i] ? [{ input, problem: problems[i] }] : []));
}

/** Resolves a command-line input to an object in storage, uploading local files. */
export async function resolveSource(
  input: string,
  store: ObjectStore,
  config: Config,
): Promise<RecordingSource> {
  return (await locateSource(input, store, config)).source;
}

/**
 * {@link resolveSource}, saying whether this call uploaded the object (it was not in the input prefix
 * before): such an upload is this command's to remove when its call fails.
 */
export async function locateSource(
  input: string,
  store: ObjectStore,
  config: Config,
): Promise<{ source: RecordingSource; uploaded: boolean }> {
  const s3 = parseS3Url(input);
  if (s3) {
    if (!s3.key) throw new CliError(`'${input}' names a bucket, not an object`);
    const head = await store.withBucket(s3.bucket).head(s3.key);
    if (!head) throw new CliError(`no such object: ${input}`, 1);
    return {
      source: { bucket: s3.bucket, key: s3.key, etag: head.etag, size: head.size, ...lastModifiedOf(head) },
      uploaded: false,
    };
  }
  const path = resolve(input);
  // Checked again here (checkInputs ran before): a link put in the file's place since is not followed.
  const info = await lstat(path).catch(() => undefined);
  if (info?.isSymbolicLink()) throw new CliError(`${input}: ${await symlinkProblem(path)}`, 1);
  if (!info?.isFile()) throw new CliError(`no such file: ${input}`, 1);
  const digest = await sha256File(path);
  const key = uploadKey(config.s3.inputPrefix, 'local', digest, basename(path));
  let head = await store.head(key);
  const uploaded = !head;
  if (!head) {
    await store.putFile(key, path);
    head = await store.head(key);
  }
  return {
    source: {
      bucket: store.bucket,
      key,
      etag: head?.etag,
      size: head?.size ?? info.size,
      ...lastModifiedOf(head),
    },
    uploaded,
  };
}

/** The object's time as looked up, which the call's result keeps (no second lookup when it is written). */
function lastModifiedOf(head: ObjectInfo | undefined): Pick<RecordingSource, 'lastModified'> {
  return head?.lastModified ? { lastModified: head.lastModified.toISOString() } : {};
}

/** `--out`: an S3 URL, or the configured output prefix (local directories get a copy after the run). */
export function outputLocation(out: string | undefined, config: Config): OutputLocation {
  try {
    return outputLocationOf(out && parseS3Url(out) ? out : config.s3.outputPrefix, config.s3.bucket);
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
}

/**
 * The settings of calls whose results go to `output` (schemas/call-spec.ts), as every command that starts
 * calls makes them; a bad unredacted prefix is one clear line.
 */
export function callSpec(
  config: Config,
  output: OutputLocation,
  files?: CallSpecFiles,
  recognition?: RecognitionMode,
): CallSpec {
  try {
    const spec = callSpecOf(config, output, files);
    return recognition ? { ...spec, recognition } : spec;
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
}

export interface SubmitOptions {
  output: OutputLocation;
  redo?: boolean;
  batchId?: string;
  metadata?: Record<string, string>;
  /** The rule file and vocabulary the call is processed with (cli/call-files.ts). */
  files?: CallSpecFiles;
  /** Settings changed for these calls only (tests, benchmarks). */
  extra?: CallSpecOverrides;
  /** `--recognition`: the calls' mode over the configuration's. */
  recognition?: RecognitionMode | undefined;
}

export interface Submitted {
  source: RecordingSource;
  callId: string;
  workflowId: string;
  handle: WorkflowHandle<typeof processRecording>;
}

export async function submitRecording(
  pipelineClient: PipelineClient,
  source: RecordingSource,
  options: SubmitOptions,
): Promise<Submitted> {
  const { client, config } = pipelineClient;
  const callId = callIdOf(source, callIdRuleOf(config));
  // A redo is a new version of the work: its own workflow id, so it never attaches to the old run.
  const workflowId = `${workflowIdOf(source, callId)}${options.redo ? `-redo-${Date.now()}` : ''}`;
  const input: ProcessRecordingInput = {
    callId,
    source,
    output: options.output,
    redo: options.redo,
    batchId: options.batchId,
    metadata: options.metadata,
    spec: withOverrides(callSpec(config, options.output, options.files, options.recognition), options.extra),
  };
  const handle = await client.workflow.start(processRecording, {
    taskQueue: taskQueues(config).workflows,
    workflowId,
    args: [input],
    // Same recording version twice: one run. A closed run may be run again (e.g. after a failure);
    // a done call is skipped by the workflow itself.
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    typedSearchAttributes: [
      { key: SEARCH_ATTRIBUTE_KEYS.callId, value: callId },
      ...(options.batchId ? [{ key: SEARCH_ATTRIBUTE_KEYS.batchId, value: options.batchId }] : []),
    ],
    // The Web UI shows the key as stored: controls that would reorder it made visible.
    staticSummary: `call ${callId}: ${visibleControls(`s3://${source.bucket}/${source.key}`)}`,
  });
  return { source, callId, workflowId, handle };
}
