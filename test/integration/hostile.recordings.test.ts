/**
 * Recordings that would hang a slot or cost what they do not hold, in one batch on the shared stack: an
 * HLS playlist named `.wav` whose segment is a FIFO on the workers' host, three hours of silence with
 * two phrases (FLAC), a minute of nothing but silence, and a stereo call whose customer channel is dead.
 * The playlist fails alone with its reason; the others finish, and the request log of an emulator of this
 * file's own (with workers of its own, on this host) shows that only speech was streamed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { submitRecording } from '../../cli/submit.ts';
import { runFfmpeg } from '../../activities/media/ffmpeg.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import type { FixtureScript } from '../../schemas/synthetic-recording.ts';
import type { OutputLocation, RecordingSource } from '../../schemas/recording.ts';
import type { ProcessRecordingResult } from '../../workflows/process-recording.ts';
import { ANY_SPEAKER, compareTranscript, expectedUtterances } from '../helpers/pipeline.ts';
import { muLawSecondsSent, streamStarts } from '../helpers/request-log.ts';
import { ownService, type OwnService } from '../helpers/own-service.ts';
import { runId } from '../helpers/run-id.ts';

interface ResultDoc {
  audio: {
    durationSeconds: number;
    tracks?: { track: number; speaker: string; sourceChannels: number[] }[];
    channelAnalysis?: { channels: { status: string }[]; decisions: string[] };
  };
  sessions: { track: number; start: number; end: number; audioSecondsSent: number }[];
  utterances: { speaker: string; start: number; end: number; text: string }[];
  stepFailures?: unknown[];
  processing: { requests: Record<string, { requests: number }> };
}

/** Three hours of silence around two phrases: a long, idle line. */
const LONG_SECONDS = 3 * 3600;
const longScript: FixtureScript = {
  durationSeconds: LONG_SECONDS,
  background: 'silence',
  channels: [
    {
      phrases: [
        { id: 7, start: 100 },
        { id: 12, start: 9000 },
      ],
    },
  ],
};
/** Stereo: the agent speaks, the customer's channel carries nothing. */
const oneSidedScript: FixtureScript = {
  durationSeconds: 30,
  background: 'silence',
  channels: [
    {
      phrases: [
        { id: 3, start: 2 },
        { id: 21, start: 15 },
      ],
    },
    { phrases: [] },
  ],
};

let dir: string;
let pc: PipelineClient;
let output: OutputLocation;
let service: OwnService;
const run = runId();
const results = new Map<string, ProcessRecordingResult>();
const keys = new Map<string, string>();
let logBefore = 0;

const doc = async (name: string) =>
  JSON.parse(await pc.store.getText(results.get(name)!.resultKey!)) as ResultDoc;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-hostile-'));
  service = await ownService('hostile-recordings', dir);
  pc = await connectPipeline(service.config);
  output = { bucket: pc.config.s3.bucket, prefix: `hostile-${run}/results/` };

  // The workers run on this host: the playlist's segment is a FIFO they could open and wait on forever.
  const fifo = join(dir, 'segment.ts');
  execFileSync('mkfifo', [fifo]);
  writeFileSync(
    join(dir, 'playlist.wav'),
    `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n${fifo}\n#EXT-X-ENDLIST\n`,
  );
  await renderFixture(longScript, join(dir, 'long-silence.flac'));
  const silence = ['-f', 'lavfi', '-i', 'anullsrc=r=8000:cl=mono', '-t', '60'];
  await runFfmpeg(['-v', 'error', ...silence, '-y', join(dir, 'silence.wav')]);
  await renderFixture(oneSidedScript, join(dir, 'one-sided.wav'));

  logBefore = service.requests().length;
  const batchId = `hostile-${run}`;
  const submitted = await Promise.all(
    ['playlist.wav', 'long-silence.flac', 'silence.wav', 'one-sided.wav'].map(async (name) => {
      const key = `hostile-${run}/${name}`;
      keys.set(name, key);
      await pc.store.putFile(key, join(dir, name));
      const head = (await pc.store.head(key))!;
      const source: RecordingSource = { bucket: pc.store.bucket, key, etag: head.etag, size: head.size };
      return { name, submitted: await submitRecording(pc, source, { output, batchId }) };
    }),
  );
  await Promise.all(
    submitted.map(async ({ name, submitted: s }) => results.set(name, await s.handle.result())),
  );
}, 600_000); // renders and decodes three hours of audio: minutes on a loaded 2-core machine

afterAll(async () => {
  await pc?.close();
  await service?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('recordings that would hang a slot or cost what they do not hold', () => {
  it('fails the playlist that points at a FIFO at probe, with its reason, while the batch finishes', async () => {
    const r = results.get('playlist.wav')!;
    expect(r).toMatchObject({ status: 'failed', stage: 'probe' });
    const error = JSON.parse(await pc.store.getText(r.errorKey!)) as { stage: string; reason: string };
    expect(error.stage).toBe('probe');
    expect(error.reason).toBe(
      `s3://${pc.store.bucket}/${keys.get('playlist.wav')} is an HLS/M3U playlist, which names other files: not a recording`,
    );
    for (const name of ['long-silence.flac', 'silence.wav', 'one-sided.wav']) {
      expect(results.get(name)!.status, name).toBe('done');
    }
  });

  it('streams three hours of silence around two phrases as two short sessions, the phrases exact', async () => {
    const long = await doc('long-silence.flac');
    expect(long.audio.durationSeconds).toBe(LONG_SECONDS);
    expect(long.sessions).toHaveLength(2);
    const streamed = long.sessions.reduce((sum, s) => sum + (s.end - s.start), 0);
    expect(streamed).toBeLessThan(30);
    expect(long.audio.channelAnalysis!.decisions.join()).toMatch(/3 silent stretches of at least 60 s/);
    const { missing, extra } = compareTranscript(
      long.utterances,
      expectedUtterances(longScript, [ANY_SPEAKER]),
    );
    expect(missing).toEqual([]);
    expect(extra).toEqual([]);
  });

  it('recognizes nothing of a recording that holds no speech: an empty transcript and the reason', async () => {
    const silent = await doc('silence.wav');
    expect(silent.sessions).toEqual([]);
    expect(silent.utterances).toEqual([]);
    expect(silent.stepFailures ?? []).toEqual([]);
    expect(silent.processing.requests.recognition?.requests ?? 0).toBe(0);
    expect(silent.audio.channelAnalysis!.decisions).toEqual([
      expect.stringMatching(/^no speech in the recording/),
    ]);
  });

  it('streams only the live channel of a call whose other channel is silent', async () => {
    const oneSided = await doc('one-sided.wav');
    expect(oneSided.audio.channelAnalysis!.channels.map((c) => c.status)).toEqual(['speech', 'silent']);
    expect(oneSided.audio.tracks).toEqual([{ track: 0, speaker: 'agent', sourceChannels: [0] }]);
    expect(oneSided.sessions.every((s) => s.track === 0)).toBe(true);
    const { missing, extra } = compareTranscript(
      oneSided.utterances,
      expectedUtterances(oneSidedScript, [ANY_SPEAKER, ANY_SPEAKER]),
    );
    expect(missing).toEqual([]);
    expect(extra).toEqual([]);
  });

  it('sent the emulator only what the sessions hold: no silent channel, no long silence', async () => {
    const entries = service.requests().slice(logBefore);
    const docs = await Promise.all(['long-silence.flac', 'silence.wav', 'one-sided.wav'].map(doc));
    const sessions = docs.flatMap((d) => d.sessions);
    expect(streamStarts(entries)).toBeGreaterThanOrEqual(sessions.length);
    const sent = sessions.reduce((sum, s) => sum + s.audioSecondsSent, 0);
    expect(muLawSecondsSent(entries)).toBeCloseTo(sent, 0);
    // Of 3 h 1 min 30 s of recordings: the two phrases of the long one, and the one side of the call.
    expect(sent).toBeLessThan(30 + 30);
  });
});
