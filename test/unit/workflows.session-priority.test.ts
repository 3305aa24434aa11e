import { describe, expect, it } from 'vitest';
import { planPriority, sessionPriority } from '../../workflows/session-priority.ts';

describe('sessionPriority', () => {
  it('orders longer sessions first, within Temporal keys 1–5', () => {
    const lengths = [3000, 1200, 1199, 600, 300, 240, 120, 90, 60, 1, 0];
    const keys = lengths.map((s) => sessionPriority(s).priorityKey);
    expect(keys).toEqual([1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 5]);
    // Never a higher key (later dispatch) for a longer session.
    for (let i = 1; i < keys.length; i += 1) expect(keys[i]!).toBeGreaterThanOrEqual(keys[i - 1]!);
  });
});

describe('media queue priorities', () => {
  it("puts every plan after the call's other media work (default key 3), longest call first", () => {
    const plans = [7800, 1200, 1199, 60].map((s) => planPriority(s, 'stream').priorityKey);
    expect(plans).toEqual([4, 4, 5, 5]);
    expect(Math.min(...plans)).toBeGreaterThan(3);
  });

  it("for file pieces, puts a long call's plan before the other media work and a short call's after it", () => {
    const plans = [7800, 1200, 1199, 60].map((s) => planPriority(s, 'file').priorityKey);
    expect(plans).toEqual([2, 2, 4, 4]);
  });
});
