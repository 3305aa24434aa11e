/**
 * Which discovered objects of a watch have settled: an object is taken once its size and ETag have been
 * the same for the settle time. Pure and deterministic (workflow code; unit-tested): times are passed in.
 *
 * An object first seen with a store modification time well before it was seen (more than the clock
 * slack) has been stable since then, so a watch catching up takes it without waiting; a fresh one waits
 * the whole settle from when it was seen, whatever the store's clock says. A changed size or ETag (the
 * recording replaced while settling) restarts its settle.
 */
import type { WatchObject } from '../schemas/watch.ts';

export interface PendingEntry {
  key: string;
  etag?: string | undefined;
  size: number;
  /** When this version was first seen (workflow time, epoch ms). */
  since: number;
  /** The store's modification time of this version (epoch ms), when known. */
  modifiedMs?: number | undefined;
}

export type Observed = 'new' | 'same' | 'replaced' | 'full';

export class PendingSet {
  private readonly entries = new Map<string, PendingEntry>();

  readonly max: number;
  /** Milliseconds of clock slack between the store and the workers. */
  readonly slackMs: number;

  constructor(entries: readonly PendingEntry[], max: number, slackMs: number) {
    this.max = max;
    this.slackMs = slackMs;
    for (const e of entries) this.entries.set(e.key, e);
  }

  get size(): number {
    return this.entries.size;
  }

  get full(): boolean {
    return this.entries.size >= this.max;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Records a sighting of `object` at `now`: new, the same version, another version, or no room. */
  observe(object: WatchObject, now: number): Observed {
    const known = this.entries.get(object.key);
    if (known) {
      if (known.etag === object.etag && known.size === object.size) return 'same';
      this.entries.set(object.key, { ...entryOf(object, now) });
      return 'replaced';
    }
    if (this.full) return 'full';
    this.entries.set(object.key, entryOf(object, now));
    return 'new';
  }

  /** Another version was found at admission: it settles again from `now`. */
  restart(key: string, version: { etag?: string | undefined; size: number }, now: number): void {
    this.entries.set(key, { key, etag: version.etag, size: version.size, since: now });
  }

  remove(key: string): boolean {
    return this.entries.delete(key);
  }

  /** Since when an entry has been known stable. */
  stableFrom(e: PendingEntry): number {
    return e.modifiedMs !== undefined && e.modifiedMs + this.slackMs < e.since
      ? e.modifiedMs + this.slackMs
      : e.since;
  }

  /** Entries settled at `now`, longest stable first, at most `limit`. */
  settled(now: number, settleMs: number, limit: number): PendingEntry[] {
    if (limit <= 0) return [];
    return [...this.entries.values()]
      .filter((e) => now - this.stableFrom(e) >= settleMs)
      .sort((a, b) => this.stableFrom(a) - this.stableFrom(b) || (a.key < b.key ? -1 : 1))
      .slice(0, limit);
  }

  /** When the next entry settles (epoch ms), or undefined when nothing is pending. */
  nextSettleAt(settleMs: number): number | undefined {
    let next: number | undefined;
    for (const e of this.entries.values()) {
      const at = this.stableFrom(e) + settleMs;
      if (next === undefined || at < next) next = at;
    }
    return next;
  }

  /** What continue-as-new carries. */
  toJSON(): PendingEntry[] {
    return [...this.entries.values()];
  }
}

function entryOf(object: WatchObject, now: number): PendingEntry {
  return {
    key: object.key,
    etag: object.etag,
    size: object.size,
    since: now,
    ...(object.modifiedMs !== undefined ? { modifiedMs: object.modifiedMs } : {}),
  };
}
