/**
 * Pacing of audio requests: 240 ms of audio per 240 ms ÷ `speed` of wall time (spec 02: 412 "Interval
 * Too Brief" when sent faster; the service expects real time, `speed` 1; emulators run faster).
 *
 * Request n is due at `anchor + n × interval` and never leaves earlier, so the audio sent never runs ahead
 * of the wall clock since the stream began: what a microphone produces, which a real-time service must
 * accept. Timer lateness (whole milliseconds) and round trips therefore cost nothing on average, where
 * spacing each send from the previous one lost both on every request (bench/README.md, "Figures behind
 * the code").
 *
 * A slow response leaves the schedule behind; the next requests then go as soon as their responses allow
 * (the session never sends before the previous answer) until the schedule is met again. That catch-up is
 * bounded: a debt over `maxCatchUpChunks` intervals, or over `minCatchUpMs` of wall time when that is
 * longer, is forgiven by re-anchoring the schedule, so a stall is never followed by more back-to-back
 * requests than that. The wall-time floor matters above real time only: at speed 1, 4 intervals are
 * 960 ms; at speed 20 they are 48 ms, shorter than a garbage-collection pause or a burst of another
 * activity's work on the same event loop, and forgiving every such debt made a night's streams run below
 * their speed (bench/README.md, "Figures behind the code").
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** Default bound of the catch-up after a stall: about a second of audio at 240 ms per request. */
const DEFAULT_MAX_CATCH_UP_CHUNKS = 4;
/** Default floor of that bound in wall time: a stall shorter than this is always caught up. */
const DEFAULT_MIN_CATCH_UP_MS = 250;

export class Pacer {
  readonly #chunkMs: number;
  readonly #speed: () => number;
  readonly #maxCatchUpChunks: number;
  readonly #minCatchUpMs: number;
  #dueAt: number | undefined;
  readonly #now: () => number;

  /** `speed`: a number, or read before every send (a pace that changes during the session, `auto`). */
  constructor(
    chunkMs: number,
    speed: number | (() => number),
    now: () => number = () => performance.now(),
    maxCatchUpChunks = DEFAULT_MAX_CATCH_UP_CHUNKS,
    minCatchUpMs = DEFAULT_MIN_CATCH_UP_MS,
  ) {
    if (typeof speed === 'number') checkSpeed(speed);
    this.#chunkMs = chunkMs;
    this.#speed = typeof speed === 'number' ? () => speed : () => checkSpeed(speed());
    this.#maxCatchUpChunks = maxCatchUpChunks;
    this.#minCatchUpMs = minCatchUpMs;
    this.#now = now;
  }

  /** Milliseconds to wait before the next send (0 for the first, and when behind schedule). */
  delayMs(): number {
    if (this.#dueAt === undefined) return 0;
    return Math.max(0, this.#dueAt - this.#now());
  }

  /** Waits until the next send is due; rejects if `signal` aborts. */
  async wait(signal?: AbortSignal): Promise<void> {
    // Timers have millisecond granularity and may fire a fraction early against performance.now():
    // wait in whole milliseconds until the due time has really passed.
    for (let delay = this.delayMs(); delay > 0; delay = this.delayMs()) {
      await sleep(Math.ceil(delay), undefined, { signal });
    }
  }

  /** Records that a request was just sent: the next one is due one interval after this one was. */
  sent(): void {
    const now = this.#now();
    const intervalMs = this.#chunkMs / this.#speed();
    const maxDebtMs = Math.max(intervalMs * this.#maxCatchUpChunks, this.#minCatchUpMs);
    if (this.#dueAt === undefined || now - this.#dueAt > maxDebtMs) this.#dueAt = now;
    this.#dueAt += intervalMs;
  }
}

function checkSpeed(speed: number): number {
  if (!(speed > 0) || !Number.isFinite(speed))
    throw new RangeError(`speed must be a positive number, not ${speed}`);
  return speed;
}
