/**
 * Pacing of audio requests: 240 ms of audio every 240 ms ÷ `speed` (spec 02: 412 "Interval Too Brief"
 * when sent faster; the service expects real time, `speed` 1; emulators run faster).
 *
 * Each request waits until one interval after the previous *send*, and (enforced by the session) until
 * the previous response arrived. Measured from sends rather than from a fixed schedule, a late response
 * is never followed by a catch-up burst, so no two requests are ever closer than one interval; the cost
 * is a drift of the timer's lateness per request (about 1 ms in 240, under 0.5 %).
 */
import { setTimeout as sleep } from 'node:timers/promises';

export class Pacer {
  readonly intervalMs: number;
  #lastSendAt: number | undefined;
  readonly #now: () => number;

  constructor(chunkMs: number, speed: number, now: () => number = () => performance.now()) {
    if (!(speed > 0) || !Number.isFinite(speed))
      throw new RangeError(`speed must be a positive number, not ${speed}`);
    this.intervalMs = chunkMs / speed;
    this.#now = now;
  }

  /** Milliseconds to wait before the next send (0 for the first). */
  delayMs(): number {
    if (this.#lastSendAt === undefined) return 0;
    return Math.max(0, this.#lastSendAt + this.intervalMs - this.#now());
  }

  /** Waits until the next send is due; rejects if `signal` aborts. */
  async wait(signal?: AbortSignal): Promise<void> {
    // Timers have millisecond granularity and may fire a fraction early against performance.now():
    // wait in whole milliseconds until the interval has really passed.
    for (let delay = this.delayMs(); delay > 0; delay = this.delayMs()) {
      await sleep(Math.ceil(delay), undefined, { signal });
    }
  }

  /** Records that a request was just sent. */
  sent(): void {
    this.#lastSendAt = this.#now();
  }
}
