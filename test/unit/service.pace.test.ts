/**
 * `speed: auto` (service/pace.ts) against a simulated service: sessions send 240-ms requests at the pace
 * they are given; the service works through each session's audio at `ceiling` × real time with a 2-s
 * buffer (the emulator's leaky bucket) and refuses a request that would overflow it, ending the session,
 * which then starts again where it stopped (as recognizeSession restarts it).
 */
import { describe, expect, it } from 'vitest';
import { AutoPace, fixedPace, SETTLED_RATIO, type PaceEvent, type PacePolicy } from '../../service/pace.ts';
import { Pacer } from '../../service/pacer.ts';

const CHUNK = 0.24;
const BUFFER = 2;

interface Outcome {
  /** Pace of the sessions that did not probe, at the end. */
  settledAt: number;
  refusals: number;
  /** Refusals of sessions that were not probing: what a settled pace should never cost. */
  refusalsOfOthers: number;
  audioSeconds: number;
  wallSeconds: number;
}

/** `streams` sessions at once, each recognizing `sessionSeconds` of audio, `sessions` in all. */
function simulate(
  pace: PacePolicy,
  ceiling: (t: number) => number,
  options: { streams: number; sessions: number; sessionSeconds: number },
): Outcome {
  interface Stream {
    pace: ReturnType<PacePolicy['session']>;
    at: number;
    received: number;
    position: number;
    positionAt: number;
    left: number;
    probing: boolean;
  }
  let started = 0;
  let refusals = 0;
  let refusalsOfOthers = 0;
  let audio = 0;
  let end = 0;
  const open = (at: number, left: number): Stream => ({
    pace: pace.session(),
    at,
    received: 0,
    position: 0,
    positionAt: at,
    left,
    probing: false,
  });
  const streams: Stream[] = [];
  for (; started < options.streams; started++) streams.push(open(0, options.sessionSeconds));
  while (streams.length > 0) {
    streams.sort((a, b) => a.at - b.at);
    const s = streams[0]!;
    const t = s.at;
    const rate = s.pace.rate();
    s.probing = rate > pace.current() + 1e-9;
    s.position = Math.min(s.received, s.position + (t - s.positionAt) * ceiling(t));
    s.positionAt = t;
    if (s.received + CHUNK - s.position > BUFFER + 1e-9) {
      refusals++;
      if (!s.probing) refusalsOfOthers++;
      s.pace.refused();
      streams[0] = open(t + 0.2, s.left); // resumes where it stopped after a short wait
      continue;
    }
    s.pace.accepted(CHUNK);
    s.received += CHUNK;
    s.left -= CHUNK;
    audio += CHUNK;
    s.at = t + CHUNK / rate;
    if (s.left <= 1e-9) {
      s.pace.end();
      end = Math.max(end, s.at);
      if (started < options.sessions) {
        streams[0] = open(s.at, options.sessionSeconds);
        started++;
      } else streams.shift();
    }
  }
  return { settledAt: pace.current(), refusals, refusalsOfOthers, audioSeconds: audio, wallSeconds: end };
}

describe('auto pace against a simulated service', () => {
  const night = { streams: 8, sessions: 32, sessionSeconds: 900 };

  it.each([18, 4.5, 1.3])('finds a ceiling of %s× within 10 percent, only probing sessions refused', (c) => {
    const events: PaceEvent[] = [];
    const pace = new AutoPace({ max: 32, onEvent: (e) => events.push(e) });
    const out = simulate(pace, () => c, night);
    expect(out.settledAt).toBeLessThanOrEqual(c);
    expect(out.settledAt).toBeGreaterThanOrEqual(c / SETTLED_RATIO);
    expect(out.refusalsOfOthers).toBe(0);
    // Doubling then bisecting: a handful of refusals for the whole process, not one per session.
    expect(out.refusals).toBeLessThanOrEqual(3);
    expect(out.refusals / (out.audioSeconds / 3600)).toBeLessThanOrEqual(1);
    expect(events.filter((e) => e.type === 'settled')).toHaveLength(1);
  });

  it('stops at max when the service takes anything, without a refusal', () => {
    const pace = new AutoPace({ max: 12 });
    const out = simulate(pace, () => 1000, night);
    expect(out.refusals).toBe(0);
    expect(out.settledAt).toBeGreaterThanOrEqual(12 / SETTLED_RATIO);
    expect(out.settledAt).toBeLessThanOrEqual(12);
  });

  it('a real-time-only service: never below real time, settled after a few refusals', () => {
    const pace = new AutoPace({ max: 32 });
    const out = simulate(pace, () => 1, { streams: 4, sessions: 8, sessionSeconds: 600 });
    expect(out.settledAt).toBe(1);
    expect(out.refusals).toBeLessThanOrEqual(4);
    expect(out.refusalsOfOthers).toBe(0);
  });

  it('follows a service that gets slower: sessions refused together lower the pace once each round', () => {
    const pace = new AutoPace({ max: 32 });
    const slower = (t: number) => (t < 200 ? 16 : 9);
    const out = simulate(pace, slower, { streams: 8, sessions: 64, sessionSeconds: 900 });
    expect(out.settledAt).toBeLessThanOrEqual(9);
    expect(out.settledAt).toBeGreaterThanOrEqual(9 / SETTLED_RATIO / SETTLED_RATIO);
    // Every open session was refused when it slowed, a few rounds; not a cascade to real time.
    expect(out.refusalsOfOthers).toBeGreaterThan(0);
    expect(out.refusals).toBeLessThanOrEqual(8 * 6 + 6);
  });

  it('fixed pace is what it says, and refuses nonsense', () => {
    expect(fixedPace(20).session().rate()).toBe(20);
    expect(() => fixedPace(0)).toThrow(RangeError);
    expect(() => new AutoPace({ max: 0.5 })).toThrow(RangeError);
  });
});

describe('Pacer with a pace that changes', () => {
  it('reads the pace at every send: the interval after a send is 240 ms ÷ the pace then', () => {
    let now = 0;
    let rate = 1;
    const pacer = new Pacer(
      240,
      () => rate,
      () => now,
    );
    pacer.sent();
    expect(pacer.delayMs()).toBe(240);
    now = 240;
    rate = 4;
    pacer.sent();
    expect(pacer.delayMs()).toBe(60);
    rate = 0;
    expect(() => pacer.sent()).toThrow(RangeError);
  });
});
