/**
 * A worker process's side of the account's session budget (workflows/session-budget.ts): asks for
 * leases, gives them back, and heartbeats so the budget knows the process is alive, telling it on each
 * heartbeat which activities the process started and ended (workers/running-activities.ts), so that the
 * budget can fail them when the process is lost. One per asr worker process, with or without an account
 * limit; workers/session-slots.ts calls it from the worker's slot supplier when there is one.
 *
 * The budget workflow is started on first use (signal-with-start: whichever worker comes first starts it,
 * the others find it) and again by any heartbeat that finds it gone, so nobody has to create it. Its id
 * names the account by a digest of the recognition address and client id (never the secret), within the
 * deployment's task-queue prefix.
 */
import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { Config } from '../schemas/config.ts';
import { taskQueues } from '../schemas/config.ts';
import {
  acquireSessionsUpdate,
  releaseSessionsSignal,
  renewSessionsSignal,
  type sessionBudget,
} from '../workflows/session-budget.ts';
import type { RunningActivities } from './running-activities.ts';
import { loopDelayMs } from '../schemas/retry-table.ts';

/** How long one request waits in the workflow for a grant before the worker asks again. */
const ACQUIRE_WAIT_MS = 20_000;
/** Heartbeats per lease life: a worker is dropped only after missing this many in a row. */
const RENEWALS_PER_TTL = 6;
/**
 * A started activity is told this soon (with every other started meanwhile), not at the next periodic
 * heartbeat: a worker lost just after starting a session still has it failed by the budget.
 */
const STARTED_TOLD_WITHIN_MS = 1000;

export interface SessionBudgetOptions {
  client: Client;
  /** The account's limit (`limits.asrAccountSessions`). */
  limit: number;
  /** A worker not heard of for this long loses its leases (`limits.asrLeaseSeconds`). */
  leaseTtlMs: number;
  /** The budget's workflow id and task queue ({@link sessionBudgetAddress}). */
  workflowId: string;
  taskQueue: string;
  /** Where failures to reach the budget are said (they are retried). */
  warn?: (message: string, meta: Record<string, unknown>) => void;
  /** Waits of one `acquire` update (tests shorten it). */
  acquireWaitMs?: number;
  /** The activities the process runs, told on each heartbeat (none: the budget fails nothing). */
  running?: RunningActivities;
}

/** The budget workflow of `config`'s account: its id and the queue it runs on. */
export function sessionBudgetAddress(config: Pick<Config, 'service' | 'temporal'>): {
  workflowId: string;
  taskQueue: string;
} {
  const account = `${config.service.asrBaseUrl ?? config.service.baseUrl}\n${config.service.clientId}`;
  const digest = createHash('sha256').update(account).digest('hex').slice(0, 12);
  const { workflows } = taskQueues(config);
  return { workflowId: `${workflows}-session-budget-${digest}`, taskQueue: workflows };
}

interface Wanted {
  resolve: (id: string) => void;
}

export class SessionBudgetClient {
  /** This process, as the budget knows it. */
  readonly holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly handle: WorkflowHandle<typeof sessionBudget>;
  private next = 0;
  private renewer: NodeJS.Timeout | undefined;
  private soon: NodeJS.Timeout | undefined;
  /** Heartbeats go one after another: an activity's end never overtakes its start. */
  private renewing: Promise<unknown> = Promise.resolve();
  /** Ids waiting for a lease, and ids given up whose end the budget has not heard of yet. */
  private readonly wanted = new Map<string, Wanted>();
  private cancelled = new Set<string>();
  private asking: Promise<void> | undefined;
  private releasing: string[] = [];
  private flushing: Promise<void> | undefined;
  private closed = false;
  /** The `takeFree` asks of this process, one after another (one such update in flight). */
  private takingFree: Promise<unknown> = Promise.resolve();

  private readonly options: SessionBudgetOptions;
  constructor(options: SessionBudgetOptions) {
    this.options = options;
    this.handle = options.client.workflow.getHandle(options.workflowId);
  }

  /** Starts the workflow if it is not running, and heartbeats from now on. */
  async start(): Promise<void> {
    await this.renew();
    const every = Math.max(250, Math.floor(this.options.leaseTtlMs / RENEWALS_PER_TTL));
    this.renewer = setInterval(() => {
      this.renew().catch((err: unknown) => this.warn('could not renew the session leases', err));
    }, every);
    this.renewer.unref();
    if (this.options.running) this.options.running.onStart = () => this.renewSoon();
  }

  /**
   * One lease, once the account has room: resolves with its id. Rejects only with `signal`'s reason, and
   * then nothing stays held or queued for it.
   */
  acquire(signal: AbortSignal): Promise<string> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    const id = `${this.holder}#${++this.next}`;
    return new Promise<string>((resolve, reject) => {
      const onAbort = () => {
        if (!this.wanted.delete(id)) return;
        // Told to the budget by the next request of this process's one ordered stream.
        this.cancelled.add(id);
        this.ask();
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.wanted.set(id, {
        resolve: (lease) => {
          signal.removeEventListener('abort', onAbort);
          resolve(lease);
        },
      });
      this.ask();
    });
  }

  /**
   * Up to `count` leases from the account's free room, answered at once (`ifFree`: never in line, no
   * wait): the ids granted, none when the account is full, somebody waits in line or the budget cannot
   * be reached. One update per call, beside `acquire`'s one; calls of the process go one after another.
   */
  takeFree(count: number): Promise<string[]> {
    const ids = Array.from({ length: count }, () => `${this.holder}#${++this.next}`);
    const asked = this.takingFree.then(() => this.askFree(ids));
    this.takingFree = asked;
    return asked;
  }

  private async askFree(ids: string[]): Promise<string[]> {
    if (this.closed || ids.length === 0) return [];
    try {
      const answer = await this.handle.executeUpdate(acquireSessionsUpdate, {
        args: [{ holder: this.holder, ids, limit: this.options.limit, waitMs: 0, ifFree: true }],
      });
      return answer.granted;
    } catch (err) {
      // The answer may be lost after the grant: whatever was granted goes back.
      for (const id of ids) this.release(id);
      if (!(err instanceof WorkflowNotFoundError || isNotRunning(err)))
        this.warn('could not ask the session budget for free leases; going on without', err);
      return [];
    }
  }

  /** Gives a lease back (batched with others given back at the same moment; never throws). */
  release(id: string): void {
    this.releasing.push(id);
    this.flushing ??= Promise.resolve().then(() => this.flush());
  }

  /** Gives back everything this process holds or waits for, and stops heartbeating. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.renewer);
    clearTimeout(this.soon);
    await this.flushing;
    await this.handle
      .signal(releaseSessionsSignal, { holder: this.holder, all: true })
      .catch((err: unknown) => this.warn('could not give the session leases back', err));
  }

  /** The one request in flight of this process, asking for every id it wants until none is left. */
  private ask(): void {
    this.asking ??= this.askWhileWanted().finally(() => {
      this.asking = undefined;
      if (!this.closed && (this.wanted.size > 0 || this.cancelled.size > 0)) this.ask();
    });
  }

  private async askWhileWanted(): Promise<void> {
    for (let failures = 0; !this.closed && (this.wanted.size > 0 || this.cancelled.size > 0);) {
      const ids = [...this.wanted.keys()];
      const cancel = [...this.cancelled];
      try {
        const answer = await this.handle.executeUpdate(acquireSessionsUpdate, {
          args: [
            {
              holder: this.holder,
              ids,
              cancel,
              limit: this.options.limit,
              waitMs: this.options.acquireWaitMs ?? ACQUIRE_WAIT_MS,
            },
          ],
        });
        for (const id of cancel) this.cancelled.delete(id);
        for (const id of answer.granted) {
          const wanted = this.wanted.get(id);
          this.wanted.delete(id);
          // Given up while this request was under way: the lease goes straight back.
          if (wanted) wanted.resolve(id);
          else this.release(id);
        }
        failures = 0;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError || isNotRunning(err))
          await this.renew().catch(() => undefined);
        // The run ended under the request (continue-as-new): the next run answers it.
        else if (!(err instanceof Error && /update was aborted/i.test(err.message)))
          this.warn('could not ask the session budget for leases; asking again', err);
        failures += 1;
        await sleep(loopDelayMs('SessionBudgetCall', failures));
      }
    }
  }

  private async flush(): Promise<void> {
    for (let failures = 0; this.releasing.length > 0;) {
      const ids = this.releasing;
      this.releasing = [];
      try {
        await this.handle.signal(releaseSessionsSignal, { holder: this.holder, ids });
        failures = 0;
      } catch (err) {
        // The lease stays counted until this succeeds, or until the process dies and it expires.
        this.releasing.push(...ids);
        if (this.closed) break;
        this.warn('could not give a session lease back; trying again', err);
        failures += 1;
        await sleep(loopDelayMs('SessionBudgetCall', failures));
      }
    }
    this.flushing = undefined;
  }

  private renewSoon(): void {
    if (this.closed || this.soon) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      this.renew().catch((err: unknown) => this.warn('could not renew the session leases', err));
    }, STARTED_TOLD_WITHIN_MS);
    this.soon.unref();
  }

  private renew(): Promise<unknown> {
    const next = this.renewing.catch(() => undefined).then(() => this.sendRenew());
    this.renewing = next;
    return next;
  }

  private async sendRenew(): Promise<unknown> {
    const running = this.options.running;
    const delta = running?.take();
    try {
      return await this.options.client.workflow.signalWithStart('sessionBudget', {
        workflowId: this.options.workflowId,
        taskQueue: this.options.taskQueue,
        args: [{ limit: this.options.limit, leaseTtlMs: this.options.leaseTtlMs }],
        signal: renewSessionsSignal,
        signalArgs: [
          {
            holder: this.holder,
            ...(delta?.started.length ? { started: delta.started } : {}),
            ...(delta?.ended.length ? { ended: delta.ended } : {}),
          },
        ],
      });
    } catch (err) {
      if (delta) running!.restore(delta);
      throw err;
    }
  }

  private warn(message: string, err: unknown): void {
    this.options.warn?.(message, { reason: err instanceof Error ? err.message : String(err) });
  }
}

function isNotRunning(err: unknown): boolean {
  return err instanceof Error && /not found|already completed|continued as new/i.test(err.message);
}
