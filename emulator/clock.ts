/**
 * The emulator's one source of time for its time rules: stream pacing, the 1-s deadlines, the idle
 * timeout, token lifetimes, the rate bucket and scheduled faults. Milliseconds since the epoch.
 *
 * By default the system's clocks (`performance.now()` for the stream rules, `Date.now()` for tokens,
 * the rate bucket and fault schedules); a test passes one `ManualClock` for all of them to check a time
 * rule exactly (how far ahead of the recognizer a client is, when a deadline passes) without depending
 * on how fast the machine answers requests. Real delays the emulator adds itself (injected latency, the
 * 250-ms sweep of idle sessions) still take real time; the rules they apply read this clock.
 */
export type Clock = () => number;

/** A clock that stands still until told to move. */
export class ManualClock {
  private ms: number;

  constructor(startMs = Math.floor(Date.now())) {
    this.ms = startMs;
  }

  /** The clock, as the emulator's `clock` option takes it. */
  readonly now: Clock = () => this.ms;

  advance(ms: number): void {
    if (!(ms >= 0)) throw new Error(`a clock only moves forward, got ${ms} ms`);
    this.ms += ms;
  }
}
