/**
 * A lease on one day's partitions of the tables, held in object storage with conditional writes (S3
 * `If-None-Match: *` to create, `If-Match: <etag>` to take over, renew or release): whoever changes
 * which file holds a call's rows (a call's write, a compaction) holds the lease of that day, so two
 * such changes never interleave and a call's rows are never in two files once both are done.
 *
 * The lease object says who holds it until when. An expired lease (its holder died) is taken over by
 * a conditional write on the ETag that was read, so of two workers that find it expired only one wins.
 * Holders renew before half their time is up; a holder whose renewal finds the lease taken stops
 * before it changes anything more ({@link LeaseLostError}, retried by Temporal).
 */
import { randomUUID } from 'node:crypto';
import type { ObjectStore } from '../storage/object-store.ts';
import { loopDelayMs, RETRY_LOOPS } from '../../schemas/retry-table.ts';

/** The tables' partition is busy longer than a caller waits: retried later (schemas/retry-table.ts). */
class TablesBusyError extends Error {
  override name = 'TablesBusy';
}

/** This holder's lease was taken over (it was held past its expiry): stop and let Temporal retry. */
class LeaseLostError extends Error {
  override name = 'TablesBusy';
}

interface LeaseBody {
  holder: string | null;
  /** Epoch ms; 0 when released. */
  expiresAt: number;
  what?: string;
}

export interface LeaseOptions {
  /** How long a lease holds without renewal, ms (default 2 min). */
  ttlMs?: number;
  /** How long to wait for a busy lease before giving up, ms (default: the retry table's, 5 min). */
  waitMs?: number;
  /** Called while waiting and on each renewal (an activity's heartbeat). */
  onWait?: () => void;
  /** What the holder does, for whoever finds the lease taken (no personal data: table and day). */
  what?: string;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

interface Lease {
  readonly key: string;
  /** Renews the lease when half of its time is up; throws {@link LeaseLostError} if it was taken. */
  keep(): Promise<void>;
  release(): Promise<void>;
}

const JSON_TYPE = { contentType: 'application/json' };

function parse(body: Buffer): LeaseBody {
  try {
    const v = JSON.parse(body.toString('utf8')) as Partial<LeaseBody>;
    return { holder: v.holder ?? null, expiresAt: Number(v.expiresAt) || 0, what: v.what };
  } catch {
    return { holder: null, expiresAt: 0 }; // unreadable: treat as free, the conditional write still decides
  }
}

async function acquireLease(store: ObjectStore, key: string, options: LeaseOptions = {}): Promise<Lease> {
  const ttl = options.ttlMs ?? 120_000;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  const holder = randomUUID();
  const body = () =>
    JSON.stringify({ holder, expiresAt: now() + ttl, what: options.what } satisfies LeaseBody);
  const waitMs = options.waitMs ?? RETRY_LOOPS.TablesLeaseWait.budget.ms;
  const deadline = now() + waitMs;
  let etag: string | undefined;
  let renewedAt = 0;
  let busyWith: LeaseBody | undefined;

  for (let attempt = 0; etag === undefined; attempt++) {
    const current = await store.read(key);
    const state = current ? parse(current.body) : undefined;
    if (!current || !current.etag || state!.expiresAt <= now()) {
      const written = await store.putIf(
        key,
        body(),
        current?.etag ? { ifMatch: current.etag } : { ifNoneMatch: '*' },
        JSON_TYPE,
      );
      if (written !== 'conflict') {
        etag = written.etag;
        renewedAt = now();
        // A store that gives no ETag cannot renew or release by condition: read it back once.
        etag ??= (await store.read(key))?.etag;
        break;
      }
    } else busyWith = state;
    if (now() > deadline) {
      throw new TablesBusyError(
        `tables partition lease ${key} is held${busyWith?.what ? ` (${busyWith.what})` : ''}; waited ${Math.round(waitMs / 1000)} s`,
      );
    }
    options.onWait?.();
    // Jittered, growing waits (the retry table's row): calls of one night contend for the same day.
    await sleep(loopDelayMs('TablesLeaseWait', attempt + 1));
  }

  return {
    key,
    async keep() {
      if (now() - renewedAt < ttl / 2) return;
      const written = etag ? await store.putIf(key, body(), { ifMatch: etag }, JSON_TYPE) : 'conflict';
      if (written === 'conflict') throw new LeaseLostError(`tables partition lease ${key} was taken over`);
      etag = written.etag;
      renewedAt = now();
      options.onWait?.();
    },
    async release() {
      if (!etag) return;
      // Released, not deleted: a conditional write needs no conditional delete, which not every S3 has.
      const released = JSON.stringify({ holder: null, expiresAt: 0 } satisfies LeaseBody);
      await store.putIf(key, released, { ifMatch: etag }, JSON_TYPE).catch(() => undefined);
      etag = undefined;
    },
  };
}

/** Runs `work` holding the leases of `keys` (taken in sorted order, so two callers never deadlock). */
export async function withLeases<T>(
  store: ObjectStore,
  keys: readonly string[],
  options: LeaseOptions,
  work: (keep: () => Promise<void>) => Promise<T>,
): Promise<T> {
  const held: Lease[] = [];
  try {
    for (const key of [...new Set(keys)].sort()) held.push(await acquireLease(store, key, options));
    return await work(async () => {
      for (const lease of held) await lease.keep();
    });
  } finally {
    for (const lease of held.reverse()) await lease.release();
  }
}
