/** What S3's failures mean to callpipe: absent, permanent, or worth retrying. */
import { NoSuchKey, NotFound } from '@aws-sdk/client-s3';

export function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return (
    err instanceof NotFound ||
    err instanceof NoSuchKey ||
    e?.name === 'NotFound' ||
    e?.name === 'NoSuchKey' ||
    e?.$metadata?.httpStatusCode === 404
  );
}

/** HTTP status of a failed S3 request, when the store answered at all. */
export function s3StatusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

/**
 * The store answered that this request cannot succeed as made (a 4xx other than timeout and
 * throttling): no such object, a key it refuses to hold (SeaweedFS answers 400 to `../` segments),
 * access denied. Retrying in seconds will not help; the caller should fail or report it.
 */
export function isPermanentS3Error(err: unknown): boolean {
  const status = s3StatusOf(err);
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
}
