/**
 * The plan's staged tracks (activities/media/staged-tracks.ts): the analysis's decode writes each track,
 * the plan stages those with sessions, each exactly the plan's length, and a session's byte range of a
 * track is the audio its own transcode gives.
 */
import { readdirSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCallScript } from '../../activities/media/call-script.ts';
import { MediaCancelledError } from '../../activities/media/errors.ts';
import { runFfmpeg } from '../../activities/media/ffmpeg.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { planRecording } from '../../activities/media/plan.ts';
import { probeRecording } from '../../activities/media/probe.ts';
import { fitToLength, MULAW_SILENCE } from '../../activities/media/staged-tracks.ts';
import { LocalStagingStore, trackKey } from '../../activities/media/staging.ts';
import type { ProbeResult } from '../../schemas/media-probe.ts';
import { decodeDtmfPhrases, decodeMulaw } from '../helpers/dtmf-decode.ts';
import { makeTempDir, transcodeSessionAudio } from '../helpers/media-fixtures.ts';

const tmp = makeTempDir();
afterAll(() => tmp.cleanup());

const OPTIONS = { maxSessionSeconds: 30, searchWindowSeconds: 10 };
const PREFIX = 'calls/c/run/audio/';
const script = generateCallScript({ durationSeconds: 75, seed: 42 });
// The plan's temporary track files go under this file's own temporary directory (os.tmpdir() follows
// TMPDIR), so another process's plan on the machine (a benchmark, a killed worker's leftovers) is not
// taken for one of these tests'.
const ownTmp = makeTempDir();
const machineTmp = process.env.TMPDIR;
beforeAll(() => {
  process.env.TMPDIR = ownTmp.dir;
});
afterAll(async () => {
  if (machineTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = machineTmp;
  ownTmp.cleanup();
});
const trackDirs = () => readdirSync(tmpdir()).filter((f) => f.startsWith('callpipe-tracks-'));

describe('fitToLength', () => {
  it('pads with mu-law silence or cuts, to the exact byte', async () => {
    const path = join(tmp.dir, 'fit.mulaw');
    await writeFile(path, Buffer.from([1, 2, 3]));
    await fitToLength(path, 6);
    expect([...(await readFile(path))]).toEqual([1, 2, 3, MULAW_SILENCE, MULAW_SILENCE, MULAW_SILENCE]);
    await fitToLength(path, 2);
    expect([...(await readFile(path))]).toEqual([1, 2]);
  });
});

const probes: Record<string, ProbeResult> = {};

beforeAll(async () => {
  for (const [name, rate] of [
    ['call48.wav', 48000],
    ['call.m4a', 44100],
  ] as const) {
    const path = join(tmp.dir, name);
    await renderFixture(script, path, { sampleRate: rate });
    probes[name] = await probeRecording(path);
  }
});

describe('planRecording with staged tracks: staging', () => {
  it('stages each track whole, exactly the plan’s length; the plan is otherwise the same', async () => {
    const probe = probes['call.m4a']!;
    const store = new LocalStagingStore(join(tmp.dir, 'staged'));
    const plain = await planRecording(probe, OPTIONS);
    const staged = await planRecording(probe, OPTIONS, undefined, undefined, { store, keyPrefix: PREFIX });
    expect(plain.stagedTracks).toBeUndefined();
    const { stagedTracks, ...rest } = staged;
    expect(rest).toEqual(plain);
    const bytes = Math.round(staged.source.durationSeconds * 1000) * 8;
    expect(stagedTracks).toEqual(
      staged.tracks.map((t) => ({
        track: t.track,
        key: trackKey({ prefix: PREFIX, fingerprint: probe.fingerprint, track: t.track, format: 'mulaw' }),
        format: 'mulaw',
        bytes,
      })),
    );
    for (const t of stagedTracks!) {
      expect(t.key.startsWith(PREFIX)).toBe(true);
      expect(await store.head(t.key)).toEqual({
        size: bytes,
        meta: {
          fingerprint: probe.fingerprint,
          format: 'mulaw',
          bytes: String(bytes),
          track: String(t.track),
        },
      });
      // Every phrase of the track's channel, at its time in the recording.
      const phrases = decodeDtmfPhrases(decodeMulaw(await readFile(store.pathOf(t.key))), 8000);
      const expected = script.channels[t.track]!.phrases;
      expect(phrases.map((p) => p.id)).toEqual(expected.map((p) => p.id));
      phrases.forEach((p, i) => expect(Math.abs(p.start - expected[i]!.start)).toBeLessThan(0.03));
    }
    expect(trackDirs()).toEqual([]);
  });

  it('gives each session the audio its own transcode gives', async () => {
    const probe = probes['call48.wav']!;
    const store = new LocalStagingStore(join(tmp.dir, 'compare'));
    const plan = await planRecording(probe, OPTIONS, undefined, undefined, { store, keyPrefix: PREFIX });
    expect(plan.sessions.length).toBeGreaterThanOrEqual(4);
    for (const s of plan.sessions) {
      const a = decodeMulaw(await transcodeSessionAudio(probe, plan.tracks, s));
      const track = await readFile(store.pathOf(plan.stagedTracks!.find((t) => t.track === s.track)!.key));
      const b = decodeMulaw(track.subarray(Math.round(s.start * 8000), Math.round(s.end * 8000)));
      expect(b.length).toBe(a.length);
      // Cut in silence, the filters are at rest either way: the same samples, to mu-law's last step.
      let signal = 0;
      let error = 0;
      for (let i = 0; i < a.length; i++) {
        signal += a[i]! * a[i]!;
        error += (a[i]! - b[i]!) ** 2;
      }
      expect(signal).toBeGreaterThan(0);
      expect(error / signal).toBeLessThan(1e-4);
    }
  });
});

describe('planRecording with staged tracks: mixed and idle tracks', () => {
  it('transcodes whole a mixed track that lost a silent channel', async () => {
    // Three channels, the middle one digital silence: mixed down, the silent one left out of the mix.
    const path = join(tmp.dir, 'three.wav');
    await runFfmpeg([
      ...['-v', 'error', '-i', probes['call48.wav']!.path],
      ...['-af', 'pan=3c|c0=c0|c1=0*c0|c2=c1', '-ar', '16000', '-y', path],
    ]);
    const probe = await probeRecording(path);
    const store = new LocalStagingStore(join(tmp.dir, 'three'));
    const plan = await planRecording(probe, OPTIONS, undefined, undefined, { store, keyPrefix: PREFIX });
    expect(plan.tracks.map((t) => t.sourceChannels)).toEqual([[0, 2]]);
    const [track] = plan.stagedTracks!;
    const bytes = await readFile(store.pathOf(track!.key));
    expect(bytes.length).toBe(Math.round(plan.source.durationSeconds * 1000) * 8);
    const ids = decodeDtmfPhrases(decodeMulaw(bytes), 8000).map((p) => p.id);
    const expected = script.channels
      .flatMap((c) => c.phrases)
      .sort((a, b) => a.start - b.start)
      .map((p) => p.id);
    expect(ids).toEqual(expected);
    expect(trackDirs()).toEqual([]);
  });

  it('stages no track that has no session, and nothing when cancelled', async () => {
    const path = join(tmp.dir, 'one-silent.wav');
    await runFfmpeg([
      ...['-v', 'error', '-i', probes['call48.wav']!.path],
      ...['-af', 'pan=stereo|c0=c0|c1=0*c1', '-y', path],
    ]);
    const probe = await probeRecording(path);
    const store = new LocalStagingStore(join(tmp.dir, 'one-silent'));
    const plan = await planRecording(probe, OPTIONS, undefined, undefined, { store, keyPrefix: PREFIX });
    expect(plan.tracks.map((t) => t.sourceChannels)).toEqual([[0]]);
    expect(plan.stagedTracks!.map((t) => t.track)).toEqual([0]);

    const cancelled = new LocalStagingStore(join(tmp.dir, 'cancelled'));
    const controller = new AbortController();
    controller.abort();
    await expect(
      planRecording(probe, OPTIONS, controller.signal, undefined, { store: cancelled, keyPrefix: PREFIX }),
    ).rejects.toBeInstanceOf(MediaCancelledError);
    expect(readdirSync(join(tmp.dir), { withFileTypes: true }).some((d) => d.name === 'cancelled')).toBe(
      false,
    );
    expect(trackDirs()).toEqual([]);
  });
});
