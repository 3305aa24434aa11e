/**
 * What every text step shares: its cost meter (earlier attempts included), the retries of a blocked
 * request, the checkpoint of its progress, writing its output, and turning its error into the step's
 * outcome (failures.ts).
 *
 * One loop per failure (the retry table's row `TextRequestBlocked`, schemas/retry-table.ts): a 99997
 * (a short burst block, spec 01 Limits) is ridden out here, request by request, with full jitter, and
 * never handed to Temporal: a step makes up
 * to hundreds of requests, and an attempt per block would make little progress when the service blocks
 * often. The loop's budget belongs to the step, not the attempt: it counts every retry of every attempt
 * (the checkpoint carries them), and the step gives up, failing alone (the call is `partial`), once its
 * retries exceed {@link RATE_LIMIT_RETRY_ALLOWANCE} plus the requests that succeeded. A service that
 * blocks everything therefore costs a step 33 requests, not 8 × 20. Every other service error leaves
 * the attempt to Temporal, the checkpoint keeping what was done.
 */
import type { z } from 'zod';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  addCosts,
  CostMeter,
  type CallCost,
  type NlpCallOptions,
  type ServiceClient,
} from '../../service/index.ts';
import { isServiceError } from '../../service/index.ts';
import type { NlpStep } from '../../schemas/result.ts';
import { loopDelayMs, loopRetries, RETRY_LOOPS } from '../../schemas/retry-table.ts';
import { classifyFailure } from '../failure-classifier.ts';
import type { RedactionRules } from '../../schemas/redaction.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { deleteCheckpoint, loadCheckpoint, saveCheckpoint } from './checkpoint.ts';
import { attemptNumber, cancellationSignal, heartbeat } from './context.ts';
import { stepErrorOutcome, StepInputError, type FailurePolicy } from './failures.ts';
import { unpaced, type RequestPacer } from './pacing.ts';
import type { NlpStepInput, NlpStepOutput } from './types.ts';
import { metrics } from '../metrics.ts';

const BLOCKED = RETRY_LOOPS.TextRequestBlocked;
/** Retries of blocked requests a step may make beyond one per request that succeeded. */
export const RATE_LIMIT_RETRY_ALLOWANCE = BLOCKED.budget.retriesBeyondAnswered;
/** Backoff of a blocked request: full jitter, at least the Retry-After (the retry table's row). */
const DEFAULT_REQUEST_BASE_DELAY_MS = BLOCKED.backoff.baseMs;
const DEFAULT_REQUEST_MAX_DELAY_MS = BLOCKED.backoff.maxMs;

export interface NlpActivityOptions extends FailurePolicy {
  /** Retries of blocked requests beyond one per success; default {@link RATE_LIMIT_RETRY_ALLOWANCE}. */
  rateLimitAllowance?: number;
  /** Backoff of those retries (full jitter, at least the service's Retry-After). */
  requestBaseDelayMs?: number;
  requestMaxDelayMs?: number;
  /**
   * Text requests per second of this worker process, over every step (pacing.ts); default unpaced.
   * Set it to the account's rate divided by the number of NLP workers (config `nlpRequestsPerSecond`).
   */
  requestsPerSecond?: number;
  /** Bound of the redaction step's own terms and patterns per call; default USER_RULES_SECONDS_PER_CALL. */
  userRulesSeconds?: number;
}

export interface NlpActivityDeps {
  service: ServiceClient;
  /** Staging storage: the timeline, the steps' outputs and their checkpoints. */
  store: ObjectStore;
  options?: NlpActivityOptions;
  /** Shared by the steps of one factory; default from `options.requestsPerSecond`. */
  pacer?: RequestPacer;
  /** Masks and the deployment's terms and patterns (configuration `redaction`); default: built-in masks only. */
  redactionRules?: Partial<RedactionRules>;
  /** Key of personal values' digests (schemas/personal-digest.ts); without it, records carry none. */
  digestKey?: Buffer;
}

export interface StepRun<T> {
  /** Progress of earlier attempts (utterance index or batch number → its result). */
  readonly done: Map<number, T>;
  readonly signal: AbortSignal | undefined;
  /** One service call with this step's meter and signal, retried while blocked within the step's budget. */
  request<R>(call: (options: NlpCallOptions) => Promise<R>): Promise<R>;
  /** Heartbeat with progress (a no-op outside Temporal). */
  progress(done: number, total: number): void;
}

/** The step's 99997 budget is spent: it fails alone with this reason. */
class RateLimitBudgetSpent extends StepInputError {}

export async function runStep<T, S extends z.ZodType>(
  deps: NlpActivityDeps,
  step: NlpStep,
  input: NlpStepInput,
  /** What the progress depends on, e.g. the timeline and fillers keys and the step's options. */
  inputs: string,
  schema: S,
  work: (run: StepRun<T>) => Promise<Omit<z.input<S>, 'cost'>>,
): Promise<NlpStepOutput> {
  const { store } = deps;
  const options = deps.options ?? {};
  const meter = new CostMeter();
  let earlier: CallCost = { requests: 0, retries: 0, bytesSent: 0, bytesReceived: 0 };
  let done = new Map<number, T>();
  const cost = () => addCosts(earlier, meter.snapshot());
  /** Requests of this step that were answered, earlier attempts included: the budget grows with them. */
  let answered = 0;

  try {
    const checkpoint = await loadCheckpoint<T>(store, input.outputKey, step, inputs);
    if (checkpoint) {
      // The request that failed the previous attempt is sent again: one more retry.
      earlier = { ...checkpoint.cost, retries: checkpoint.cost.retries + 1 };
      done = checkpoint.done;
      answered = Math.max(0, checkpoint.cost.requests - checkpoint.cost.retries - 1);
    }
    const signal = cancellationSignal();
    const run: StepRun<T> = {
      done,
      signal,
      request: async (call) => {
        for (let blocked = 0; ; blocked++) {
          try {
            await (deps.pacer ?? unpaced).acquire(signal);
            // Counted per request sent (retries included), by step and outcome (activities/metrics.ts).
            const answer = await metrics.observe(`nlp/${step}`, () => call({ meter, signal }));
            answered += 1;
            return answer;
          } catch (err) {
            if (!isServiceError(err) || !loopRetries('TextRequestBlocked', classifyFailure(err))) throw err;
            const { retries } = cost();
            if (retries >= (options.rateLimitAllowance ?? RATE_LIMIT_RETRY_ALLOWANCE) + answered) {
              throw new RateLimitBudgetSpent(
                `${step}: the service kept blocking requests (99997): gave up after ${retries} retries ` +
                  `for ${answered} answered requests`,
              );
            }
            meter.addRetry();
            const delay = loopDelayMs('TextRequestBlocked', blocked + 1, options.random, err.retryAfterMs, {
              kind: 'fullJitter',
              baseMs: options.requestBaseDelayMs ?? DEFAULT_REQUEST_BASE_DELAY_MS,
              maxMs: options.requestMaxDelayMs ?? DEFAULT_REQUEST_MAX_DELAY_MS,
            });
            await sleep(delay, undefined, { signal });
          }
        }
      },
      progress: (n, total) => heartbeat({ step, done: n, total }),
    };
    const document = await work(run);
    const output = schema.parse({ ...document, cost: cost() });
    await store.put(input.outputKey, JSON.stringify(output), { contentType: 'application/json' });
    // Only the one it resumed from: an attempt that found none left none (a leftover costs nothing).
    if (checkpoint) await deleteCheckpoint(store, input.outputKey).catch(() => undefined);
    return { status: 'ok', outputKey: input.outputKey, cost: cost() };
  } catch (err) {
    const outcome = stepErrorOutcome(step, err, attemptNumber(), options);
    if (outcome.kind === 'stepFailed') return { status: 'failed', reason: outcome.reason, cost: cost() };
    if (done.size > 0 || meter.requests > 0) {
      // Best effort: losing the checkpoint costs requests, not correctness; the step's error matters more.
      await saveCheckpoint(store, input.outputKey, step, inputs, { cost: cost(), done }).catch(
        () => undefined,
      );
    }
    throw outcome.error;
  }
}
