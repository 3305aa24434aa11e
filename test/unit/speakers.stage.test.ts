import { describe, expect, it } from 'vitest';
import {
  assignVoiceRoles,
  isOneTrackCall,
  readStagedAudio,
  roleSettingsOf,
  stagedAudioReader,
} from '../../activities/speakers/speakers-activities.ts';
import { defaultRules } from '../../activities/insights/rule-file.ts';
import type { Timeline } from '../../schemas/transcript.ts';

const settings = roleSettingsOf(defaultRules());
/** mu-law's code for a zero sample. */
const MULAW_SILENCE = 0xff;

function timeline(utterances: { start: number; end: number; text: string }[]): Timeline {
  return {
    callId: 'c',
    durationSeconds: 30,
    speakers: ['mixed'],
    utterances: utterances.map((u, index) => ({ index, speaker: 'mixed', track: 0, session: 0, ...u })),
  };
}

describe('the speakers stage on odd one-track calls', () => {
  it('a call with no speech keeps its speakers, with a reason, and never throws', () => {
    const audio = stagedAudioReader([{ start: 0, bytes: new Uint8Array(8000 * 30).fill(MULAW_SILENCE) }]);
    const out = assignVoiceRoles(timeline([]), audio, settings, { roles: 'evidence' });
    expect(out.timeline.utterances).toEqual([]);
    expect(out.roles.separation!.voices).toBe(0);
    expect(out.roles.decision).toBe('unknown');
  });

  it('utterances over digital silence stay mixed, with the reason in the separation facts', () => {
    const audio = stagedAudioReader([{ start: 0, bytes: new Uint8Array(8000 * 30).fill(MULAW_SILENCE) }]);
    const out = assignVoiceRoles(
      timeline([
        { start: 1, end: 3, text: 'お電話ありがとうございます。' },
        { start: 5, end: 7, text: 'はい。' },
      ]),
      audio,
      settings,
      { roles: 'evidence' },
    );
    expect(out.roles.separation!.voices).toBe(0);
    expect(out.roles.separation!.reason).toBeTruthy();
    expect(out.timeline.utterances.every((u) => u.speaker === 'mixed' && u.voice === null)).toBe(true);
    expect(out.roles.summary).toMatch(/could not be told apart/);
  });

  it('separates by the line when told to (voices: line), and by the voice otherwise, which says when it fell back', () => {
    // Line noise only: audible, never voiced.
    const bytes = new Uint8Array(8000 * 30);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919 + ((i * i) >> 5)) & 0x7f;
    const audio = stagedAudioReader([{ start: 0, bytes }]);
    const calls = timeline([1, 5, 9, 13, 17, 21].map((start) => ({ start, end: start + 2, text: 'はい。' })));
    const byVoice = assignVoiceRoles(calls, audio, settings, { roles: 'evidence' });
    expect(byVoice.roles.separation!.reason).toMatch(/no voice to follow.*told apart by the line/);
    const byLine = assignVoiceRoles(calls, audio, settings, { roles: 'evidence', byLine: true });
    expect(byLine.roles.separation!.reason ?? '').not.toMatch(/no voice to follow/);
  });

  it('reads staged sessions on the call clock, across a session boundary', () => {
    const a = new Uint8Array(8000).fill(0x00);
    const b = new Uint8Array(8000).fill(0x80);
    const reader = stagedAudioReader([
      { start: 1, bytes: b },
      { start: 0, bytes: a },
    ]);
    const samples = reader.read(0.5, 1.5);
    expect(samples).toHaveLength(8000);
    // mu-law 0x00 is the most negative sample, 0x80 the most positive.
    expect(samples[0]).toBeLessThan(-0.9);
    expect(samples[7999]).toBeGreaterThan(0.9);
    // Outside every session: zeros.
    expect(reader.read(2.5, 3).every((x) => x === 0)).toBe(true);
  });

  it('reads into the caller buffer the same samples as read, within the limit, silence where no session is', () => {
    const bytes = Uint8Array.from({ length: 8000 }, (_, i) => (i * 37) & 0xff);
    const reader = stagedAudioReader([{ start: 1, bytes }]);
    const out = new Float32Array(600).fill(7);
    const written = reader.readInto!(0.98, 1.02, out, 100, 400);
    expect(written).toBe(320);
    expect(Array.from(out.subarray(100, 420))).toEqual(Array.from(reader.read(0.98, 1.02)));
    // Before the session's start, silence; the caller's buffer untouched outside what was written.
    expect(out[100]).toBe(0);
    expect(out[99]).toBe(7);
    expect(out[420]).toBe(7);
    expect(reader.readInto!(1.5, 2, out, 0, 100)).toBe(100);
    expect(Array.from(out.subarray(0, 100))).toEqual(Array.from(reader.read(1.5, 2).subarray(0, 100)));
  });

  it('hands the codes readInto decodes when one session holds them all, and none across a gap or past the end', () => {
    const bytes = Uint8Array.from({ length: 8000 }, (_, i) => (i * 37) & 0xff);
    const reader = stagedAudioReader([
      { start: 1, bytes },
      { start: 3, bytes: bytes.slice(0, 800) },
    ]);
    const codes = reader.mulawCodes!(1.25, 1.5, 1000);
    expect(Array.from(codes!)).toEqual(Array.from(bytes.subarray(2000, 3000)));
    // The limit, as readInto's.
    expect(reader.mulawCodes!(1.25, 1.5, 300)).toHaveLength(300);
    expect(reader.mulawCodes!(0.98, 1.02, 400)).toBeNull();
    expect(reader.mulawCodes!(1.9, 3.05, 10_000)).toBeNull();
    expect(reader.mulawCodes!(3.05, 3.2, 10_000)).toBeNull();
    expect(Array.from(reader.mulawCodes!(3, 3.1, 10_000)!)).toEqual(Array.from(bytes.subarray(0, 800)));
  });

  it('separates only a track that hears everyone', () => {
    expect(isOneTrackCall([{ speaker: 'mixed' }])).toBe(true);
    expect(isOneTrackCall([{ speaker: 'operator' }])).toBe(false);
    expect(isOneTrackCall([{ speaker: 'agent' }, { speaker: 'customer' }])).toBe(false);
  });
});

describe('readStagedAudio', () => {
  it('reads a one-track call’s staged track once, each session its range, silence where none streamed', async () => {
    // A 4-s track: second 0 loud negative, 1–2 a skipped silence (loud positive in the track), 3 positive.
    const track = new Uint8Array(8000 * 4).fill(0x00);
    track.fill(0x80, 8000);
    const gets: string[] = [];
    const store = {
      getBuffer: async (key: string) => (gets.push(key), Buffer.from(track)),
    };
    const reader = await readStagedAudio(store, [
      { session: 0, start: 0, end: 1, audioKey: 'audio/t0/track.mulaw', audioStart: 0 },
      { session: 1, start: 3, end: 4, audioKey: 'audio/t0/track.mulaw', audioStart: 0 },
    ]);
    expect(gets).toEqual(['audio/t0/track.mulaw']);
    const samples = reader.read(0, 4);
    expect(samples[4000]).toBeLessThan(-0.9);
    // Between the sessions nothing was recognized: silence, as with per-session objects.
    expect(samples[8000 * 2]).toBe(0);
    expect(samples[8000 * 3 + 10]).toBeGreaterThan(0.9);
  });

  it('reads the sessions’ own objects of a run from before, each at its start', async () => {
    const objects: Record<string, Buffer> = {
      'a.mulaw': Buffer.alloc(8000, 0x00),
      'b.mulaw': Buffer.alloc(8000, 0x80),
    };
    const reader = await readStagedAudio({ getBuffer: async (key: string) => objects[key]! }, [
      { session: 0, start: 0, end: 1, audioKey: 'a.mulaw' },
      { session: 1, start: 2, end: 3, audioKey: 'b.mulaw' },
    ]);
    const samples = reader.read(0, 3);
    expect(samples[100]).toBeLessThan(-0.9);
    expect(samples[8000 + 100]).toBe(0);
    expect(samples[16000 + 100]).toBeGreaterThan(0.9);
  });
});
