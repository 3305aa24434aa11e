/**
 * Staged tracks: each track of a plan as one object of 8-kHz mu-law, the whole recording long, which
 * every session of the track reads as a byte range (a session of [start, end) s is the bytes
 * [start × 8,000, end × 8,000)). The recording is decoded once, by the channel analysis, which writes
 * the tracks as it goes (channel-analysis.ts `trackOutputs`): no ffmpeg run, activity or upload per
 * session. Per track the audio is what a session's transcode gives (transcode.ts: the same pan,
 * resampling and conditioning), except that the filters are warm at a session's start instead of
 * starting from rest.
 *
 * The files are written for the tracks as mapped before the analysis (channels.ts `planTracks`); a
 * final track that is not one of them (a mix that lost a silent channel) is transcoded whole once more.
 */
import { createWriteStream } from 'node:fs';
import { appendFile, rm, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { PlanSession, StagedTrack, Track } from '../../schemas/plan.ts';
import type { TrackOutput } from './track-writers.ts';
import type { MediaInput } from './media-input.ts';
import { trackKey, type StagingStore } from './staging.ts';
import { expectedBytes, transcodeStream } from './transcode.ts';
import { makeScratchDir } from '../scratch.ts';

/** Mu-law's code for silence (a zero sample): what pads a track to the plan's length. */
export const MULAW_SILENCE = 0xff;

/** Where the plan stages its tracks: the call's audio prefix, so the call's clean-up deletes them. */
export interface TrackStaging {
  store: StagingStore;
  keyPrefix: string;
}

/** A directory of track files for one plan; `remove` in a finally. */
export interface TrackFiles {
  dir: string;
  outputs: TrackOutput[];
  remove(): Promise<void>;
}

/** Files for the tracks mapped before the analysis, for the analysis run to write. */
export async function trackFiles(tracks: readonly Pick<Track, 'sourceChannels'>[]): Promise<TrackFiles> {
  const dir = await makeScratchDir('tracks-');
  return {
    dir,
    outputs: tracks.map((t, i) => ({
      sourceChannels: [...t.sourceChannels],
      path: join(dir, `t${i}.mulaw`),
    })),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Pads a file with mu-law silence, or cuts it, to exactly `bytes`. */
export async function fitToLength(path: string, bytes: number): Promise<void> {
  const { size } = await stat(path);
  if (size > bytes) await truncate(path, bytes);
  else if (size < bytes) await appendFile(path, Buffer.alloc(bytes - size, MULAW_SILENCE));
}

const sameChannels = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((c, i) => c === b[i]);

export interface StageTracksInput {
  files: TrackFiles;
  /** The plan's final tracks and sessions: only tracks with a session are staged. */
  tracks: readonly Track[];
  sessions: readonly Pick<PlanSession, 'track'>[];
  /** The plan's length: every staged track is exactly this × 8,000 bytes. */
  durationSeconds: number;
  fingerprint: string;
  /** For a track the analysis did not write: the recording, opened as the analysis read it. */
  openInput: (signal: AbortSignal) => Promise<MediaInput>;
  /** Bounds the transcode of such a track (the analysis's time bound). */
  bounded: <T>(work: (signal: AbortSignal) => Promise<T>) => Promise<T>;
}

/** The file of each final track with sessions, written by the analysis or transcoded now, fitted. */
async function finalTrackFiles(input: StageTracksInput): Promise<{ track: Track; path: string }[]> {
  const bytes = expectedBytes(input.durationSeconds, 'mulaw');
  const heard = new Set(input.sessions.map((s) => s.track));
  const out: { track: Track; path: string }[] = [];
  for (const track of input.tracks.filter((t) => heard.has(t.track))) {
    const written = input.files.outputs.find((o) => sameChannels(o.sourceChannels, track.sourceChannels));
    const path = written?.path ?? join(input.files.dir, `final-t${track.track}.mulaw`);
    if (!written) await transcodeWhole(input, track, path);
    await fitToLength(path, bytes);
    out.push({ track, path });
  }
  return out;
}

/** A track the analysis did not write: the whole recording's range transcoded once (transcode.ts). */
async function transcodeWhole(input: StageTracksInput, track: Track, path: string): Promise<void> {
  await input.bounded(async (signal) => {
    const media = await input.openInput(signal);
    const range = {
      input: media,
      sourceChannels: track.sourceChannels,
      start: 0,
      end: input.durationSeconds,
      format: 'mulaw' as const,
    };
    const proc = transcodeStream(range, signal);
    const [done, written] = await Promise.allSettled([
      proc.done,
      pipeline(proc.stdout, createWriteStream(path)),
    ]);
    if (done.status === 'rejected') throw done.reason;
    if (written.status === 'rejected') {
      proc.kill();
      throw written.reason;
    }
  });
}

/**
 * Uploads each final track that has sessions (one PUT each, whatever its length: the store's putFile
 * sends a file of known length in one request) and says where it is.
 */
export async function stageTracks(input: StageTracksInput, staging: TrackStaging): Promise<StagedTrack[]> {
  const files = await finalTrackFiles(input);
  const bytes = expectedBytes(input.durationSeconds, 'mulaw');
  return Promise.all(
    files.map(async ({ track, path }) => {
      const key = trackKey({
        prefix: staging.keyPrefix,
        fingerprint: input.fingerprint,
        track: track.track,
        format: 'mulaw',
      });
      await staging.store.putFile(key, path, {
        fingerprint: input.fingerprint,
        format: 'mulaw',
        bytes: String(bytes),
        track: String(track.track),
      });
      return { track: track.track, key, format: 'mulaw' as const, bytes };
    }),
  );
}
