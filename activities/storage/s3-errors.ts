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

/** S3's error code, when its answer had a body to carry one (a HEAD answer has none: `Unknown`). */
export function s3CodeOf(err: unknown): string | undefined {
  const e = err as { Code?: string; name?: string } | undefined;
  const code = e?.Code ?? e?.name;
  return code && code !== 'Unknown' && code !== 'UnknownError' ? code : undefined;
}

/** S3 accepts a request signed within 15 minutes of its own clock; the SDK corrects beyond 5. */
const CLOCK_SKEW_LIMIT_MS = 5 * 60_000;

/**
 * How far this host's clock is ahead of S3's (negative: behind), when S3 refused a request for its time
 * (RequestTimeTooSkewed, or a 403 without a body whose `Date` is that far off): from the answer's `Date`
 * header. The SDK takes the same offset for its next requests, so trying again can succeed.
 */
export function s3ClockSkewMs(err: unknown, now = Date.now()): number | undefined {
  const e = err as { $response?: { headers?: Record<string, string> }; ServerTime?: string } | undefined;
  const date = Date.parse(e?.ServerTime ?? e?.$response?.headers?.date ?? '');
  const code = s3CodeOf(err);
  const timeRefused =
    code === 'RequestTimeTooSkewed' ||
    (s3StatusOf(err) === 403 && (code === undefined || code === 'Forbidden'));
  if (!timeRefused || Number.isNaN(date)) return undefined;
  const skew = now - date;
  return Math.abs(skew) >= CLOCK_SKEW_LIMIT_MS || code === 'RequestTimeTooSkewed' ? skew : undefined;
}

/** A clock skew in words: `1 d 02 h`, `3 h 05 min`, `7 min`. */
function spanWords(ms: number): string {
  const min = Math.round(Math.abs(ms) / 60_000);
  if (min < 60) return `${min} min`;
  if (min < 24 * 60) return `${Math.floor(min / 60)} h ${String(min % 60).padStart(2, '0')} min`;
  return `${Math.floor(min / 1440)} d ${String(Math.floor((min % 1440) / 60)).padStart(2, '0')} h`;
}

/** What a refusal for the request's time means, for a person; undefined when S3 refused something else. */
export function describeS3ClockSkew(err: unknown, now = Date.now()): string | undefined {
  const skew = s3ClockSkewMs(err, now);
  if (skew === undefined) return undefined;
  return (
    `S3 refused the request's time: this host's clock is ${spanWords(skew)} ${skew >= 0 ? 'ahead of' : 'behind'} ` +
    "S3's (S3 accepts 15 minutes): fix the host's time (NTP, `timedatectl`)"
  );
}

/** The codes that refuse the credentials themselves, and what each means to the user. */
const CREDENTIAL_REFUSALS: Readonly<Record<string, string>> = {
  InvalidAccessKeyId: 'does not know the access key id',
  SignatureDoesNotMatch:
    "refused the request's signature: the secret access key does not belong to the access key id",
  InvalidToken: 'refused the session token',
  ExpiredToken: 'refused the session token: it has expired',
};

/** S3 refused the credentials (an unknown key id, a wrong secret, a bad token), not one request. */
export function isS3CredentialsRefusal(err: unknown): boolean {
  const code = s3CodeOf(err);
  return code !== undefined && code in CREDENTIAL_REFUSALS;
}

/**
 * What a refusal by S3 at `endpoint` means, for a person: the credentials refused (which part), or access
 * denied; undefined for anything else. Never the secret: the message names the settings to check.
 */
export function describeS3Refusal(err: unknown, endpoint?: string): string | undefined {
  const code = s3CodeOf(err);
  const s3 = endpoint ? `S3 at ${endpoint}` : 'S3';
  const settings = 'check CALLPIPE_S3_ACCESS_KEY_ID and CALLPIPE_S3_SECRET_ACCESS_KEY (or the AWS profile)';
  const skew = describeS3ClockSkew(err);
  if (skew) return skew.replace('S3 ', `${s3} `);
  if (code && code in CREDENTIAL_REFUSALS) return `${s3} ${CREDENTIAL_REFUSALS[code]} (${code}): ${settings}`;
  if (code === 'AccessDenied')
    return `${s3} denied access (AccessDenied): the credentials are valid but may not do this`;
  if (s3StatusOf(err) === 403)
    return `${s3} refused the request (HTTP 403, no reason given): the access key id or secret access key is wrong, or they may not do this; ${settings}`;
  return undefined;
}
