/**
 * The bad-input corpus (issue 7, item 4): recordings and manifests that production throws at the
 * pipeline, generated on demand (never committed as binaries), each with the outcome we promise for it.
 * test/integration/bad-inputs.test.ts processes them on the real stack; test/corpus/README.md is the
 * table of cases and outcomes.
 *
 *   npx tsx test/corpus/generate.ts <dir>     writes the corpus and prints the cases as JSON
 *
 * Three kinds of case:
 * - `file`: a recording submitted on its own (all of them in one batch) under `key`;
 * - `plan-only`: too long to stream in a test run; its plan and one transcoded session are checked;
 * - `manifest`: rows of a backfill manifest (`rows` names other cases' keys, or objects never uploaded).
 */
import { mkdirSync, openSync, readSync, closeSync, writeFileSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FixtureScript } from '../../schemas/synthetic-recording.ts';
import type { PlanOptions } from '../../schemas/plan.ts';
import { generateCallScript } from '../../activities/media/call-script.ts';
import { seededRandom } from '../../schemas/seeded-random.ts';
import { renderFixture, type FixtureOptions } from '../../activities/media/fixture.ts';
import { runFfmpeg } from '../../activities/media/ffmpeg.ts';

/** What processing a case must end in. */
export type CorpusOutcome =
  | {
      status: 'done';
      /** Speaker labels of the script's channels (the transcript must equal the script). */
      speakers: string[];
      /** What else the result must show, in words (the test checks it). */
      note: string;
    }
  | { status: 'failed'; stage: 'probe' | 'plan' | 'transcode'; reason: RegExp; note: string }
  | { status: 'batch-failed'; reason: RegExp; note: string }
  | {
      status: 'manifest';
      /** The report's rows: one per call (a duplicate row folds into its call's row). */
      rows: { key: string; status: 'done' | 'missing' }[];
      /** Rows counted as skipped: duplicates of an earlier row. */
      duplicates: number;
      note: string;
    };

export interface CorpusCase {
  /** Short stable name (test titles, the README table). */
  name: string;
  /** What the input is. */
  what: string;
  kind: 'file' | 'plan-only' | 'manifest';
  /** Local file (for `manifest`: the CSV). */
  path: string;
  /** Object key under the corpus prefix it is uploaded to (relative; the test adds its run prefix). */
  key: string;
  /** false: the local store refuses the key; the call is submitted without an upload. */
  uploadable?: false;
  /** The script the recording was rendered from, when it carries phrases. */
  script?: FixtureScript;
  /** Plan options the case is submitted with (the 10-hour call: balanced, budget 16). */
  plan?: PlanOptions;
  expected: CorpusOutcome;
}

/** Balanced planning over the account's 16 sessions: how a 10-hour call should be cut (issue 7 item 1). */
export const TEN_HOUR_PLAN: PlanOptions = { strategy: 'balanced', budget: 16 };
export const TEN_HOURS = 36_000;

/** A short conversation: long enough for several phrases, short enough to stream in seconds at speed 100. */
const SHORT_CALL_SECONDS = 12;

async function renderCall(
  path: string,
  script: FixtureScript,
  options: FixtureOptions = {},
): Promise<FixtureScript> {
  await renderFixture(script, path, options);
  return script;
}

/** Multiplies the sizes a WAV's RIFF and `data` chunk headers claim. */
function patchWavDataSize(path: string, factor: number): void {
  const buf = readFileSync(path);
  const dataAt = buf.indexOf('data', 12, 'ascii');
  if (dataAt < 0) throw new Error(`${path}: no data chunk`);
  const real = buf.readUInt32LE(dataAt + 4);
  // The header now claims `factor` times the samples that follow: a recorder that crashed before
  // fixing up its header, or one that pre-allocated the size.
  const claimed = Math.min(0xfffffff0, real * factor);
  buf.writeUInt32LE(claimed, dataAt + 4);
  buf.writeUInt32LE(claimed + dataAt, 4);
  writeFileSync(path, buf);
}

/** Multiplies the frame count of an MP3's Xing/Info header (what ffprobe reports its duration from). */
function patchXingFrames(path: string, factor: number): void {
  const buf = readFileSync(path);
  const at = [buf.indexOf('Xing', 0, 'ascii'), buf.indexOf('Info', 0, 'ascii')].find((i) => i >= 0);
  if (at === undefined) throw new Error(`${path}: no Xing/Info header`);
  const flags = buf.readUInt32BE(at + 4);
  if (!(flags & 1)) throw new Error(`${path}: the Xing header has no frame count`);
  buf.writeUInt32BE(buf.readUInt32BE(at + 8) * factor, at + 8);
  writeFileSync(path, buf);
}

function headOf(path: string, bytes: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    readSync(fd, buf, 0, bytes, 0);
    return buf;
  } finally {
    closeSync(fd);
  }
}

/** A few phrases spread over `seconds` of silence: the shape of a long, mostly idle line. */
function sparseScript(seconds: number, count: number, seed: number): FixtureScript {
  const random = seededRandom(seed);
  const phrases = Array.from({ length: count }, (_, i) => ({
    id: 1 + Math.floor(random() * 89),
    start: Math.round(((i + 0.5) * seconds * 1000) / count) / 1000,
  }));
  return { durationSeconds: seconds, background: 'silence', channels: [{ phrases }] };
}

/**
 * Writes every case's input under `dir` and returns the cases. Idempotent: the same dir gets the same
 * bytes (seeded), except the random-bytes file, which is random by nature and seeded too.
 */
export async function generateCorpus(dir: string): Promise<CorpusCase[]> {
  mkdirSync(dir, { recursive: true });
  const at = (name: string) => join(dir, name);
  const cases: CorpusCase[] = [];

  // --- unreadable inputs: each fails at probe with a reason, and the batch goes on -------------------
  writeFileSync(at('empty.wav'), Buffer.alloc(0));
  cases.push({
    name: 'empty',
    what: '0-byte file named .wav',
    kind: 'file',
    path: at('empty.wav'),
    key: 'files/empty.wav',
    expected: { status: 'failed', stage: 'probe', reason: /is empty \(0 bytes\)/, note: 'probe: empty' },
  });

  // A real WAV cut inside its 44-byte header.
  const whole = at('whole-for-truncation.wav');
  await renderCall(whole, generateCallScript({ durationSeconds: 3, stereo: false, seed: 2 }));
  writeFileSync(at('truncated-header.wav'), headOf(whole, 30));
  cases.push({
    name: 'truncated-header',
    what: 'WAV cut after 30 bytes (inside its header)',
    kind: 'file',
    path: at('truncated-header.wav'),
    key: 'files/truncated-header.wav',
    expected: {
      status: 'failed',
      stage: 'probe',
      reason: /not a readable audio file|no audio|cannot decode|zero duration/,
      note: 'probe: not readable',
    },
  });

  // Seeded "random" bytes: the same file every run, so a failure is reproducible.
  const random = seededRandom(99);
  writeFileSync(
    at('random.wav'),
    Buffer.from(Array.from({ length: 64 * 1024 }, () => Math.floor(random() * 256))),
  );
  cases.push({
    name: 'random-bytes',
    what: '64 KiB of random bytes named .wav',
    kind: 'file',
    path: at('random.wav'),
    key: 'files/random.wav',
    expected: {
      status: 'failed',
      stage: 'probe',
      reason: /not a readable audio file|no audio|cannot decode|zero duration/,
      note: 'probe: not readable',
    },
  });

  writeFileSync(at('notes.mp3'), 'Call notes: customer asked about the invoice.\nFollow up on Monday.\n');
  cases.push({
    name: 'text-as-mp3',
    what: 'a text file named .mp3',
    kind: 'file',
    path: at('notes.mp3'),
    key: 'files/notes.mp3',
    expected: {
      status: 'failed',
      stage: 'probe',
      reason: /not a readable audio file|no audio|cannot decode|zero duration/,
      note: 'probe: not readable',
    },
  });

  // --- video ------------------------------------------------------------------------------------------
  const videoAudio = at('video-audio.wav');
  const videoScript = await renderCall(
    videoAudio,
    generateCallScript({ durationSeconds: SHORT_CALL_SECONDS, stereo: true, seed: 21 }),
    { sampleRate: 16000 },
  );
  const testsrc = (seconds: number) => [
    '-f',
    'lavfi',
    '-i',
    `testsrc=size=160x120:rate=10:duration=${seconds}`,
  ];
  // The video stream comes first, as in screen recordings: the audio is stream 1.
  await runFfmpeg([
    '-v',
    'error',
    ...testsrc(SHORT_CALL_SECONDS),
    '-i',
    videoAudio,
    '-map',
    '0:v',
    '-map',
    '1:a',
    '-c:v',
    'mpeg4',
    '-c:a',
    'aac',
    '-b:a',
    '96k',
    '-shortest',
    '-y',
    at('video-with-audio.mp4'),
  ]);
  cases.push({
    name: 'video-with-audio',
    what: 'MP4: testsrc video (stream 0) + stereo DTMF call in AAC (stream 1)',
    kind: 'file',
    path: at('video-with-audio.mp4'),
    key: 'files/video-with-audio.mp4',
    script: videoScript,
    expected: { status: 'done', speakers: ['agent', 'customer'], note: 'audio stream used; hasVideo true' },
  });

  await runFfmpeg(['-v', 'error', ...testsrc(5), '-c:v', 'mpeg4', '-an', '-y', at('video-no-audio.mp4')]);
  cases.push({
    name: 'video-no-audio',
    what: 'MP4 with a video stream and no audio',
    kind: 'file',
    path: at('video-no-audio.mp4'),
    key: 'files/video-no-audio.mp4',
    expected: {
      status: 'failed',
      stage: 'probe',
      reason: /a video with no audio track/,
      note: 'probe: video with no audio track',
    },
  });

  // --- lengths ----------------------------------------------------------------------------------------
  const oneSecond: FixtureScript = {
    durationSeconds: 1,
    background: 'silence',
    channels: [{ phrases: [{ id: 12, start: 0.2 }] }],
  };
  await renderCall(at('one-second.wav'), oneSecond);
  cases.push({
    name: 'one-second',
    what: '1-second mono 8 kHz call with one phrase',
    kind: 'file',
    path: at('one-second.wav'),
    key: 'files/one-second.wav',
    script: oneSecond,
    expected: { status: 'done', speakers: ['mixed'], note: 'one session, one utterance' },
  });

  const silentHour: FixtureScript = {
    durationSeconds: 3600,
    background: 'silence',
    channels: [{ phrases: [] }],
  };
  await renderCall(at('silent-hour.wav'), silentHour);
  cases.push({
    name: 'silent-hour',
    what: 'an hour of digital silence, mono 8 kHz WAV',
    kind: 'file',
    path: at('silent-hour.wav'),
    key: 'files/silent-hour.wav',
    script: silentHour,
    expected: {
      status: 'done',
      speakers: ['mixed'],
      note: 'no utterances; no text step fails on the empty transcript',
    },
  });

  // FLAC keeps 10 hours of silence at a few MB on disk and in S3, while it decodes to the full length.
  const tenHours = sparseScript(TEN_HOURS, 20, 10);
  await renderCall(at('ten-hours.flac'), tenHours);
  cases.push({
    name: 'ten-hours',
    what: '10-hour mono 8 kHz call (FLAC), silence with 20 phrases',
    kind: 'plan-only',
    path: at('ten-hours.flac'),
    key: 'files/ten-hours.flac',
    script: tenHours,
    plan: TEN_HOUR_PLAN,
    expected: {
      status: 'done',
      speakers: ['mixed'],
      note: 'balanced plan, budget 16: 16 sessions ≤ 3,000 s cut in silence; transcode length exact',
    },
  });

  // --- formats ----------------------------------------------------------------------------------------
  const sixChannels = await renderCall(
    at('hires-6ch.wav'),
    generateCallScript({ durationSeconds: SHORT_CALL_SECONDS, stereo: true, seed: 31 }),
    { sampleRate: 96000, channels: 6 },
  );
  cases.push({
    name: 'hires-6ch',
    what: '96 kHz 6-channel WAV (agent on 0, customer on 1, four silent channels)',
    kind: 'file',
    path: at('hires-6ch.wav'),
    key: 'files/hires-6ch.wav',
    script: sixChannels,
    expected: { status: 'done', speakers: ['mixed', 'mixed'], note: 'mixed down to one track' },
  });

  const alaw = await renderCall(
    at('alaw-8k.wav'),
    generateCallScript({ durationSeconds: SHORT_CALL_SECONDS, stereo: false, seed: 41 }),
    { wavCodec: 'pcm_alaw' },
  );
  cases.push({
    name: 'alaw-8k',
    what: '8 kHz mono A-law WAV',
    kind: 'file',
    path: at('alaw-8k.wav'),
    key: 'files/alaw-8k.wav',
    script: alaw,
    expected: { status: 'done', speakers: ['mixed'], note: 'codec pcm_alaw' },
  });

  const lying = await renderCall(
    at('lying-duration.wav'),
    generateCallScript({ durationSeconds: SHORT_CALL_SECONDS, stereo: false, seed: 51 }),
  );
  patchWavDataSize(at('lying-duration.wav'), 10);
  cases.push({
    name: 'lying-duration-wav',
    what: 'WAV whose RIFF and data sizes claim 10× the samples it holds',
    kind: 'file',
    path: at('lying-duration.wav'),
    key: 'files/lying-duration.wav',
    script: lying,
    expected: {
      status: 'done',
      speakers: ['mixed'],
      note: 'duration is the decoded 12 s (ffprobe clamps the data size to the file too)',
    },
  });

  const lyingMp3 = await renderCall(
    at('lying-xing.mp3'),
    generateCallScript({ durationSeconds: SHORT_CALL_SECONDS, stereo: false, seed: 52 }),
  );
  patchXingFrames(at('lying-xing.mp3'), 10);
  cases.push({
    name: 'lying-duration-mp3',
    what: 'CBR MP3 whose Xing/Info header claims 10× its frames (ffprobe says ~122 s)',
    kind: 'file',
    path: at('lying-xing.mp3'),
    key: 'files/lying-xing.mp3',
    script: lyingMp3,
    expected: {
      status: 'done',
      speakers: ['mixed'],
      note: 'duration is the decoded ~12 s; the header’s claim is ignored',
    },
  });

  // --- keys -------------------------------------------------------------------------------------------
  const keyCall = async (name: string, key: string, seed: number, what: string) => {
    const script = await renderCall(
      at(`${name}.wav`),
      generateCallScript({ durationSeconds: 6, stereo: false, seed }),
    );
    cases.push({
      name,
      what,
      kind: 'file',
      path: at(`${name}.wav`),
      key,
      script,
      expected: {
        status: 'done',
        speakers: ['mixed'],
        note: 'safe call id; outputs under the output prefix',
      },
    });
  };
  await keyCall('key-spaces', 'keys/agent 7/call of 2024 05 01.wav', 61, 'object key with spaces');
  await keyCall(
    'key-non-ascii',
    'keys/東京センター/通話①－お客様.wav',
    62,
    'object key with non-ASCII characters',
  );
  await keyCall('key-absolute', '/keys/absolute.wav', 64, "absolute-looking key (leading '/')");
  // S3-compatible stores differ: AWS keeps `../` in a key verbatim, SeaweedFS (our local store) refuses
  // to hold it. The call is submitted all the same, as a manifest or an S3 event could name it.
  cases.push({
    name: 'key-dotdot',
    what: "object key with '../' segments (refused by the local S3 store)",
    kind: 'file',
    path: at('key-spaces.wav'),
    key: 'keys/../../results/escape/../../x.wav',
    uploadable: false,
    expected: {
      status: 'failed',
      stage: 'probe',
      reason: /^cannot read s3:\/\/.*: object storage refused it \(400 /,
      note: 'error.json under the output prefix, with a safe call id',
    },
  });

  // --- manifests --------------------------------------------------------------------------------------
  // Keys are relative to the run's prefix; the test rewrites `{prefix}` before uploading.
  writeFileSync(
    at('manifest.csv'),
    'key,agent\n' +
      '{prefix}keys/agent 7/call of 2024 05 01.wav,alice\n' +
      '{prefix}keys/東京センター/通話①－お客様.wav,bob\n' +
      '{prefix}keys/never-uploaded.wav,carol\n' +
      '{prefix}keys/../../escape.wav,dave\n' +
      '{prefix}keys/agent 7/call of 2024 05 01.wav,alice\n',
  );
  cases.push({
    name: 'manifest',
    what: 'manifest: two good rows (keys with spaces and non-ASCII), a missing object, a duplicate row',
    kind: 'manifest',
    path: at('manifest.csv'),
    key: 'manifests/manifest.csv',
    expected: {
      status: 'manifest',
      rows: [
        { key: 'keys/agent 7/call of 2024 05 01.wav', status: 'done' },
        { key: 'keys/東京センター/通話①－お客様.wav', status: 'done' },
        { key: 'keys/never-uploaded.wav', status: 'missing' },
        { key: 'keys/../../escape.wav', status: 'missing' },
      ],
      duplicates: 1,
      note: 'missing and refused keys: report rows `missing` with the reason; the duplicate row starts nothing (progress `skipped`, reason "duplicate of manifest line 2")',
    },
  });

  writeFileSync(
    at('broken-quote.csv'),
    'key,agent\n' + '{prefix}keys/a.wav,"alice\n' + '{prefix}keys/b.wav,bob\n',
  );
  cases.push({
    name: 'manifest-broken-quote',
    what: 'manifest with an unclosed CSV quote',
    kind: 'manifest',
    path: at('broken-quote.csv'),
    key: 'manifests/broken-quote.csv',
    expected: {
      status: 'batch-failed',
      reason: /manifest is not valid CSV: .*[Qq]uote/,
      note: 'the batch fails at once with the CSV error and its line; no call starts',
    },
  });

  return cases;
}

/** JSON-friendly view of the cases (RegExps as their source). */
export function describeCases(cases: CorpusCase[]) {
  return cases.map(({ script: _script, expected, ...c }) => ({
    ...c,
    expected: 'reason' in expected ? { ...expected, reason: expected.reason.source } : expected,
  }));
}

async function main(): Promise<void> {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: tsx test/corpus/generate.ts <dir>');
    process.exit(2);
  }
  const cases = await generateCorpus(resolve(dir));
  console.log(JSON.stringify(describeCases(cases), null, 2));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
