/**
 * The bad-input corpus (test/corpus/generate.ts) on the shared stack: every recording is submitted in
 * one batch, so a bad file must fail alone with a readable `error.json` while the others complete; the
 * manifest cases run as backfills. The long silent call is checked through its plan and one transcoded
 * session (streaming it whole is a bench run; see test/corpus/README.md). Outcomes: test/corpus/README.md.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { submitRecording } from '../../cli/submit.ts';
import { startBackfill } from '../../cli/commands/backfill.ts';
import { probeRecording } from '../../activities/media/probe.ts';
import { reportedSource } from '../../activities/storage/call-id.ts';
import { plainInput } from '../../activities/media/media-input.ts';
import { planRecording } from '../../activities/media/plan.ts';
import { expectedBytes, transcodeStream } from '../../activities/media/transcode.ts';
import { phraseDurationSeconds } from '../../schemas/synthetic-recording.ts';
import { compareTranscript, expectedUtterances, ANY_SPEAKER } from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import {
  AMR_CALL_SECONDS,
  generateCorpus,
  LONG_SILENT_SECONDS,
  type CorpusCase,
} from '../corpus/generate.ts';
import type { ProcessRecordingResult } from '../../workflows/process-recording.ts';
import type { BackfillResult } from '../../workflows/backfill.ts';
import type { ReportRow } from '../../schemas/backfill.ts';
import type { OutputLocation, RecordingSource } from '../../schemas/recording.ts';
import { runId } from '../helpers/run-id.ts';

interface ResultDoc {
  callId: string;
  source: { key?: string; uri?: string };
  audio: {
    durationSeconds: number;
    sampleRate: number;
    channels: number;
    codec?: string;
    container?: string;
    hasVideo?: boolean;
    reader?: { format: string | null; options: Record<string, string>; repair: string | null };
    amr?: { frames: number; sid: number; noData: number };
    lengthCheck?: { measuredBy: string; containerSeconds: number };
    tracks?: { track: number; speaker: string; sourceChannels: number[] }[];
    channelAnalysis?: {
      channels: { status: string; duplicateOf?: number; dcOffset: number }[];
      decisions: string[];
    };
  };
  sessions: { start: number; end: number; cut: string }[];
  utterances: { speaker: string; start: number; end: number; text: string }[];
  stepFailures?: { step: string; reason: string }[];
}

const SAFE_CALL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

let dir: string;
let pc: PipelineClient;
let cases: CorpusCase[];
let output: OutputLocation;
const run = runId();
/** Every input of this run lives under its own prefix. */
const prefix = `corpus-${run}/`;
const results = new Map<string, ProcessRecordingResult>();

/** `/keys/…` stays absolute-looking: the run prefix goes after its slash. */
const keyOf = (c: CorpusCase) =>
  c.key.startsWith('/') ? `/${prefix}${c.key.slice(1)}` : `${prefix}${c.key}`;
const fileCases = () => cases.filter((c) => c.kind === 'file');
const byName = (name: string) => cases.find((c) => c.name === name)!;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-corpus-'));
  pc = await connectPipeline(stackConfig());
  cases = await generateCorpus(dir);
  output = { bucket: pc.config.s3.bucket, prefix: `${prefix}results/` };
  const batchId = `corpus-${run}`;
  // One batch: every file at once, as `callpipe process a b c…` submits them.
  const submitted = await Promise.all(
    fileCases().map(async (c) => {
      const key = keyOf(c);
      let source: RecordingSource = { bucket: pc.store.bucket, key };
      if (c.uploadable !== false) {
        await pc.store.putFile(key, c.path);
        const head = (await pc.store.head(key))!;
        source = { ...source, etag: head.etag, size: head.size };
      }
      return {
        c,
        s: await submitRecording(pc, source, { output, batchId, extra: c.plan ? { plan: c.plan } : {} }),
      };
    }),
  );
  await Promise.all(
    submitted.map(async ({ c, s }) => {
      results.set(c.name, await s.handle.result());
    }),
  );
}, 600_000); // the whole corpus, processed at once: many minutes on a loaded 2-core machine

afterAll(async () => {
  await pc?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('bad-input corpus: outcomes', () => {
  it('fails each unreadable input at its stage with a one-line reason naming the object, and the batch goes on', async () => {
    for (const c of fileCases()) {
      const r = results.get(c.name)!;
      if (c.expected.status !== 'failed') {
        expect(r.status, `${c.name}: ${r.reason}`).toBe('done');
        continue;
      }
      expect(r.status, c.name).toBe('failed');
      expect(r.stage, c.name).toBe(c.expected.stage);
      const doc = JSON.parse(await pc.store.getText(r.errorKey!)) as { stage: string; reason: string };
      expect(doc.stage, c.name).toBe(c.expected.stage);
      expect(doc.reason, c.name).toMatch(c.expected.reason);
      // One line a user can act on: no stack trace, no worker-local cache path, the object named.
      expect(doc.reason, c.name).not.toMatch(/\n/);
      expect(doc.reason, c.name).not.toMatch(/callpipe-sources|\/tmp\//);
      expect(doc.reason, c.name).toContain(`s3://${pc.store.bucket}/${keyOf(c)}`);
      expect(r.errorKey!.startsWith(`${output.prefix}${r.callId}/`), c.name).toBe(true);
    }
  });

  it('processes every readable input to a transcript equal to its script', async () => {
    for (const c of fileCases()) {
      if (c.expected.status !== 'done') continue;
      const r = results.get(c.name)!;
      const doc = JSON.parse(await pc.store.getText(r.resultKey!)) as ResultDoc;
      // A track that hears everyone has its voices told apart and named: words and times are checked here.
      const speakers = c.expected.speakers.map((s) => (s === 'mixed' ? ANY_SPEAKER : s));
      const { missing, extra } = compareTranscript(doc.utterances, expectedUtterances(c.script!, speakers));
      expect(missing, c.name).toEqual([]);
      expect(extra, c.name).toEqual([]);
    }
  });
});

describe('bad-input corpus: formats', () => {
  it('reads each format for what it is', async () => {
    const doc = async (name: string) =>
      JSON.parse(await pc.store.getText(results.get(name)!.resultKey!)) as ResultDoc;
    const video = await doc('video-with-audio');
    expect(video.audio).toMatchObject({ hasVideo: true, channels: 2, sampleRate: 16000 });
    const six = await doc('hires-6ch');
    expect(six.audio).toMatchObject({ channels: 6, sampleRate: 96000 });
    // Six channels mixed down: one track that hears everyone, its voices then told apart and named.
    expect(six.audio.tracks?.map((t) => t.speaker)).toEqual(['mixed']);
    expect((await doc('alaw-8k')).audio.codec).toBe('pcm_alaw');
    const oneSecond = await doc('one-second');
    expect(oneSecond.utterances).toHaveLength(1);
    expect(oneSecond.sessions).toHaveLength(1);
    // Lying headers: the length is what decodes, not what the header claims.
    expect((await doc('lying-duration-wav')).audio.durationSeconds).toBeCloseTo(12, 1);
    expect((await doc('lying-duration-mp3')).audio.durationSeconds).toBeLessThan(12.5);
    // Headerless formats, read as their extension names them; misleading names, read by content.
    expect((await doc('asterisk-g722')).audio).toMatchObject({ codec: 'adpcm_g722', sampleRate: 16000 });
    expect((await doc('asterisk-g722')).audio.reader).toEqual({ format: 'g722', options: {}, repair: null });
    expect((await doc('recorder-ulaw')).audio.codec).toBe('pcm_mulaw');
    expect((await doc('recorder-alaw')).audio.codec).toBe('pcm_alaw');
    expect((await doc('asterisk-gsm')).audio.codec).toBe('gsm');
    expect((await doc('asterisk-sln16')).audio).toMatchObject({ codec: 'pcm_s16le', sampleRate: 16000 });
    expect((await doc('asterisk-g726')).audio).toMatchObject({
      codec: 'adpcm_g726le',
      reader: { format: 'g726le', options: { code_size: '4', sample_rate: '8000' } },
    });
    // Formats with a header (MP3, FLAC, Opus in Ogg and WebM, 24-bit and float WAV): read by content.
    for (const c of fileCases().filter((f) => f.codec)) {
      const { audio } = await doc(c.name);
      expect(audio.codec, c.name).toBe(c.codec);
      expect(audio.reader?.format, c.name).toBeNull();
    }
    // A 20-minute hold over line noise is silence on both channels: not streamed (sessions end and start
    // within a second of it), and no cut is hard.
    const hold = await doc('long-hold');
    expect(hold.audio.durationSeconds).toBe(1240);
    expect(hold.sessions.length).toBeGreaterThan(2);
    for (const s of hold.sessions) {
      expect(s.cut, JSON.stringify(hold.sessions)).not.toBe('hard');
      expect(s.end <= 21 || s.start >= 1219, JSON.stringify(s)).toBe(true);
    }
    expect(hold.audio.channelAnalysis!.channels.map((ch) => ch.status)).toEqual(['speech', 'speech']);
    expect((await doc('wav-named-ulaw')).audio).toMatchObject({ container: 'wav', reader: { format: null } });
    expect((await doc('no-extension')).audio.container).toBe('wav');
    expect((await doc('opus-named-wav')).audio.codec).toBe('opus');
    // AMR with DTX: the whole timeline, counted from the frames, and the comfort noise decoded as silence.
    for (const name of ['amr-dtx', 'amr-dtx-3gp']) {
      const amr = await doc(name);
      expect(amr.audio.durationSeconds, name).toBe(AMR_CALL_SECONDS);
      expect(amr.audio.codec, name).toBe('amr_nb');
      expect(amr.audio.amr!.frames, name).toBe(AMR_CALL_SECONDS * 50);
      expect(amr.audio.amr!.sid + amr.audio.amr!.noData, name).toBeGreaterThan(1000);
      expect(amr.audio.lengthCheck, name).toMatchObject({
        measuredBy: 'amr-frames',
        containerSeconds: AMR_CALL_SECONDS,
      });
    }
    // DC and hum removed before the silence logic: silences found, so no session is cut hard.
    const hum = await doc('hum-dc');
    expect(
      hum.sessions.every((s) => s.cut !== 'hard'),
      JSON.stringify(hum.sessions),
    ).toBe(true);
    expect(hum.audio.channelAnalysis!.channels[0]!.dcOffset).toBeCloseTo(0.05, 2);
    // Up-mixed mono: one track, `mixed`, the decision recorded.
    for (const name of ['duplicated-stereo', 'near-duplicate-stereo']) {
      const dup = await doc(name);
      expect(dup.audio.tracks, name).toEqual([{ track: 0, speaker: 'mixed', sourceChannels: [0] }]);
      expect(dup.audio.channelAnalysis!.channels[1], name).toMatchObject({
        status: 'duplicate',
        duplicateOf: 0,
      });
      expect(dup.audio.channelAnalysis!.decisions.join(), name).toMatch(
        /channel 1 carries the same signal as channel 0/,
      );
    }
    // A dead channel: not recognized, and said so.
    const oneSided = await doc('silent-channel');
    expect(oneSided.audio.tracks).toEqual([{ track: 0, speaker: 'agent', sourceChannels: [0] }]);
    expect(oneSided.audio.channelAnalysis!.channels[1]!.status).toBe('silent');
    expect(oneSided.audio.channelAnalysis!.decisions.join()).toMatch(
      /channel 1 is silent for the whole call/,
    );
    const silent = await doc('silent-hour');
    expect(silent.audio.durationSeconds).toBe(3600);
    expect(silent.utterances).toEqual([]);
    // Nothing to summarize is not a failure of the text steps.
    expect(silent.stepFailures ?? []).toEqual([]);
    expect(Math.max(...silent.sessions.map((s) => s.end - s.start))).toBeLessThanOrEqual(3000);
  });
});

describe('bad-input corpus: keys and the long call', () => {
  it("keeps outputs of keys with spaces, non-ASCII characters and '../' under the output prefix", async () => {
    for (const name of ['key-spaces', 'key-non-ascii', 'key-absolute', 'key-dotdot']) {
      const r = results.get(name)!;
      expect(r.callId, name).toMatch(SAFE_CALL_ID);
      expect(r.callId, name).not.toContain('..');
      const written = r.resultKey ?? r.errorKey!;
      expect(written.startsWith(`${output.prefix}${r.callId}/`), name).toBe(true);
      const doc = JSON.parse(await pc.store.getText(written)) as ResultDoc;
      // The source is recorded as it is, byte for byte.
      expect(JSON.stringify(doc.source), name).toContain(JSON.stringify(keyOf(byName(name))));
    }
    // Every object of this run is an input or sits under the output prefix: nothing escaped beside them.
    const keys: string[] = [];
    let next: string | undefined;
    do {
      const page = await pc.store.listPage(prefix, next);
      keys.push(...page.objects.map((o) => o.key));
      next = page.next;
    } while (next);
    // The store keeps keys as given, except that it drops a leading '/'.
    const inputs = new Set(fileCases().map((c) => keyOf(c).replace(/^\//, '')));
    expect(keys.filter((k) => !inputs.has(k) && !k.startsWith(output.prefix))).toEqual([]);
  });

  it('plans a 2-hour silent call of 20 phrases as one short session around each, the silence between never streamed, and transcodes a session to its exact length', async () => {
    const c = byName('long-silent');
    const probe = await probeRecording(c.path);
    expect(probe.durationSeconds).toBe(LONG_SILENT_SECONDS);
    const plan = await planRecording(probe, c.plan);
    const phrases = c.script!.channels[0]!.phrases;
    expect(plan.sessions).toHaveLength(phrases.length);
    expect(plan.sessions.every((s) => s.cut === 'silence')).toBe(true);
    // What is streamed is the phrases with their margins: under a minute of the two hours.
    expect(plan.sessions.reduce((sum, s) => sum + (s.end - s.start), 0)).toBeLessThan(60);
    // No phrase straddles a cut.
    for (const p of phrases) {
      const end = p.start + phraseDurationSeconds(p.id);
      expect(plan.sessions.some((s) => s.start <= p.start && end <= s.end)).toBe(true);
    }
    // The last session: seeking nearly two hours into the FLAC gives exactly its length of mu-law.
    const last = plan.sessions.at(-1)!;
    const proc = transcodeStream({
      input: plainInput(c.path, probe.reader, probe.streamIndex),
      sourceChannels: [0],
      start: last.start,
      end: last.end,
      format: 'mulaw',
    });
    let bytes = 0;
    await Promise.all([
      pipeline(
        proc.stdout,
        new Writable({
          write(chunk: Buffer, _e, cb) {
            bytes += chunk.length;
            cb();
          },
        }),
      ),
      proc.done,
    ]);
    expect(bytes).toBe(expectedBytes(last.end - last.start, 'mulaw'));
  });
});

describe('bad-input corpus: backfills', () => {
  it('backfills a manifest: good rows done, missing and refused objects reported, a duplicate row run once', async () => {
    const c = byName('manifest');
    const csv = readFileSync(c.path, 'utf8').replaceAll('{prefix}', prefix);
    const manifestKey = `${prefix}${c.key}`;
    await pc.store.put(manifestKey, csv);
    // Its own output prefix: the same recordings are already done under the batch's.
    const manifestOutput = { bucket: pc.store.bucket, prefix: `${prefix}manifest-results/` };
    const started = await startBackfill(pc, {
      batchId: `corpus-manifest-${run}`,
      source: { kind: 'manifest', bucket: pc.store.bucket, key: manifestKey },
      output: manifestOutput,
    });
    const result = (await started.handle.result()) as BackfillResult;
    const rows = (JSON.parse(await pc.store.getText(result.reportJsonKey)) as { rows: ReportRow[] }).rows;
    const expected = c.expected.status === 'manifest' ? c.expected.rows : [];
    const statusOf = (key: string) =>
      rows
        .filter((r) => r.source === reportedSource(`s3://${pc.store.bucket}/${prefix}${key}`))
        .map((r) => r.status);
    for (const key of new Set(expected.map((e) => e.key))) {
      expect(statusOf(key).sort(), `${key}: ${JSON.stringify(rows)}`).toEqual(
        expected
          .filter((e) => e.key === key)
          .map((e) => e.status)
          .sort(),
      );
    }
    expect(result.failed).toBe(0);
    // The duplicate row started nothing: two calls done, one row skipped, one workflow for that call.
    expect(result.done).toBe(2);
    expect(result.skipped).toBe(c.expected.status === 'manifest' ? c.expected.duplicates : -1);
    const dup = rows.find((r) => r.status === 'done' && r.source.includes('agent 7'))!;
    const runs: string[] = [];
    for await (const w of pc.client.workflow.list({
      query: `WorkflowType = 'processRecording' AND CallpipeBatchId = "corpus-manifest-${run}"`,
    }))
      if (w.workflowId === dup.workflowId) runs.push(w.runId);
    expect(runs).toHaveLength(1);
    expect(dup.resultKey!.startsWith(`${manifestOutput.prefix}${dup.callId}/`)).toBe(true);
    expect(rows.find((r) => r.source.includes('escape'))?.reason).toBe(
      'object storage refused the key (HTTP 400)',
    );
  });

  it('backfills a prefix by content: recordings whatever their names, everything else reported with why', async () => {
    const mixed = `${prefix}mixed/`;
    const uploads: [string, string | Buffer][] = [
      ['recording-without-extension', readFileSync(byName('no-extension').path)],
      ['asterisk.g722', readFileSync(byName('asterisk-g722').path)],
      ['phone.3gp', readFileSync(byName('amr-dtx-3gp').path)],
      ['notes.txt', 'Call notes: the customer will call back on Monday.\n'],
      ['export.dat', 'Call notes: the customer will call back on Monday.\n'],
      ['invoice', Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n', 'latin1')],
      ['headerless-without-extension', readFileSync(byName('recorder-ulaw').path)],
    ];
    await Promise.all(uploads.map(([name, body]) => pc.store.put(`${mixed}${name}`, body)));
    const started = await startBackfill(pc, {
      batchId: `corpus-mixed-${run}`,
      source: { kind: 'prefix', bucket: pc.store.bucket, prefix: mixed },
      output: { bucket: pc.store.bucket, prefix: `${prefix}mixed-results/` },
    });
    const result = (await started.handle.result()) as BackfillResult;
    const rows = (JSON.parse(await pc.store.getText(result.reportJsonKey)) as { rows: ReportRow[] }).rows;
    // Reports show sources as reportedSource masks them (a run of digits in the random prefix too).
    const row = (name: string) =>
      rows.find((r) => r.source === reportedSource(`s3://${pc.store.bucket}/${mixed}${name}`));
    for (const name of ['recording-without-extension', 'asterisk.g722', 'phone.3gp'])
      expect(row(name)?.status, `${name}: ${JSON.stringify(rows)}`).toBe('done');
    // A sidecar is left out by its name (filtered, no request, no row); an unknown name by content.
    expect(row('notes.txt')).toBeUndefined();
    expect(result.filtered).toBe(1);
    expect(row('export.dat')).toMatchObject({
      status: 'skipped',
      reason: "not a recording: text (extension 'dat', checked by content)",
    });
    expect(row('invoice')).toMatchObject({
      status: 'skipped',
      reason: 'not a recording: PDF document (no extension, checked by content)',
    });
    expect(row('headerless-without-extension')?.reason).toMatch(/needs its extension/);
    expect(result.done).toBe(3);
    expect(result.skipped).toBe(3);
  });
});

describe('bad-input corpus: broken manifests', () => {
  it('fails a manifest with a broken CSV quote at once, naming the problem', async () => {
    const c = byName('manifest-broken-quote');
    const manifestKey = `${prefix}${c.key}`;
    await pc.store.put(manifestKey, readFileSync(c.path, 'utf8').replaceAll('{prefix}', prefix));
    const started = await startBackfill(pc, {
      batchId: `corpus-broken-${run}`,
      source: { kind: 'manifest', bucket: pc.store.bucket, key: manifestKey },
      output,
    });
    const failure = await started.handle.result().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeDefined();
    // The reason sits at the bottom of WorkflowFailed → ActivityFailure → ApplicationFailure.
    let e = failure as { cause?: unknown; message?: string };
    while (e.cause) e = e.cause as typeof e;
    if (c.expected.status === 'batch-failed') expect(e.message).toMatch(c.expected.reason);
    // Not retried: a CSV does not get better by reading it again. The history records each activity's
    // last attempt, so every one must be the first.
    const history = await started.handle.fetchHistory();
    const attempts = (history.events ?? []).flatMap((ev) =>
      ev.activityTaskStartedEventAttributes ? [ev.activityTaskStartedEventAttributes.attempt] : [],
    );
    expect(attempts.length).toBeGreaterThan(0);
    expect(attempts.every((a) => a === 1)).toBe(true);
  });
});
