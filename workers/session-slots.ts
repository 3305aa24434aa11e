/**
 * The asr worker's activity slots when the account's session limit is shared by several worker
 * processes (`limits.asrAccountSessions`): a slot is one of this process's own (at most
 * `limits.asrConcurrentSessions`) *and* a lease from the account's budget (workers/session-budget-client.ts).
 *
 * Temporal's worker reserves a slot before it polls its task queue: holding the lease before the poll
 * means a recognition task is only ever taken by a worker that may open its session now. Tasks the
 * account has no room for wait in the task queue, which dispatches the longest sessions first
 * (workflows/session-priority.ts), rather than inside a worker, where a waiting session would spend its
 * start-to-close timeout and hold a slot other sessions could use.
 */
import type { ActivitySlotInfo, CustomSlotSupplier, SlotPermit } from '@temporalio/worker';

/** What the slots need of the budget (a fake in unit tests). */
export interface LeaseSource {
  /** One lease; rejects only with the signal's reason. */
  acquire(signal: AbortSignal): Promise<string>;
  release(id: string): void;
}

interface SessionPermit extends SlotPermit {
  lease: string;
}

/** A counting semaphore whose waits can be abandoned. */
class LocalSlots {
  private free: number;
  private readonly waiters: (() => void)[] = [];

  constructor(size: number) {
    this.free = size;
  }

  take(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  give(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.free += 1;
  }
}

/** The custom slot supplier of the asr worker's activities (see the file's comment). */
export function sessionSlotSupplier(
  leases: LeaseSource,
  perProcess: number,
): CustomSlotSupplier<ActivitySlotInfo> {
  const local = new LocalSlots(perProcess);
  return {
    type: 'custom',
    async reserveSlot(_ctx, signal): Promise<SessionPermit> {
      await local.take(signal);
      try {
        return { lease: await leases.acquire(signal) };
      } catch (err) {
        local.give();
        throw err;
      }
    },
    // Eager activities (handed over with a workflow task, bypassing the queue) would skip both the
    // account's line and longest-first dispatch: never.
    tryReserveSlot: () => null,
    markSlotUsed: () => {},
    releaseSlot({ permit }) {
      leases.release((permit as SessionPermit).lease);
      local.give();
    },
  };
}
