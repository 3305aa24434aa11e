/**
 * The file plan (activities/media/file-pieces.ts through plan.ts, `recognition: 'file'`): pieces of at
 * most 58 s cut only in silences of at least 0.5 s, away from speech, covering every streamed span with
 * no gap or overlap; a stretch with no such silence within 58 s goes to a stream session, not cut blindly.
 */
import { describe, expect, it } from 'vitest';
import { generateCallScript } from '../../activities/media/call-script.ts';
import { planSessions } from '../../activities/media/plan.ts';
import { speechAndSilences } from '../helpers/script-silences.ts';
import type { Silence, Track } from '../../schemas/plan.ts';
import { FILE_CUT_SILENCE_SECONDS, FILE_PIECE_MAX_SECONDS } from '../../schemas/recognition.ts';

const STEREO: Track[] = [
  { track: 0, channel: 0, sourceChannels: [0], speaker: 'agent' },
  { track: 1, channel: 1, sourceChannels: [1], speaker: 'customer' },
];
const MONO: Track[] = [{ track: 0, channel: 0, sourceChannels: [0], speaker: 'mixed' }];

function call(minutes: number, stereo: boolean, seed: number) {
  const durationSeconds = minutes * 60;
  const script = generateCallScript({ durationSeconds, stereo, seed });
  return { durationSeconds, ...speechAndSilences(script, durationSeconds) };
}

/**
 * Every session of a track starts on the 240-ms request grid of its span (a span starts after a skipped
 * silence): where the service's framing of streams and pieces agrees.
 */
function expectOnRequestGrid(
  sessions: { index: number; track: number; start: number; end: number }[],
  what: string,
) {
  const tracks = new Set(sessions.map((s) => s.track));
  for (const track of tracks) {
    let base = 0;
    let prevEnd: number | undefined;
    for (const s of sessions.filter((x) => x.track === track)) {
      if (s.start !== prevEnd) base = s.start;
      expect(Math.round((s.start - base) * 1000) % 240, `${what}: session ${s.index} at ${s.start} s`).toBe(
        0,
      );
      prevEnd = s.end;
    }
  }
}

describe('stream and file plans: one request grid', () => {
  it("stream plans cut on their span's request grid too, as pieces do (the same framing, the same utterances)", () => {
    // A 10-ms difference between modes came from a balanced plan's cut off this grid.
    const c = call(30, false, 5);
    const room = { free: 40, waiting: 0, limit: 64, source: 'worker' as const };
    for (const options of [
      { strategy: 'balanced' as const, budget: 16 },
      { strategy: 'fixed' as const, maxSessionSeconds: 200 },
      { strategy: 'latency' as const, room },
    ]) {
      const planned = planSessions({ ...c, tracks: MONO, options });
      expect(planned.sessions.length, options.strategy).toBeGreaterThan(4);
      expectOnRequestGrid(planned.sessions, options.strategy);
    }
  });
});

describe('file plan: piece lengths', () => {
  it('cuts calls of 2 to 30 minutes into pieces of at most 58 s, only in silence, covering each track', () => {
    for (const [minutes, stereo, seed] of [
      [2, true, 1],
      [10, false, 2],
      [30, true, 3],
    ] as const) {
      const c = call(minutes, stereo, seed);
      const tracks = stereo ? STEREO : MONO;
      const planned = planSessions({ ...c, tracks, options: { recognition: 'file' } });
      const pieces = planned.sessions.filter((s) => s.recognition === 'file');
      expect(pieces.length, `${minutes} min`).toBeGreaterThanOrEqual(Math.floor((minutes * 60) / 58));
      for (const s of planned.sessions) {
        // On the plan's millisecond grid (a difference of two grid times carries a float's error).
        expect(Math.round((s.end - s.start) * 1000), `piece ${s.index}`).toBeLessThanOrEqual(
          FILE_PIECE_MAX_SECONDS * 1000,
        );
        expect(s.recognition).toBe('file');
        for (const t of [s.start, s.end]) {
          if (t === 0 || t === planned.durationSeconds) continue;
          const inside = c.speech[s.track]!.find(
            (p) =>
              t > p.start - FILE_CUT_SILENCE_SECONDS / 2 + 1e-6 &&
              t < p.end + FILE_CUT_SILENCE_SECONDS / 2 - 1e-6,
          );
          expect(inside, `${minutes} min: piece ${s.index} boundary at ${t} s`).toBeUndefined();
        }
      }
      // Every cut on the request grid of a stream from its span's start (a span starts after a skipped silence).
      for (const track of tracks) {
        let base = 0;
        let prevEnd: number | undefined;
        for (const s of planned.sessions.filter((x) => x.track === track.track)) {
          if (s.start !== prevEnd) base = s.start;
          expect(Math.round((s.start - base) * 1000) % 240, `piece ${s.index}`).toBe(0);
          prevEnd = s.end;
        }
      }
      // No gap, no overlap within a track's streamed spans: each piece starts where the one before ended,
      // or after a skipped silence.
      for (const track of tracks) {
        const own = planned.sessions.filter((s) => s.track === track.track);
        for (let i = 1; i < own.length; i++) expect(own[i]!.start).toBeGreaterThanOrEqual(own[i - 1]!.end);
        const covered = own.reduce((sum, s) => sum + (s.end - s.start), 0);
        const skipped = planned.skipped[track.track]!.reduce((sum, s) => sum + (s.end - s.start), 0);
        expect(covered + skipped).toBeCloseTo(planned.durationSeconds, 6);
      }
    }
  });
});

describe('file plan: where it cuts', () => {
  it('a stretch with no silence within 58 s is one stream session, not cut blindly', () => {
    // 20 s of speech with pauses, 90 s of continuous tone, 20 s more speech with pauses.
    const silences: Silence[] = [
      { start: 5, end: 6 },
      { start: 12, end: 13 },
      { start: 19.5, end: 20.5 },
      { start: 110.5, end: 111.5 },
      { start: 120, end: 121 },
    ];
    const planned = planSessions({
      durationSeconds: 130,
      tracks: MONO,
      silences: [silences],
      options: { recognition: 'file' },
    });
    const streamed = planned.sessions.filter((s) => s.recognition === 'stream');
    expect(streamed).toHaveLength(1);
    expect(streamed[0]!.start).toBeLessThanOrEqual(20.5);
    expect(streamed[0]!.end).toBeGreaterThanOrEqual(110.5);
    expect(streamed[0]!.end).toBeLessThanOrEqual(111.5);
    expect(
      planned.sessions.every((s) => s.recognition === 'stream' || s.end - s.start <= FILE_PIECE_MAX_SECONDS),
    ).toBe(true);
    expect(planned.sessions.at(-1)!.end).toBe(130);
  });

  it('a silence shorter than 0.5 s is never cut in', () => {
    const silences: Silence[] = [
      { start: 30, end: 30.4 },
      { start: 50, end: 50.45 },
      { start: 70, end: 71 },
    ];
    const planned = planSessions({
      durationSeconds: 100,
      tracks: MONO,
      silences: [silences],
      options: { recognition: 'file' },
    });
    // Nothing to cut in before 58 s: the stretch up to the silence at 70 s is streamed.
    expect(planned.sessions.map((s) => [s.recognition, s.start, s.end])).toEqual([
      // 70.56: the 240-ms request grid's point nearest the silence's middle.
      ['stream', 0, 70.56],
      ['file', 70.56, 100],
    ]);
  });

  it('stream mode is unchanged: no session says file', () => {
    const c = call(10, true, 2);
    const planned = planSessions({ ...c, tracks: STEREO, options: { strategy: 'balanced' } });
    expect(planned.sessions.some((s) => s.recognition !== undefined)).toBe(false);
  });
});
