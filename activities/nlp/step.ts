/**
 * What every text step shares: its cost meter (earlier attempts included), bounded retries of single
 * requests inside the attempt, the checkpoint of its progress, writing its output, and turning its
 * error into the step's outcome (failures.ts).
 *
 * Why retry inside the attempt at all, when Temporal owns retries: a step makes up to hundreds of
 * requests, and an attempt that ends at the first 99997 makes little progress per attempt when the
 * service blocks bursts often. A few quick retries of the one blocked request (full jitter, counted as
 * retries) keep the attempt going; when they are used up the attempt fails with `nextRetryDelay` and
 * Temporal takes over, the checkpoint keeping what was done.
 */
import type { z } from 'zod';
import {
  addCosts,
  CostMeter,
  withRetry,
  type CallCost,
  type NlpCallOptions,
  type ServiceClient,
} from '../../service/index.ts';
import { isServiceError } from '../../service/index.ts';
import type { NlpStep } from '../../schemas/result.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { deleteCheckpoint, loadCheckpoint, saveCheckpoint } from './checkpoint.ts';
import { attemptNumber, cancellationSignal, heartbeat } from './context.ts';
import { stepErrorOutcome, type FailurePolicy } from './failures.ts';
import { unpaced, type RequestPacer } from './pacing.ts';
import type { NlpStepInput, NlpStepOutput } from './types.ts';
import { metrics } from '../metrics.ts';

/** Attempts of one request inside an activity attempt (the first included), for 99997 and transient errors. */
export const DEFAULT_REQUEST_ATTEMPTS = 3;
export const DEFAULT_REQUEST_BASE_DELAY_MS = 250;
export const DEFAULT_REQUEST_MAX_DELAY_MS = 4000;

export interface NlpActivityOptions extends FailurePolicy {
  /** Attempts of one request inside an activity attempt; 1 leaves every retry to Temporal. Default 3. */
  requestAttempts?: number;
  /** Backoff of those retries (full jitter, at least the service's Retry-After). */
  requestBaseDelayMs?: number;
  requestMaxDelayMs?: number;
  /**
   * Text requests per second of this worker process, over every step (pacing.ts); default unpaced.
   * Set it to the account's rate divided by the number of NLP workers (config `nlpRequestsPerSecond`).
   */
  requestsPerSecond?: number;
}

export interface NlpActivityDeps {
  service: ServiceClient;
  /** Staging storage: the timeline, the steps' outputs and their checkpoints. */
  store: ObjectStore;
  options?: NlpActivityOptions;
  /** Shared by the steps of one factory; default from `options.requestsPerSecond`. */
  pacer?: RequestPacer;
}

export interface StepRun<T> {
  /** Progress of earlier attempts (utterance index or batch number → its result). */
  readonly done: Map<number, T>;
  readonly signal: AbortSignal | undefined;
  /** One service call with this step's meter and signal, retried a few times when blocked or transient. */
  request<R>(call: (options: NlpCallOptions) => Promise<R>): Promise<R>;
  /** Heartbeat with progress (a no-op outside Temporal). */
  progress(done: number, total: number): void;
}

function retryableInAttempt(err: unknown): boolean {
  return isServiceError(err) && (err.kind === 'rateLimited' || err.kind === 'transient');
}

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

  try {
    const checkpoint = await loadCheckpoint<T>(store, input.outputKey, step, inputs);
    if (checkpoint) {
      // The request that failed the previous attempt is sent again: one more retry.
      earlier = { ...checkpoint.cost, retries: checkpoint.cost.retries + 1 };
      done = checkpoint.done;
    }
    const signal = cancellationSignal();
    const run: StepRun<T> = {
      done,
      signal,
      request: (call) =>
        withRetry(
          async () => {
            await (deps.pacer ?? unpaced).acquire(signal);
            // Counted per request sent (retries included), by step and outcome (activities/metrics.ts).
            return metrics.observe(`nlp/${step}`, () => call({ meter, signal }));
          },
          {
            attempts: options.requestAttempts ?? DEFAULT_REQUEST_ATTEMPTS,
            baseDelayMs: options.requestBaseDelayMs ?? DEFAULT_REQUEST_BASE_DELAY_MS,
            maxDelayMs: options.requestMaxDelayMs ?? DEFAULT_REQUEST_MAX_DELAY_MS,
            shouldRetry: retryableInAttempt,
            meter,
            signal,
            random: options.random,
          },
        ),
      progress: (n, total) => heartbeat({ step, done: n, total }),
    };
    const document = await work(run);
    const output = schema.parse({ ...document, cost: cost() });
    await store.put(input.outputKey, JSON.stringify(output), { contentType: 'application/json' });
    await deleteCheckpoint(store, input.outputKey).catch(() => undefined); // a leftover costs nothing
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
