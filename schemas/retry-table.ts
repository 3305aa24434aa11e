/**
 * The retry table: every failure type an activity reports, whether trying again can help, and how long
 * to wait first. Activities turn their errors into these types through one classifier
 * (activities/failure-classifier.ts, the only code that builds an `ApplicationFailure`), so a retry
 * decision is made here, from the failure's class, and nowhere else. The workflows' activity policies
 * (maximum attempts per activity) sit beside their proxies, and docs/retries.md multiplies the two out into
 * the worst case per dependency.
 *
 * One loop per failure: no activity retries a request of its own that Temporal would retry again. The
 * few loops that try again inside an attempt, where an attempt would cost more than the failure, are
 * rows of {@link RETRY_LOOPS} below, with their budgets and waits: a text step's blocked requests, a
 * recognition session's restarts (budget staged with its partial results, so it holds across attempts),
 * the write of a finished session's result (which gives up non-retryably, `SessionResultUnwritten`), the
 * wait for a tables lease, and `withRetry` outside Temporal.
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
  /** What raises it, for docs/retries.md and for readers of the Web UI. */
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
  InvalidWorkflowInput: {
    retryable: false,
    cause: 'a workflow was started with an input it cannot read: a bug in the caller',
  },
  EventDeliveryFailed: {
    retryable: true,
    cause:
      "an event's receiver failed a delivery attempt (5xx, timeout, refused); its Retry-After is the next " +
      "wait, else the sink's backoff (the delivery's retry policy)",
  },
  EventDeliveryGaveUp: {
    retryable: false,
    cause: "an event's next attempt would wait past its delivery time (CALLPIPE_EVENTS_DELIVER_FOR_SECONDS)",
  },
  WorkerLost: {
    retryable: true,
    cause:
      'the asr worker running the attempt stopped renewing with the session budget (killed, partitioned): ' +
      'the attempt is failed at once so another worker takes the session',
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

/** A `nextRetryDelay` of 0 retries at once; full jitter can draw 0. */
const MIN_RETRY_DELAY_MS = 200;

/**
 * `nextRetryDelay` in ms for a failure of `type` after attempt `attempt` (1-based), or undefined to
 * leave the wait to the workflow policy. `random` in [0, 1) draws the jitter; `hintMs` (the service's
 * Retry-After) is a lower bound; `delay` replaces the row's (an option of a test or a deployment).
 * Never below {@link MIN_RETRY_DELAY_MS}.
 */
export function retryDelayMs(
  type: FailureType,
  attempt: number,
  random: () => number,
  hintMs?: number,
  delay: RetryRule['delay'] = (RETRY_TABLE[type] as RetryRule).delay,
): number | undefined {
  if (!RETRY_TABLE[type].retryable || !delay) return undefined;
  if ('fixedMs' in delay) return Math.max(delay.fixedMs, hintMs ?? 0);
  const jittered = backoffMs({ kind: 'fullJitter', ...delay }, attempt, random);
  return Math.max(MIN_RETRY_DELAY_MS, jittered, hintMs ?? 0);
}

/**
 * How the wait before try number n (1-based) grows:
 * - `fullJitter`: uniform in [0, min(max, base × 2^(n−1))], so callers blocked together spread out;
 * - `doubling`: min(max, base × 2^(n−1)), no jitter;
 * - `spreadDoubling`: min(max, base × 2^min(n−1, doublings)) × a factor uniform in [0.5, 1.5);
 * - `linear`: step × n.
 */
export type Backoff =
  | { kind: 'fullJitter'; baseMs: number; maxMs: number }
  | { kind: 'doubling'; baseMs: number; maxMs: number }
  | { kind: 'spreadDoubling'; baseMs: number; maxMs: number; doublings: number }
  | { kind: 'linear'; stepMs: number };

/** What a loop that tries again inside one activity attempt (or outside Temporal) may spend. */
type LoopBudget =
  /** Retries beyond one per request that was answered, over every attempt of the step. */
  | { retriesBeyondAnswered: number }
  /** Tries in all, the first included. */
  | { tries: number }
  /** Wall time from the first failure. */
  | { ms: number }
  /** Set per call by the workflow (the activity input's `maxRestarts`). */
  | { restartsFromInput: true }
  /** As long as the process runs: what it asks or gives back matters until it stops. */
  | { untilClosed: true };

export interface RetryLoop {
  /**
   * The failure types the loop tries again after; any other leaves it. `any`: every error; `except`:
   * every error but those types (an unclassified one included).
   */
  on: readonly FailureType[] | 'any' | { except: readonly FailureType[] };
  budget: LoopBudget;
  backoff: Backoff;
  /**
   * What the service's Retry-After does to the wait: a lower bound, the wait itself (when non-zero), or
   * nothing (the loop's errors carry none).
   */
  retryAfter: 'lowerBound' | 'replaces' | 'none';
  /** Where it runs and why it exists, for readers. */
  cause: string;
}

/**
 * The loops that try again without Temporal, each with its budget and waits. They exist where a Temporal
 * attempt would cost more than the failure (see "One loop per failure" above); every wait of such a
 * loop is computed by {@link loopDelayMs} from its row here.
 */
export const RETRY_LOOPS = {
  TextRequestBlocked: {
    on: ['ServiceRateLimited'],
    budget: { retriesBeyondAnswered: 32 },
    backoff: { kind: 'fullJitter', baseMs: 250, maxMs: 4000 },
    retryAfter: 'lowerBound',
    cause:
      'a text request blocked by a burst limit (99997, spec 01 Limits: "reduce request frequency and retry") ' +
      'is sent again within its step',
  },
  RecognitionRestart: {
    // A 550 waits for a free session without spending a restart (the ServiceNoResource row's delay).
    on: {
      except: ['ServiceAuthFailed', 'ServiceInvalidRequest', 'ServiceQuotaExhausted', 'ServiceNoResource'],
    },
    budget: { restartsFromInput: true },
    backoff: { kind: 'linear', stepMs: 200 },
    retryAfter: 'replaces',
    cause:
      'a recognition stream ended by an error starts a new session from a start request, resuming after ' +
      'the last final result (spec 02, Errors: "after any error restart from the start request")',
  },
  FilePieceRetry: {
    // 550 waits the ServiceNoResource row's delay; 413/652 (ServiceInvalidRequest) never loop.
    on: { except: ['ServiceAuthFailed', 'ServiceInvalidRequest', 'ServiceQuotaExhausted'] },
    budget: { restartsFromInput: true },
    backoff: { kind: 'linear', stepMs: 200 },
    retryAfter: 'replaces',
    cause:
      'a file recognition request that failed (550, 552, 600, 651, 5xx, a timeout) sends its piece again, ' +
      'within the piece retry budget of each attempt; the pieces already recognized are kept',
  },
  SessionResultWrite: {
    on: 'any',
    budget: { ms: 5 * 60_000 },
    backoff: { kind: 'doubling', baseMs: 250, maxMs: 2000 },
    retryAfter: 'none',
    cause:
      "a finished session's result is written again while object storage fails: a lost write would cost " +
      'streaming the session again in real time',
  },
  TablesLeaseWait: {
    on: 'any',
    budget: { ms: 5 * 60_000 },
    backoff: { kind: 'spreadDoubling', baseMs: 50, maxMs: 2000, doublings: 5 },
    retryAfter: 'none',
    cause: "a call waits for the lease of a day's table partitions another write or compaction holds",
  },
  SessionBudgetCall: {
    on: 'any',
    budget: { untilClosed: true },
    backoff: { kind: 'doubling', baseMs: 400, maxMs: 5000 },
    retryAfter: 'none',
    cause:
      "an asr worker asks the account's session budget for leases, or gives them back, again until it " +
      'stops (workers/session-budget-client.ts): a lease not asked leaves a slot idle, one not given back ' +
      'stays counted until it expires',
  },
  OutsideTemporal: {
    on: ['ServiceRateLimited', 'ServiceUnavailable'],
    budget: { tries: 5 },
    backoff: { kind: 'fullJitter', baseMs: 500, maxMs: 30_000 },
    retryAfter: 'lowerBound',
    cause: "service/retry.ts's opt-in `withRetry`, for scripts and one-off CLI calls outside Temporal",
  },
} as const satisfies Record<string, RetryLoop>;

export type RetryLoopName = keyof typeof RETRY_LOOPS;

/** Whether `loop` tries again after a failure of `type`. */
export function loopRetries(loop: RetryLoopName, type: FailureType | undefined): boolean {
  const on: RetryLoop['on'] = RETRY_LOOPS[loop].on;
  if (on === 'any') return true;
  if ('except' in on) return type === undefined || !on.except.includes(type);
  return type !== undefined && on.includes(type);
}

/** The wait of `backoff` before try `n` (1-based), before any Retry-After. */
export function backoffMs(backoff: Backoff, n: number, random: () => number): number {
  const doublings = Math.max(0, n - 1);
  switch (backoff.kind) {
    case 'fullJitter':
      return Math.floor(random() * Math.min(backoff.maxMs, backoff.baseMs * 2 ** doublings));
    case 'doubling':
      return Math.min(backoff.maxMs, backoff.baseMs * 2 ** doublings);
    case 'spreadDoubling':
      return (
        Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(doublings, backoff.doublings)) *
        (0.5 + random())
      );
    case 'linear':
      return backoff.stepMs * n;
  }
}

/**
 * The wait of `loop` before its retry number `n` (1-based): its row's backoff, with the service's
 * Retry-After (`hintMs`) applied as the row says. `backoff` replaces the row's (an option of a test or
 * a deployment); `random` in [0, 1) draws the jitter.
 */
export function loopDelayMs(
  loop: RetryLoopName,
  n: number,
  random: () => number = Math.random,
  hintMs?: number,
  backoff: Backoff = RETRY_LOOPS[loop].backoff,
): number {
  const waitMs = backoffMs(backoff, n, random);
  const retryAfter: RetryLoop['retryAfter'] = RETRY_LOOPS[loop].retryAfter;
  if (retryAfter === 'lowerBound') return Math.max(waitMs, hintMs ?? 0);
  if (retryAfter === 'replaces' && hintMs) return hintMs;
  return waitMs;
}
