import { describe, expect, it } from 'vitest';
import { slotSeconds } from '../../bench/lib/makespan.ts';

describe('slotSeconds', () => {
  it('splits budget × makespan into streaming, overhead, dispatch, starved and tail', () => {
    // Two slots from t=0 to t=10 s (20 slot-seconds). Session a: scheduled at 1, started at 2, ended at
    // 10; session b: scheduled at 3, started at 4, ended at 6. Streaming: 8 s of the 10 s they ran.
    const s = (scheduled: number, start: number, end: number) => ({
      scheduledMs: scheduled * 1000,
      startMs: start * 1000,
      endMs: end * 1000,
    });
    const out = slotSeconds([s(1, 2, 10), s(3, 4, 6)], 0, 2, 8);
    expect(out).toEqual({
      streaming: 8,
      overhead: 2,
      overheadPerSessionSeconds: 1,
      // 1–2 s: a waits with two slots free (1 dispatch, 1 starved); 3–4 s: b waits, one slot free.
      dispatch: 2,
      // 0–1 s: 2; 1–2 s: 1; 2–3 s: 1.
      starved: 4,
      // After b started (4 s): 4–6 s nothing free, 6–10 s one slot free.
      tail: 4,
    });
    const total = out.streaming + out.overhead + out.dispatch + out.starved + out.tail;
    expect(total).toBe(20);
  });
});
