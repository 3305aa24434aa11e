/** workflows/watch-settle.ts: when a discovered object of a watch has settled. */
import { describe, expect, it } from 'vitest';
import { PendingSet } from '../../workflows/watch-settle.ts';

const SETTLE = 30_000;
const SLACK = 300_000;
const T0 = Date.parse('2026-11-26T09:00:00Z');

describe('PendingSet', () => {
  it('takes an object once its size and ETag have been the same for the settle time', () => {
    const set = new PendingSet([], 10, SLACK);
    expect(set.observe({ key: 'a.wav', etag: 'e1', size: 100, modifiedMs: T0 }, T0)).toBe('new');
    expect(set.settled(T0 + SETTLE - 1, SETTLE, 10)).toEqual([]);
    expect(set.observe({ key: 'a.wav', etag: 'e1', size: 100, modifiedMs: T0 }, T0 + 10_000)).toBe('same');
    expect(set.settled(T0 + SETTLE, SETTLE, 10).map((e) => e.key)).toEqual(['a.wav']);
    expect(set.nextSettleAt(SETTLE)).toBe(T0 + SETTLE);
  });

  it('restarts the settle of an object replaced while settling (another ETag or size)', () => {
    const set = new PendingSet([], 10, SLACK);
    set.observe({ key: 'a.wav', etag: 'e1', size: 100 }, T0);
    expect(set.observe({ key: 'a.wav', etag: 'e2', size: 100 }, T0 + 20_000)).toBe('replaced');
    expect(set.settled(T0 + SETTLE, SETTLE, 10)).toEqual([]);
    expect(set.settled(T0 + 20_000 + SETTLE, SETTLE, 10)).toHaveLength(1);
    expect(set.observe({ key: 'a.wav', etag: 'e2', size: 200 }, T0 + 40_000)).toBe('replaced');
    expect(set.settled(T0 + 20_000 + SETTLE, SETTLE, 10)).toEqual([]);
    set.restart('a.wav', { etag: 'e3', size: 300 }, T0 + 60_000);
    expect(set.settled(T0 + 60_000 + SETTLE - 1, SETTLE, 10)).toEqual([]);
    expect(set.settled(T0 + 60_000 + SETTLE, SETTLE, 10)[0]).toMatchObject({ etag: 'e3', size: 300 });
  });

  it('takes an object last modified long before it was seen at once (a watch catching up)', () => {
    const set = new PendingSet([], 10, SLACK);
    set.observe({ key: 'old.wav', etag: 'e', size: 1, modifiedMs: T0 - 3_600_000 }, T0);
    expect(set.settled(T0, SETTLE, 10).map((e) => e.key)).toEqual(['old.wav']);
  });

  it('does not trust a store clock within the slack: a fresh-looking object waits the whole settle', () => {
    const set = new PendingSet([], 10, SLACK);
    // The store's clock a minute behind: the object looks a minute old, yet was just written.
    set.observe({ key: 'new.wav', etag: 'e', size: 1, modifiedMs: T0 - 60_000 }, T0);
    expect(set.settled(T0 + SETTLE - 1, SETTLE, 10)).toEqual([]);
    expect(set.settled(T0 + SETTLE, SETTLE, 10)).toHaveLength(1);
  });

  it('holds at most `max` objects and answers `full` beyond, and gives at most `limit` settled ones', () => {
    const set = new PendingSet([], 3, SLACK);
    for (const k of ['c', 'a', 'b']) expect(set.observe({ key: k, size: 1 }, T0)).toBe('new');
    expect(set.full).toBe(true);
    expect(set.observe({ key: 'd', size: 1 }, T0)).toBe('full');
    // A known one is still observed when full.
    expect(set.observe({ key: 'a', size: 2 }, T0 + 1)).toBe('replaced');
    expect(set.settled(T0 + SETTLE + 1, SETTLE, 2).map((e) => e.key)).toEqual(['b', 'c']);
    expect(set.settled(T0 + SETTLE + 1, SETTLE, 0)).toEqual([]);
    expect(set.remove('b')).toBe(true);
    expect(set.full).toBe(false);
  });

  it('round-trips through what continue-as-new carries', () => {
    const set = new PendingSet([], 10, SLACK);
    set.observe({ key: 'a.wav', etag: 'e1', size: 100, modifiedMs: T0 - 1 }, T0);
    const again = new PendingSet(JSON.parse(JSON.stringify(set.toJSON())), 10, SLACK);
    expect(again.size).toBe(1);
    expect(again.observe({ key: 'a.wav', etag: 'e1', size: 100 }, T0 + 5)).toBe('same');
    expect(again.nextSettleAt(SETTLE)).toBe(T0 + SETTLE);
  });
});
