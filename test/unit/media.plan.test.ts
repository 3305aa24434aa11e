import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MIXED_SPEAKER, panFilter, planTracks } from '../../activities/media/channels.ts';
import { MediaError } from '../../activities/media/errors.ts';
import { runFfmpeg } from '../../activities/media/ffmpeg.ts';
import { generateCallScript } from '../../activities/media/call-script.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { balancedTargetSeconds, planRecording, planSessions } from '../../activities/media/plan.ts';
import { probeRecording } from '../../activities/media/probe.ts';
import { intersectSilences } from '../../activities/media/silence.ts';
import { plainInput } from '../../activities/media/media-input.ts';
import { analyzeChannels } from '../../activities/media/channel-analysis.ts';

/** The silences the plan cuts in: the channel analysis's, at the default bound and minimum length. */
async function silencesOf(path: string, channels: number, durationSeconds: number) {
  const input = plainInput(path, undefined);
  return (await analyzeChannels(input, { channels, noiseDb: -30, minSilenceSeconds: 0.3, durationSeconds }))
    .silences;
}
import {
  planOptionsSchema,
  sessionPlanSchema,
  type PlanSession,
  type Silence,
  type Track,
} from '../../schemas/plan.ts';
import { makeTempDir, periodicSilences, sparseScript } from '../helpers/media-fixtures.ts';

const tmp = makeTempDir();
/**
 * Tests that analyse tens of minutes of audio (each analysis of 50 minutes of 8-kHz audio is seconds of
 * CPU, twice per test): a bound far above their work even on a machine busy with other tests.
 */
const LONG_AUDIO_MS = 600_000;
afterAll(() => tmp.cleanup());

const MONO: Track[] = [{ track: 0, channel: 0, sourceChannels: [0], speaker: 'mixed' }];
const STEREO: Track[] = [
  { track: 0, channel: 0, sourceChannels: [0], speaker: 'agent' },
  { track: 1, channel: 1, sourceChannels: [1], speaker: 'customer' },
];

/**
 * The plan's promises: per track the sessions start at 0, meet end to end, end at the recording's end,
 * none is longer than the limit, every silence cut lies inside its silence, and a hard cut only happens
 * when the search window held no silence. The exception: a silence of at least `skip` seconds (the
 * default `skipSilenceSeconds`) is left out, and the sessions on both sides end and start inside it.
 */
function checkPlan(
  sessions: PlanSession[],
  duration: number,
  silencesPerTrack: Silence[][],
  limits: { max: number; window: number; skip?: number },
) {
  const skip = limits.skip ?? 60;
  const skippable = (z: Silence | undefined | null) => !!z && z.end - z.start >= skip;
  const inside = (t: number, z: Silence) => t >= z.start && t <= z.end;
  expect(sessions.map((s) => s.index)).toEqual(sessions.map((_, i) => i));
  for (const [track, silences] of silencesPerTrack.entries()) {
    const own = sessions.filter((s) => s.track === track);
    expect(own.length).toBeGreaterThan(0);
    const leading = silences.find((z) => z.start === 0);
    if (own[0]!.start !== 0) expect(skippable(leading) && inside(own[0]!.start, leading!)).toBe(true);
    const last = own.at(-1)!;
    if (last.end !== duration) {
      expect(last.cut).toBe('silence');
      expect(skippable(last.silence) && last.silence!.end >= duration).toBe(true);
    } else expect(last.cut).toBe('end');
    own.forEach((s, i) => {
      expect(s.end).toBeGreaterThan(s.start);
      expect(s.end - s.start).toBeLessThanOrEqual(limits.max + 1e-9);
      const before = own[i - 1];
      if (before && s.start !== before.end) {
        // A skipped silence between them: the earlier session ends in it, the later starts in it.
        expect(skippable(before.silence)).toBe(true);
        expect(inside(s.start, before.silence!) && s.start > before.end).toBe(true);
      }
      // On the millisecond grid: N s of mu-law is a whole number of bytes.
      expect(Math.round(s.end * 1000)).toBeCloseTo(s.end * 1000, 6);
      if (s.cut === 'silence') {
        expect(s.silence).not.toBeNull();
        expect(s.end).toBeGreaterThan(s.silence!.start);
        expect(s.end).toBeLessThan(s.silence!.end);
      }
      if (s.cut === 'hard') {
        const windowStart = s.end - limits.window;
        expect(silences.some((z) => z.end > windowStart + 0.002 && z.start < s.end - 0.002)).toBe(false);
      }
    });
  }
}

describe('planSessions (synthetic silence lists)', () => {
  // Speech 3.5 s then 1.5 s of silence, every 5 s: a busy call.
  const busy = (d: number) => periodicSilences(d, 5, 3.5);
  const limits = { max: 3000, window: 60 };

  it.each([10, 2999, 3000, 3001, 7200, 36000])(
    '%i s: covers the recording, no session over 3,000 s, cuts in silence',
    (d) => {
      const silences = [busy(d)];
      const { sessions } = planSessions({ durationSeconds: d, tracks: MONO, silences });
      checkPlan(sessions, d, silences, limits);
      expect(sessions.filter((s) => s.cut === 'hard')).toHaveLength(0);
      if (d <= 3000) expect(sessions).toHaveLength(1);
      else expect(sessions.length).toBeGreaterThanOrEqual(Math.ceil(d / 3000));
      // Fixed strategy: every session but the last is within the window before the limit.
      for (const s of sessions.slice(0, -1)) expect(s.end - s.start).toBeGreaterThanOrEqual(3000 - 60);
    },
  );

  it('3,001 s: two sessions, the first ending in the silence before 3,000 s', () => {
    const { sessions } = planSessions({ durationSeconds: 3001, tracks: MONO, silences: [busy(3001)] });
    expect(sessions).toHaveLength(2);
    expect(sessions[0]).toMatchObject({
      cut: 'silence',
      silence: { start: 2998.5, end: 3000 },
      end: 2999.28, // the middle's nearest point of the 240-ms request grid
    });
  });

  it('chooses the longest silence of the window, not the last', () => {
    const silences = [
      [
        { start: 2950, end: 2952 },
        { start: 2990, end: 2990.5 },
      ],
    ];
    const { sessions } = planSessions({ durationSeconds: 4000, tracks: MONO, silences });
    expect(sessions[0]).toMatchObject({ end: 2951.04, cut: 'silence' });
    checkPlan(sessions, 4000, silences, limits);
  });

  it('hard-cuts at the limit, flagged, when the window holds no silence', () => {
    const silences = [[{ start: 100, end: 150 }]];
    const { sessions } = planSessions({ durationSeconds: 7200, tracks: MONO, silences });
    expect(sessions.map((s) => [s.start, s.end, s.cut])).toEqual([
      [0, 3000, 'hard'],
      [3000, 6000, 'hard'],
      [6000, 7200, 'end'],
    ]);
    checkPlan(sessions, 7200, silences, limits);
  });

  it('uses a silence that only partly overlaps the window, cutting inside both', () => {
    const silences = [[{ start: 2930, end: 2945 }]];
    const { sessions } = planSessions({ durationSeconds: 3500, tracks: MONO, silences });
    expect(sessions[0]!.end).toBe(2942.4);
  });

  it('honours a lower maxSessionSeconds and floors the length to the millisecond grid', () => {
    const d = 1000.0004;
    const silences = [busy(d)];
    const { sessions, durationSeconds } = planSessions({
      durationSeconds: d,
      tracks: STEREO,
      silences: [silences[0]!, silences[0]!],
      options: { maxSessionSeconds: 120, searchWindowSeconds: 20 },
    });
    expect(durationSeconds).toBe(1000);
    checkPlan(sessions, 1000, [silences[0]!, silences[0]!], { max: 120, window: 20 });
    expect(sessions.filter((s) => s.track === 1).length).toBeGreaterThanOrEqual(9);
  });

  it('rejects options beyond the service limit', () => {
    expect(() =>
      planSessions({
        durationSeconds: 10,
        tracks: MONO,
        silences: [[]],
        options: { maxSessionSeconds: 3001 },
      }),
    ).toThrow(MediaError);
  });
});

describe('planSessions: balanced strategy', () => {
  it('a 2-hour stereo call with a budget of 16: about 8 sessions of 15 min per channel', () => {
    const silences = [periodicSilences(7200, 5, 3.5), periodicSilences(7200, 7, 4)];
    const { sessions, targetSessionSeconds } = planSessions({
      durationSeconds: 7200,
      tracks: STEREO,
      silences,
      options: { strategy: 'balanced', budget: 16 },
    });
    expect(targetSessionSeconds).toBe(900);
    checkPlan(sessions, 7200, silences, { max: 3000, window: 60 });
    for (const track of [0, 1]) {
      const own = sessions.filter((s) => s.track === track);
      expect(own).toHaveLength(8);
      for (const s of own) expect(Math.abs(s.end - s.start - 900)).toBeLessThanOrEqual(60);
    }
    expect(sessions.length).toBeLessThanOrEqual(16);
  });

  it('never exceeds 3,000 s (10 h stereo, budget 16): full rounds of the budget; never under the floor', () => {
    const silences = [periodicSilences(36000, 5, 3.5), periodicSilences(36000, 5, 3.5)];
    const long = planSessions({
      durationSeconds: 36000,
      tracks: STEREO,
      silences,
      options: { strategy: 'balanced', budget: 16 },
    });
    // 72,000 s over 16 sessions would be 4,500 s each: two rounds of 16 sessions of 2,250 s, where
    // sessions at the 3,000-s limit (26 of them) left the second round 10 sessions long.
    expect(long.targetSessionSeconds).toBe(2250);
    checkPlan(long.sessions, 36000, silences, { max: 3000, window: 60 });
    expect(long.sessions).toHaveLength(32);

    const short = planSessions({
      durationSeconds: 600,
      tracks: MONO,
      silences: [periodicSilences(600, 5, 3.5)],
      options: { strategy: 'balanced', budget: 64, minSessionSeconds: 120 },
    });
    expect(short.targetSessionSeconds).toBe(120);
    expect(short.sessions).toHaveLength(5);
    for (const s of short.sessions) expect(s.end - s.start).toBeGreaterThan(90);
  });

  it('cuts a short call no finer than the floor allows (95 s with a 60 s floor is one session)', () => {
    const plan = (durationSeconds: number) =>
      planSessions({
        durationSeconds,
        tracks: MONO,
        silences: [periodicSilences(durationSeconds, 5, 3.5)],
        options: { strategy: 'balanced', budget: 16, minSessionSeconds: 60 },
      }).sessions;
    expect(plan(95)).toHaveLength(1);
    expect(plan(119)).toHaveLength(1);
    const two = plan(130);
    expect(two).toHaveLength(2);
    for (const s of two) expect(s.end - s.start).toBeGreaterThanOrEqual(55);
  });

  it('balancedTargetSeconds spreads the audio of all tracks over the budget', () => {
    const options = planOptionsSchema.parse({ strategy: 'balanced', budget: 10, minSessionSeconds: 30 });
    expect(balancedTargetSeconds(3000, 2, options)).toBe(600);
    expect(balancedTargetSeconds(100, 1, options)).toBe(30);
    const budget16 = planOptionsSchema.parse({ strategy: 'balanced', budget: 16 });
    expect(balancedTargetSeconds(48000, 1, budget16)).toBe(3000); // exactly one round at the limit
    expect(balancedTargetSeconds(50000, 1, budget16)).toBe(1562.5); // two rounds
  });
});

describe('channels → tracks', () => {
  it('mono is one speaker; stereo is agent and customer by default, remappable', () => {
    expect(planTracks(1)).toEqual([{ track: 0, channel: 0, sourceChannels: [0], speaker: MIXED_SPEAKER }]);
    expect(planTracks(2).map((t) => [t.channel, t.speaker])).toEqual([
      [0, 'agent'],
      [1, 'customer'],
    ]);
    expect(planTracks(2, { speakers: ['customer', 'agent'] }).map((t) => t.speaker)).toEqual([
      'customer',
      'agent',
    ]);
  });

  it('mixes stereo down on request, and more than two channels unless channels are picked', () => {
    expect(planTracks(2, { mode: 'mix' })).toEqual([
      { track: 0, channel: 'mix', sourceChannels: [0, 1], speaker: MIXED_SPEAKER },
    ]);
    expect(planTracks(4)).toEqual([
      { track: 0, channel: 'mix', sourceChannels: [0, 1, 2, 3], speaker: MIXED_SPEAKER },
    ]);
    expect(planTracks(4, { pick: [2, 3] }).map((t) => [t.track, t.channel, t.speaker])).toEqual([
      [0, 2, 'channel-2'],
      [1, 3, 'channel-3'],
    ]);
    expect(planTracks(4, { pick: [1, 3], mode: 'mix' })[0]!.sourceChannels).toEqual([1, 3]);
  });

  it('rejects a channel the file does not have', () => {
    expect(() => planTracks(2, { pick: [2] })).toThrow(/channel 2 was picked but the recording has 2/);
    expect(() => planTracks(2, { pick: [1, 1] })).toThrow(MediaError);
  });

  it('pans one channel, or mixes at equal gain', () => {
    expect(panFilter({ sourceChannels: [1] })).toBe('pan=mono|c0=c1');
    expect(panFilter({ sourceChannels: [0, 1] })).toBe('pan=mono|c0=0.5*c0+0.5*c1');
  });

  it('a mix is silent only where all its channels are', () => {
    expect(
      intersectSilences([
        [
          { start: 0, end: 5 },
          { start: 8, end: 12 },
        ],
        [
          { start: 3, end: 9 },
          { start: 11, end: 20 },
        ],
      ]),
    ).toEqual([
      { start: 3, end: 5 },
      { start: 8, end: 9 },
      { start: 11, end: 12 },
    ]);
  });
});

describe('planRecording (real recordings)', () => {
  it('10 s stereo call: one session per channel; silences found per channel', async () => {
    const path = join(tmp.dir, 'ten.wav');
    const script = generateCallScript({ durationSeconds: 10, seed: 5 });
    await renderFixture(script, path, { sampleRate: 16000 });
    const probe = await probeRecording(path);
    const perChannel = await silencesOf(path, 2, 10);
    // Each phrase of a channel falls outside that channel's silences.
    script.channels.forEach((c, i) => {
      for (const p of c.phrases)
        expect(perChannel[i]!.some((s) => s.start < p.start + 0.1 && s.end > p.start + 0.1)).toBe(false);
      expect(perChannel[i]!.length).toBeGreaterThan(0);
    });
    const plan = await planRecording(probe);
    expect(sessionPlanSchema.parse(plan)).toEqual(plan);
    expect(plan.sessions.map((s) => [s.track, s.speaker, s.start, s.end, s.cut])).toEqual([
      [0, 'agent', 0, 10, 'end'],
      [1, 'customer', 0, 10, 'end'],
    ]);
  });

  // The real default limit on a real recording: one boundary case (2,999 s is one session on the silence
  // lists above, where it costs nothing).
  it('3,001 s mono 8 kHz: cuts in silence and covers the recording', { timeout: LONG_AUDIO_MS }, async () => {
    const d = 3001;
    const path = join(tmp.dir, `m${d}.wav`);
    await renderFixture(sparseScript(d, 20), path);
    const probe = await probeRecording(path);
    const plan = await planRecording(probe);
    const silences = await silencesOf(path, 1, d);
    checkPlan(plan.sessions, d, silences, { max: 3000, window: 60 });
    expect(plan.sessions).toHaveLength(2);
    expect(plan.sessions[0]!.cut).toBe('silence');
  });

  it('3,001 s of continuous tone: a hard cut at 3,000 s, flagged', { timeout: LONG_AUDIO_MS }, async () => {
    const path = join(tmp.dir, 'tone.wav');
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'sine=f=440:sample_rate=8000:d=3001', '-y', path]);
    const plan = await planRecording(await probeRecording(path));
    expect(plan.sessions.map((s) => [s.start, s.end, s.cut])).toEqual([
      [0, 3000, 'hard'],
      [3000, 3001, 'end'],
    ]);
  });

  // A long recording's plan, at a size that takes seconds: what matters is many sessions cut in a real
  // recording's silences, so the session limit is lowered rather than the recording made ten hours long
  // (the planner's arithmetic at 10 h is tested on silence lists above).
  it(
    'a long recording cut into many sessions (40 min mono, sessions ≤ 200 s): none over the limit, all cut in silence',
    { timeout: LONG_AUDIO_MS },
    async () => {
      const d = 2400;
      const path = join(tmp.dir, 'forty-minutes.wav');
      await renderFixture(sparseScript(d, 30), path);
      const probe = await probeRecording(path);
      expect(probe.durationSeconds).toBe(d);
      const plan = await planRecording(probe, { maxSessionSeconds: 200, searchWindowSeconds: 20 });
      const silences = await silencesOf(path, 1, d);
      checkPlan(plan.sessions, d, silences, { max: 200, window: 20 });
      expect(plan.sessions.filter((s) => s.cut === 'hard')).toHaveLength(0);
      expect(plan.sessions.length).toBeGreaterThanOrEqual(Math.ceil(d / 200));
    },
  );

  it(
    'a stereo call, balanced with a budget of 16: 8 sessions per channel',
    { timeout: LONG_AUDIO_MS },
    async () => {
      const d = 1200;
      const path = join(tmp.dir, 'twenty-minutes.flac');
      await renderFixture(generateCallScript({ durationSeconds: d, seed: 9 }), path);
      const plan = await planRecording(await probeRecording(path), { strategy: 'balanced', budget: 16 });
      // 2 × 1,200 s of audio over 16 sessions.
      expect(plan.options).toMatchObject({ strategy: 'balanced', budget: 16, targetSessionSeconds: 150 });
      const perChannel = await silencesOf(path, 2, d);
      checkPlan(plan.sessions, d, perChannel, { max: 3000, window: 60 });
      expect(plan.sessions.filter((s) => s.track === 0)).toHaveLength(8);
      expect(plan.sessions.filter((s) => s.track === 1)).toHaveLength(8);
      expect(plan.sessions.every((s) => s.cut !== 'hard')).toBe(true);
    },
  );
});

describe('silence costs no recognition', () => {
  const limits = { max: 3000, window: 60 };

  it('leaves a long silence inside a track out, the sessions on both sides ending and starting in it', () => {
    const silences = [[{ start: 1000, end: 5000 }]];
    const planned = planSessions({ durationSeconds: 7200, tracks: MONO, silences });
    expect(planned.sessions.map((s) => [s.start, s.end, s.cut])).toEqual([
      [0, 1001, 'silence'],
      [4999, 7200, 'end'],
    ]);
    expect(planned.skipped).toEqual([[{ start: 1001, end: 4999 }]]);
    checkPlan(planned.sessions, 7200, silences, limits);
  });

  it('streams a silence shorter than skipSilenceSeconds, as a cut', () => {
    const silences = [[{ start: 1000, end: 1059 }]];
    const planned = planSessions({ durationSeconds: 2000, tracks: MONO, silences });
    expect(planned.sessions.map((s) => [s.start, s.end])).toEqual([[0, 2000]]);
    expect(planned.skipped).toEqual([[]]);
  });

  it('plans no session for a track that is one silence, and skips leading and trailing silence', () => {
    const silences = [
      [{ start: 0, end: 72_000 }],
      [
        { start: 0, end: 100 },
        { start: 300, end: 72_000 },
      ],
    ];
    const planned = planSessions({ durationSeconds: 72_000, tracks: STEREO, silences });
    expect(planned.sessions.map((s) => [s.track, s.start, s.end, s.cut])).toEqual([[1, 99, 301, 'silence']]);
    expect(planned.skipped[0]).toEqual([{ start: 0, end: 72_000 }]);
  });

  it('balanced: shares the budget by what is streamed', () => {
    const silences = [[{ start: 600, end: 7000 }]];
    const planned = planSessions({
      durationSeconds: 7200,
      tracks: MONO,
      silences,
      options: { strategy: 'balanced', budget: 4, minSessionSeconds: 60 },
    });
    expect(planned.targetSessionSeconds).toBe(200.5);
    expect(planned.sessions.every((s) => s.end <= 601 || s.start >= 6999)).toBe(true);
    checkPlan(planned.sessions, 7200, silences, limits);
  });

  it('a silent recording: no session, and the plan says why', async () => {
    const path = join(tmp.dir, 'silent.flac');
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'anullsrc=r=8000:cl=mono', '-t', '90', '-y', path]);
    const plan = await planRecording(await probeRecording(path));
    expect(plan.sessions).toEqual([]);
    expect(plan.tracks).toHaveLength(1);
    expect(plan.decisions).toEqual([expect.stringMatching(/^no speech in the recording/)]);
    expect(sessionPlanSchema.parse(plan)).toEqual(plan);
  });

  it('a stereo call with one silent channel recognizes only the other, and its silence only around speech', async () => {
    const path = join(tmp.dir, 'one-side.wav');
    // Channel 0: a tone at 10–20 s and 150–160 s; channel 1 silent.
    const tone = '0.3*sin(2*PI*440*t)*(between(t,10,20)+between(t,150,160))';
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', `aevalsrc='${tone}|0':s=8000:d=180`, '-y', path]);
    const plan = await planRecording(await probeRecording(path));
    expect(plan.tracks.map((t) => t.sourceChannels)).toEqual([[0]]);
    expect(plan.sessions.map((s) => [s.start, s.end])).toEqual([
      [0, expect.closeTo(21, 0)],
      [expect.closeTo(149, 0), 180],
    ]);
    expect(plan.decisions).toEqual([
      expect.stringMatching(/^channel 1 is silent/),
      expect.stringMatching(/^track 0 \(agent\): 1 silent stretch of at least 60 s/),
    ]);
  });
});
