/**
 * The one classifier of errors into the retry table's failure types (schemas/retry-table.ts): the
 * activity boundary (failure-boundary.ts) and the text steps call {@link classifyFailure} for every error
 * an activity did not type itself; failure.ts builds the `ApplicationFailure` from the type.
 */
import { ApplicationFailure } from '@temporalio/common';
import { isServiceError, type ServiceErrorKind } from '../service/index.ts';
import { FAILURE, isFailureType, type FailureType } from '../schemas/retry-table.ts';
import { DEFAULTS } from '../schemas/config.ts';
import { stackHomeOf } from '../schemas/process-settings.ts';
import { statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import {
  describeS3ClockSkew,
  describeS3Refusal,
  isPermanentS3Error,
  s3ClockSkewMs,
  s3CodeOf,
  s3StatusOf,
} from './storage/s3-errors.ts';

/** The failure type of each class of service error (service/errors.ts says what raises each). */
export const SERVICE_FAILURES: Readonly<Record<ServiceErrorKind, FailureType>> = {
  rateLimited: FAILURE.ServiceRateLimited,
  quota: FAILURE.ServiceQuotaExhausted,
  auth: FAILURE.ServiceAuthFailed,
  invalid: FAILURE.ServiceInvalidRequest,
  session: FAILURE.ServiceUnavailable,
  noResource: FAILURE.ServiceNoResource,
  transient: FAILURE.ServiceUnavailable,
};

/** Object storage errors carry `$metadata` (the AWS SDK's response facts). */
function isStorageError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && '$metadata' in err;
}

/**
 * The table's type of `err`, or undefined when it is not one we know (Temporal retries those under the
 * activity's policy). A failure already typed keeps its type.
 */
export function classifyFailure(err: unknown): FailureType | undefined {
  if (err instanceof ApplicationFailure) return isFailureType(err.type) ? err.type : undefined;
  if (isServiceError(err)) return SERVICE_FAILURES[err.kind];
  if (isStorageError(err)) {
    // Refused for this host's clock: the SDK signs its next requests on S3's clock, so another attempt can pass.
    if (s3ClockSkewMs(err) !== undefined) return FAILURE.StorageUnavailable;
    return isPermanentS3Error(err) ? FAILURE.StorageRefused : FAILURE.StorageUnavailable;
  }
  if (err instanceof Error) {
    if (err.name === 'ZodError') return FAILURE.InvalidStepInput;
    if (isFailureType(err.name)) return err.name;
  }
  return undefined;
}

/** Below this, a filesystem is full for our purposes: no recording or staged part fits. */
const FULL_BELOW_BYTES = 16 * 1024 * 1024;

/** Bytes free to us on the filesystem holding `dir`, or undefined when it cannot be read. */
function bytesFree(dir: string): number | undefined {
  try {
    const fs = statfsSync(dir);
    return fs.bavail * fs.bsize;
  } catch {
    return undefined;
  }
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB free`;

/**
 * The folders where a worker writes (CALLPIPE_HOME, where the local stack's S3 server keeps its data too,
 * and the temp folder of media work) that are full now, with what is free on each.
 */
function fullFolders(free: (dir: string) => number | undefined): string[] {
  const dirs = [...new Set([resolve(stackHomeOf() ?? DEFAULTS.stack.home), tmpdir()])];
  return dirs.flatMap((dir) => {
    const bytes = free(dir);
    return bytes !== undefined && bytes < FULL_BELOW_BYTES ? [`${dir} (${megabytes(bytes)})`] : [];
  });
}

/**
 * A reason a user can act on, for errors whose own message does not give one (undefined: the error's
 * message is the reason): this host's clock off from S3's, no space left on a disk (ours, or the S3
 * server's answering InternalError), a HEAD refused with no body. The failure boundary reports it
 * instead of the error's message; the error stays the failure's cause.
 */
export function actionableReason(
  err: unknown,
  free: (dir: string) => number | undefined = bytesFree,
): string | undefined {
  const e = err as {
    code?: unknown;
    path?: unknown;
    syscall?: unknown;
    stderrTail?: unknown;
    message?: unknown;
  };
  if (e?.code === 'ENOSPC') {
    const where = typeof e.path === 'string' ? e.path : undefined;
    const full = fullFolders(free);
    return (
      `no space left on ${where ? `the disk holding ${where}` : full.length ? full.join(', ') : 'a local disk'}` +
      `${where && full.length ? ` (full: ${full.join(', ')})` : ''} during ${String(e.syscall ?? 'a write')}: ` +
      "free space there (CALLPIPE_HOME and the temp folder hold the worker's files) and run the call again"
    );
  }
  if (
    err instanceof Error &&
    err.name === 'FfmpegError' &&
    /No space left on device/i.test(String(e.stderrTail ?? err.message))
  ) {
    const full = fullFolders(free);
    return `no space left on ${full.length ? full.join(', ') : 'the disk ffmpeg writes to (the temp folder)'}: ffmpeg could not write its output; free space there and run the call again`;
  }
  if (!isStorageError(err)) return undefined;
  const skew = describeS3ClockSkew(err);
  if (skew) return skew;
  const status = s3StatusOf(err);
  const code = s3CodeOf(err);
  if (code === 'InternalError' || status === 507) {
    const full = fullFolders(free);
    return full.length
      ? `no space left on ${full.join(', ')}: S3 answered ${code ?? status} (HTTP ${status}), unable to store there; free space and run the call again`
      : `S3 answered ${code ?? status} (HTTP ${status}): the S3 server failed to complete the request; a full disk where it keeps its data is the usual cause (the local stack's: CALLPIPE_HOME/s3; its log: CALLPIPE_HOME/logs/s3.log)`;
  }
  // A worker's credentials refused: the same words the command gives (no endpoint: a worker's is configured).
  const refusal = describeS3Refusal(err);
  if (refusal) return refusal;
  if (code === undefined && status !== undefined)
    return `S3 answered HTTP ${status} with no reason (the answer to a HEAD request has no body)`;
  return undefined;
}
