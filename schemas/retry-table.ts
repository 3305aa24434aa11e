/**
 * The retry table: every failure type an activity reports, whether trying again can help, and how long
 * to wait first (issue 12). Activities turn their errors into these types at their boundary
 * (activities/failure-boundary.ts), so a retry decision is made here, from the failure's class, and
 * nowhere else. The workflows' activity policies (maximum attempts per activity) sit beside their
 * proxies, and the README multiplies the two out into the worst case per dependency.
 *
 * One loop per failure: no activity retries a request of its own that Temporal would retry again
 * (text steps keep their progress in a checkpoint instead); the only in-activity loops are a recognition
 * session's restarts, whose budget is staged with its partial results so it holds across attempts, and
 * the write of a finished session's result, which gives up non-retryably (see `SessionResultUnwritten`).
 *
 * Pure data with no imports: workflow code reads it too.
 */

export interface RetryRule {
  /** Whether another attempt of the same activity could succeed. */
  retryable: boolean;
  /**
   * Delay before the next attempt, when the activity sets it (`nextRetryDelay`): exponential from
   * `baseMs` to `maxMs` with full jitter, or a fixed wait. Absent: the workflow policy's backoff.
   */
  delay?: { baseMs: number; maxMs: number } | { fixedMs: number };
  /** What raises it, for the README and for readers of the Web UI. */
  cause: string;
}

export const RETRY_TABLE = {
  ServiceRateLimited: {
    retryable: true,
    delay: { baseMs: 1000, maxMs: 60_000 },
    cause:
      'the service blocked a burst (99997, HTTP 429) and the call could not wait it out in the activity ' +
      '(text steps do, within their budget); a Retry-After is a lower bound',
  },
  ServiceUnavailable: {
    retryable: true,
    cause: 'the service answered 5xx, timed out or could not be reached',
  },
  ServiceQuotaExhausted: {
    retryable: true,
    delay: { fixedMs: 15 * 60_000 },
    cause: "the account's usage limit is used up (99995, 99996): resets within hours",
  },
  ServiceNoResource: {
    retryable: true,
    delay: { baseMs: 2000, maxMs: 60_000 },
    cause:
      "550 No Resource: the account's concurrent recognition sessions are all open (another client of the " +
      'account, or asr workers beyond CALLPIPE_ASR_ACCOUNT_SESSIONS), or the service does not know the domain ' +
      'id; a session waits for it inside its attempt (spending no restart) and fails with this only when ' +
      'its attempt runs out of time',
  },
  ServiceAuthFailed: {
    retryable: false,
    cause: 'credentials refused even after a fresh token (99998, HTTP 401): people must fix them',
  },
  ServiceInvalidRequest: {
    retryable: false,
    cause: 'the service refused the request as invalid: the same request fails again',
  },
  RecognitionRestartsExhausted: {
    retryable: false,
    cause: "a session's restart budget is used up (the budget holds across attempts)",
  },
  RecognitionFailed: {
    retryable: true,
    cause: 'a recognition stream failed in a way a new session cannot help within this attempt',
  },
  SessionResultUnwritten: {
    retryable: false,
    cause:
      "a finished session's result could not be written for its whole write budget (object storage down)",
  },
  MediaError: {
    retryable: false,
    cause: 'the recording cannot be read or is not audio callpipe can process',
  },
  SourceUnreadable: {
    retryable: false,
    cause: 'the recording object is gone or object storage refuses its key',
  },
  FfmpegError: {
    retryable: true,
    cause: 'ffmpeg crashed or was killed (memory, restart): the machine, not the recording',
  },
  MediaLengthError: {
    retryable: true,
    cause: 'a transcode wrote the wrong number of bytes (a killed process, a truncated upload)',
  },
  MediaCancelledError: {
    retryable: false,
    cause: 'ffmpeg was stopped because the activity was cancelled (the call was cancelled or timed out)',
  },
  MediaToolMissingError: {
    retryable: true,
    cause: 'ffmpeg or ffprobe is missing on this worker: another worker may have it',
  },
  StorageUnavailable: {
    retryable: true,
    cause: 'object storage failed (5xx, throttling) or could not be reached',
  },
  StorageRefused: {
    retryable: false,
    cause: 'object storage refused the request as made (4xx: access denied, a key it will not hold)',
  },
  TablesBusy: {
    retryable: true,
    delay: { baseMs: 5000, maxMs: 60_000 },
    cause:
      "another write or compaction held a day's table partitions longer than a call waits (or took over an expired lease)",
  },
  InvalidStepInput: {
    retryable: false,
    cause: 'a staged document is not what the step expects: a bug upstream',
  },
  InvalidResultDocument: {
    retryable: false,
    cause: 'the assembled result.json fails its schema: a bug upstream',
  },
  KeyError: {
    retryable: false,
    cause: 'a call id or prefix would leave its folder',
  },
  ManifestError: {
    retryable: false,
    cause: 'a backfill manifest cannot be parsed',
  },
} as const satisfies Record<string, RetryRule>;

export type FailureType = keyof typeof RETRY_TABLE;

/** Typed names, so no type is ever spelled or built at run time elsewhere. */
export const FAILURE: { [K in FailureType]: K } = Object.fromEntries(
  Object.keys(RETRY_TABLE).map((k) => [k, k]),
) as { [K in FailureType]: K };

/** Types Temporal must never retry: listed on every activity policy, a second line of defence. */
export const NON_RETRYABLE_TYPES: FailureType[] = (Object.keys(RETRY_TABLE) as FailureType[]).filter(
  (k) => !RETRY_TABLE[k].retryable,
);

export function isFailureType(type: string | undefined | null): type is FailureType {
  return !!type && Object.hasOwn(RETRY_TABLE, type);
}

/**
 * `nextRetryDelay` in ms for a failure of `type` after attempt `attempt` (1-based), or undefined to
 * leave the wait to the workflow policy. `random` in [0, 1) draws the jitter; `hintMs` (the service's
 * Retry-After) is a lower bound. Never 0: full jitter can draw 0, and 0 retries at once.
 */
export function retryDelayMs(
  type: FailureType,
  attempt: number,
  random: () => number,
  hintMs?: number,
): number | undefined {
  const rule: RetryRule = RETRY_TABLE[type];
  if (!rule.retryable || !rule.delay) return undefined;
  if ('fixedMs' in rule.delay) return Math.max(rule.delay.fixedMs, hintMs ?? 0);
  const ceiling = Math.min(rule.delay.maxMs, rule.delay.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.max(MIN_RETRY_DELAY_MS, Math.floor(random() * ceiling), hintMs ?? 0);
}

const MIN_RETRY_DELAY_MS = 200;
