/**
 * How fast stream sessions send audio, × real time: fixed by configuration, or found (`auto`).
 *
 * Spec 02 answers `412 Interval Too Brief` to audio sent faster than the service accepts but gives no
 * figure, and the service's own sample clients differ (two pace in real time, one sends as fast as answers
 * come). `auto` starts at real time and looks for the fastest accepted pace with one session at a time,
 * the scout, while every other session keeps the last pace known good:
 *
 * - the scout sends at a probe pace; once `probeAudioSeconds` of audio went through at it, the probe is
 *   known good (less a small margin) and the next probe is tried;
 * - probes double until the first refusal, then climb from the known good pace in steps of
 *   `SETTLED_RATIO` (10 %) until one is refused: the known good pace is then within 10 % of the service's,
 *   settled, and no session probes again for the life of the process (one per worker). Climbing rather
 *   than bisecting costs more probes that hold (time) but at most two refusals (restarts);
 * - a refusal (412) ends that session, which resumes after its last final result as after any session
 *   error; so a probe costs at most one restart, of the scout only. A refusal of a session at the known
 *   good pace (the service got slower) lowers it to `BACK_OFF` of the refused pace, and probing resumes.
 *
 * Why `probeAudioSeconds`: a pace ε above the service's sits ε of audio per second further ahead, so it is
 * refused only after the service's buffer (2 s in the emulator, unknown for the real one) fills: about
 * buffer ÷ ε seconds of audio. 120 s of audio without a refusal bounds ε at 1.7 % for a 2-s buffer, and the
 * 2 % margin keeps the known good pace below the service's.
 */

/** The pace of one session, read before every audio request. */
export interface SessionPace {
  /** × real time for the next audio request. */
  rate(): number;
  /** The service accepted `seconds` of audio sent at the last `rate()`. */
  accepted(seconds: number): void;
  /** The service refused the pace (412 Interval Too Brief); the session is over. */
  refused(): void;
  /** The session ended, any way. */
  end(): void;
}

export interface PacePolicy {
  session(): SessionPace;
  /** The pace sessions that do not probe use now: the configured one, or `auto`'s known good one. */
  current(): number;
}

/** What `auto` learnt, for logs and metrics. */
export type PaceEvent =
  | { type: 'raised'; rate: number; probe: number }
  | { type: 'refused'; rate: number; refused: number; settled: boolean }
  | { type: 'settled'; rate: number };

export function fixedPace(rate: number): PacePolicy {
  if (!(rate > 0) || !Number.isFinite(rate))
    throw new RangeError(`pace must be a positive number, not ${rate}`);
  const session: SessionPace = {
    rate: () => rate,
    accepted: () => undefined,
    refused: () => undefined,
    end: () => undefined,
  };
  return { session: () => session, current: () => rate };
}

const DEFAULT_PROBE_AUDIO_SECONDS = 120;
/** Probing stops when the lowest refused pace is within 10 % of the known good one. */
export const SETTLED_RATIO = 1.1;
/** A probe that held is known good less this margin (see above). */
const PROBE_MARGIN = 0.98;
/** A refusal at the known good pace lowers it to this fraction. */
const BACK_OFF = 0.9;
/** Requests after which a session's earlier, faster pace is out of any buffer (50: 12 s of audio). */
const PEAK_REQUESTS = 50;

export interface AutoPaceOptions {
  /** The fastest pace ever tried, × real time. */
  max: number;
  /** Audio a probe must send without a refusal to be known good; default 120 s. */
  probeAudioSeconds?: number;
  onEvent?: (event: PaceEvent) => void;
}

export class AutoPace implements PacePolicy {
  readonly #max: number;
  readonly #probeAudioSeconds: number;
  readonly #onEvent: (event: PaceEvent) => void;
  /** Known good; never below real time, which the service must accept (spec 02). */
  #good = 1;
  #lowestRefused: number | undefined;
  #scout: object | undefined;
  #probe = 1;
  #probeAudio = 0;
  #settledTold = false;

  constructor(options: AutoPaceOptions) {
    if (!(options.max >= 1) || !Number.isFinite(options.max))
      throw new RangeError(`auto pace: max must be a number ≥ 1, not ${options.max}`);
    this.#max = options.max;
    this.#probeAudioSeconds = options.probeAudioSeconds ?? DEFAULT_PROBE_AUDIO_SECONDS;
    this.#onEvent = options.onEvent ?? (() => undefined);
  }

  current(): number {
    return this.#good;
  }

  #settled(): boolean {
    return Math.min(this.#max, this.#lowestRefused ?? Infinity) / this.#good <= SETTLED_RATIO + 1e-9;
  }

  /** The next pace to try, or undefined once settled. */
  #nextProbe(): number | undefined {
    if (this.#settled()) {
      if (!this.#settledTold) {
        this.#settledTold = true;
        this.#onEvent({ type: 'settled', rate: this.#good });
      }
      return undefined;
    }
    return Math.min(this.#max, this.#good * (this.#lowestRefused === undefined ? 2 : SETTLED_RATIO));
  }

  session(): SessionPace {
    const self = {};
    // A refusal is the doing of the fastest pace of the audio still in the service's buffer, not only of
    // the last request's: a session slowed down a moment ago may be refused for what it sent before.
    let peak = 0;
    let sincePeak = 0;
    const isScout = () => this.#scout === self;
    return {
      rate: () => {
        if (isScout() && this.#probe >= (this.#lowestRefused ?? Infinity)) this.#scout = undefined;
        if (!isScout() && this.#scout === undefined) {
          const probe = this.#nextProbe();
          if (probe !== undefined) {
            this.#scout = self;
            this.#probe = probe;
            this.#probeAudio = 0;
          }
        }
        const rate = isScout() ? this.#probe : this.#good;
        if (rate >= peak || ++sincePeak > PEAK_REQUESTS) {
          peak = rate;
          sincePeak = 0;
        }
        return rate;
      },
      accepted: (seconds) => {
        if (!isScout()) return;
        this.#probeAudio += seconds;
        if (this.#probeAudio < this.#probeAudioSeconds) return;
        this.#scout = undefined;
        this.#good = Math.max(this.#good, this.#probe * PROBE_MARGIN);
        this.#onEvent({ type: 'raised', rate: this.#good, probe: this.#probe });
      },
      refused: () => {
        if (isScout()) this.#scout = undefined;
        this.#lowestRefused = Math.min(this.#lowestRefused ?? Infinity, peak);
        // Sessions refused together at one pace lower it once, not once each.
        if (peak <= this.#good) this.#good = Math.max(1, Math.min(this.#good, peak * BACK_OFF));
        this.#settledTold = false;
        this.#onEvent({ type: 'refused', rate: this.#good, refused: peak, settled: this.#settled() });
      },
      end: () => {
        if (isScout()) this.#scout = undefined;
      },
    };
  }
}
