/**
 * The asr worker's slot supplier under an account budget (workers/session-slots.ts), with a fake budget:
 * a slot needs one of the process's own and a lease; an abandoned reservation holds neither; a released
 * slot gives both back; eager tasks are never taken.
 */
import { describe, expect, it } from 'vitest';
import type { SlotReserveContext } from '@temporalio/worker';
import { sessionSlotSupplier, type LeaseSource } from '../../workers/session-slots.ts';

/** A budget of `size` leases handed out in order of asking. */
function fakeBudget(size: number) {
  let free = size;
  let next = 0;
  const line: { grant: (id: string) => void }[] = [];
  const released: string[] = [];
  const source: LeaseSource = {
    acquire(signal) {
      if (free > 0) {
        free -= 1;
        return Promise.resolve(`lease-${++next}`);
      }
      return new Promise((resolve, reject) => {
        const entry = { grant: (id: string) => resolve(id) };
        line.push(entry);
        signal.addEventListener('abort', () => {
          line.splice(line.indexOf(entry), 1);
          reject(signal.reason as Error);
        });
      });
    },
    release(id) {
      released.push(id);
      const waiting = line.shift();
      if (waiting) waiting.grant(`lease-${++next}`);
      else free += 1;
    },
  };
  return { source, released, waiting: () => line.length };
}

const ctx = {} as SlotReserveContext;
const settled = async <T>(p: Promise<T>) => {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setTimeout(r, 20));
  return done;
};

describe('sessionSlotSupplier', () => {
  it("holds at most the process's own slots, each with a lease, and gives both back", async () => {
    const budget = fakeBudget(10);
    const slots = sessionSlotSupplier(budget.source, 2);
    const a = await slots.reserveSlot(ctx, new AbortController().signal);
    const b = await slots.reserveSlot(ctx, new AbortController().signal);
    const third = slots.reserveSlot(ctx, new AbortController().signal);
    expect(await settled(third)).toBe(false);
    // The third waits for the process's own slot, not for the account: it asked the budget for nothing.
    expect(budget.waiting()).toBe(0);
    slots.releaseSlot({ permit: a });
    expect(await third).toEqual({ lease: 'lease-3' });
    expect(budget.released).toEqual(['lease-1']);
    slots.releaseSlot({ permit: b });
    expect(budget.released).toEqual(['lease-1', 'lease-2']);
  });

  it('waits for the account when the process has room, and an abandoned reservation holds nothing', async () => {
    const budget = fakeBudget(1);
    const slots = sessionSlotSupplier(budget.source, 2);
    const held = await slots.reserveSlot(ctx, new AbortController().signal);
    const abort = new AbortController();
    const abandoned = slots.reserveSlot(ctx, abort.signal);
    expect(await settled(abandoned)).toBe(false);
    expect(budget.waiting()).toBe(1);
    abort.abort(Object.assign(new Error('poller stopped'), { name: 'AbortError' }));
    await expect(abandoned).rejects.toThrow('poller stopped');
    expect(budget.waiting()).toBe(0);
    slots.releaseSlot({ permit: held });
    // Both of the process's slots are free again: one takes the lease, the other waits for the account
    // (had the abandoned reservation kept its slot, it would wait for the process instead).
    expect(await slots.reserveSlot(ctx, new AbortController().signal)).toEqual({ lease: 'lease-2' });
    const waiting = slots.reserveSlot(ctx, new AbortController().signal);
    expect(await settled(waiting)).toBe(false);
    expect(budget.waiting()).toBe(1);
  });

  it('never takes an eager task (it would skip the line and longest-first dispatch)', () => {
    const slots = sessionSlotSupplier(fakeBudget(5).source, 5);
    expect(slots.tryReserveSlot(ctx)).toBeNull();
  });
});
