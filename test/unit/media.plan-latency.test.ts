/**
 * The latency plan (activities/media/plan.ts `strategy: 'latency'`): a same-day call cut into as many
 * pieces as the account has sessions free, only in silences long enough (never inside a phrase), with a
 * bounded number of sessions; the throughput plan when sessions wait or none are free.
 */
import { describe, expect, it } from 'vitest';
import { generateCallScript } from '../../activities/media/call-script.ts';
import {
  LATENCY_CUT_SILENCE_SECONDS,
  latencyChoice,
  planSessions,
  type PlannedSessions,
} from '../../activities/media/plan.ts';
import { speechAndSilences } from '../helpers/script-silences.ts';
import {
  LATENCY_MIN_SESSION_SECONDS,
  planOptionsSchema,
  type PlanOptions,
  type SessionRoom,
  type Silence,
  type Track,
} from '../../schemas/plan.ts';

const STEREO: Track[] = [
  { track: 0, channel: 0, sourceChannels: [0], speaker: 'agent' },
  { track: 1, channel: 1, sourceChannels: [1], speaker: 'customer' },
];
const MONO: Track[] = [{ track: 0, channel: 0, sourceChannels: [0], speaker: 'mixed' }];

const room = (free: number, waiting = 0, limit = 64): SessionRoom => ({
  free,
  waiting,
  limit,
  source: 'worker',
});

function scriptCall(minutes: number, stereo: boolean, seed: number) {
  const durationSeconds = minutes * 60;
  const script = generateCallScript({ durationSeconds, stereo, seed });
  return { durationSeconds, ...speechAndSilences(script, durationSeconds) };
}

/** Every session boundary of a track (not the recording's ends) lies in silence, away from every phrase. */
function expectCutsOutsideSpeech(planned: PlannedSessions, speech: { start: number; end: number }[][]) {
  for (const s of planned.sessions) {
    for (const t of [s.start, s.end]) {
      if (t === 0 || t === planned.durationSeconds) continue;
      const inside = speech[s.track]!.find(
        (p) =>
          t > p.start - LATENCY_CUT_SILENCE_SECONDS / 2 + 1e-6 &&
          t < p.end + LATENCY_CUT_SILENCE_SECONDS / 2 - 1e-6,
      );
      expect(inside, `session ${s.index} boundary at ${t} s`).toBeUndefined();
    }
  }
}

const plan = (
  input: { durationSeconds: number; tracks: Track[]; silences: Silence[][] },
  options: PlanOptions,
) => planSessions({ ...input, options });

describe('latency plan: cuts and phrases', () => {
  it('cuts a 30-minute stereo call into the free sessions, in silence only, none under the floor', () => {
    const call = scriptCall(30, true, 3);
    const planned = plan({ ...call, tracks: STEREO }, { strategy: 'latency', room: room(40) });
    expect(planned.strategy).toBe('latency');
    expect(planned.latency).toMatchObject({ use: true, pieces: 40 });
    expect(planned.sessions.length).toBeGreaterThanOrEqual(30);
    expect(planned.sessions.length).toBeLessThanOrEqual(40);
    for (const s of planned.sessions) {
      expect(s.cut).not.toBe('hard');
      if (s.cut === 'silence' && s.end < planned.durationSeconds) {
        expect(s.silence!.end - s.silence!.start).toBeGreaterThanOrEqual(LATENCY_CUT_SILENCE_SECONDS - 1e-9);
        expect(s.end).toBeGreaterThan(s.silence!.start);
        expect(s.end).toBeLessThan(s.silence!.end);
      }
    }
    expectCutsOutsideSpeech(planned, call.speech);
    // The call takes about its longest piece: near the even split, far under the throughput plan's.
    const longest = Math.max(...planned.sessions.map((s) => s.end - s.start));
    const throughput = plan({ ...call, tracks: STEREO }, { strategy: 'balanced', budget: 16 });
    const longestThroughput = Math.max(...throughput.sessions.map((s) => s.end - s.start));
    expect(longest).toBeLessThan(1.5 * planned.targetSessionSeconds!);
    expect(longest).toBeLessThan(longestThroughput / 2);
  });

  it('keeps every phrase whole on mono and stereo calls of 2 to 30 minutes', () => {
    for (const [minutes, stereo, seed] of [
      [2, true, 1],
      [5, false, 2],
      [10, true, 4],
      [30, false, 5],
    ] as const) {
      const call = scriptCall(minutes, stereo, seed);
      const planned = plan(
        { ...call, tracks: stereo ? STEREO : MONO },
        { strategy: 'latency', room: room(64) },
      );
      expect(planned.strategy, `${minutes} min`).toBe('latency');
      expect(planned.sessions.length).toBeGreaterThan(1);
      expectCutsOutsideSpeech(planned, call.speech);
      // Bounded: never more pieces than the floor allows of what is streamed.
      const streamed = planned.sessions.reduce((sum, s) => sum + (s.end - s.start), 0);
      expect(planned.sessions.length).toBeLessThanOrEqual(Math.floor(streamed / LATENCY_MIN_SESSION_SECONDS));
    }
  });

  it('never cuts in a gap shorter than the latency minimum, even where the even split falls in one', () => {
    // Speech everywhere with 0.35-s gaps every 5 s, and a 1-s gap every 100 s.
    const durationSeconds = 600;
    const silences: Silence[] = [];
    for (let t = 5; t < durationSeconds; t += 5) {
      const long = t % 100 === 0;
      silences.push({ start: t, end: t + (long ? 1 : 0.35) });
    }
    const planned = plan(
      { durationSeconds, tracks: MONO, silences: [silences] },
      { strategy: 'latency', room: room(20) },
    );
    expect(planned.strategy).toBe('latency');
    const cuts = planned.sessions.filter((s) => s.end < durationSeconds);
    expect(cuts.length).toBeGreaterThan(0);
    for (const s of cuts) {
      expect(s.cut).toBe('silence');
      expect(s.silence!.end - s.silence!.start).toBe(1);
    }
    // The only usable gaps are 100 s apart: the pieces are the 100-s stretches, however many are free.
    expect(planned.sessions.length).toBe(6);
  });
});

describe('latency plan: bounds and fallbacks', () => {
  it('is bounded by the room: four free sessions, at most four pieces', () => {
    const call = scriptCall(30, true, 6);
    const planned = plan({ ...call, tracks: STEREO }, { strategy: 'latency', room: room(4) });
    expect(planned.strategy).toBe('latency');
    expect(planned.sessions.length).toBeLessThanOrEqual(4);
    expectCutsOutsideSpeech(planned, call.speech);
  });

  it('falls back to the throughput plan when sessions wait, when too few are free, or the room is unknown', () => {
    const call = scriptCall(10, true, 7);
    const input = { ...call, tracks: STEREO };
    const balanced = plan(input, { strategy: 'balanced' });
    for (const [options, reason] of [
      [{ room: room(50, 3) }, /3 recognition sessions wait for a slot/],
      [{ room: room(1) }, /1 of 64 sessions free/],
      [{}, /not known/],
    ] as const) {
      const planned = plan(input, { strategy: 'latency', ...options });
      expect(planned.strategy).toBe('balanced');
      expect(planned.latency).toMatchObject({ use: false, reason: expect.stringMatching(reason) });
      expect(planned.sessions).toEqual(balanced.sessions);
    }
    // The throughput plan may be fixed (a deployment's configured strategy).
    const fixed = plan(input, { strategy: 'latency', throughputStrategy: 'fixed', room: room(0) });
    expect(fixed.strategy).toBe('fixed');
    expect(fixed.sessions).toEqual(plan(input, { strategy: 'fixed' }).sessions);
  });

  it('leaves a call too short for two pieces whole', () => {
    const choice = latencyChoice(60, planOptionsSchema.parse({ strategy: 'latency', room: room(64) }));
    expect(choice).toMatchObject({ use: false, reason: expect.stringMatching(/too short/) });
  });
});
