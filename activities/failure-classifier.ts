/**
 * The one classifier of errors into the retry table's failure types (schemas/retry-table.ts): the
 * activity boundary (failure-boundary.ts) and the text steps call {@link classifyFailure} for every error
 * an activity did not type itself; failure.ts builds the `ApplicationFailure` from the type.
 */
import { ApplicationFailure } from '@temporalio/common';
import { isServiceError, type ServiceErrorKind } from '../service/index.ts';
import { FAILURE, isFailureType, type FailureType } from '../schemas/retry-table.ts';
import { isPermanentS3Error } from './storage/s3-errors.ts';

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
  if (isStorageError(err))
    return isPermanentS3Error(err) ? FAILURE.StorageRefused : FAILURE.StorageUnavailable;
  if (err instanceof Error) {
    if (err.name === 'ZodError') return FAILURE.InvalidStepInput;
    if (isFailureType(err.name)) return err.name;
  }
  return undefined;
}
