/**
 * The bad-input corpus (issue 7, item 4): recordings and manifests that production throws at the
 * pipeline, generated on demand (never committed as binaries), each with the outcome we promise for it.
 * test/integration/bad-inputs.test.ts processes them on the real stack; test/corpus/README.md is the
 * table of cases and outcomes.
 *
 *   node scripts/on-node.mjs ts test/corpus/generate.ts <dir>   writes the corpus and prints the cases as JSON
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
import { encodeAmrNb } from '../helpers/amr-encoder.ts';
import { writeDamagedMp3, writeEncoded, writeVideo } from '../helpers/media-fixtures.ts';

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
  /** Plan options the case is submitted with (the long silent call: balanced, budget 16). */
  plan?: PlanOptions;
  /** The codec ffprobe must name (`audio.codec` in result.json), for the format cases. */
  codec?: string;
  expected: CorpusOutcome;
}

/** Balanced planning over the account's 16 sessions: how a long call should be cut (issue 7 item 1). */
export const LONG_CALL_PLAN: PlanOptions = { strategy: 'balanced', budget: 16 };
/**
 * The long silent call: hours of silence with 20 phrases. Two hours show what ten did (a silence that is
 * never planned, a transcode that seeks far into a FLAC) at a fifth of the analysis.
 */
export const LONG_SILENT_SECONDS = 7_200;

/** A short conversation: long enough for several phrases, short enough to stream in seconds at speed 100. */
const SHORT_CALL_SECONDS = 12;
/** The AMR call of issue 13: long enough for silences that DTX codes as comfort noise. */
export const AMR_CALL_SECONDS = 75;
/** The hum call of issue 13: three minutes of held silence, then nine phrases. */
export const HUM_CALL_SECONDS = 230;
/** The long-hold call: talk, a 20-minute hold, talk again. */
const HOLD_SECONDS = 1200;
const HOLD_EDGE_SECONDS = 20;
/** DC offset (-26 dBFS) and hum amplitudes (50 Hz at -35 dBFS RMS, 100 Hz at -45 dBFS RMS), full scale 1. */
const HUM = { dc: 0.05, hum50: 0.0251, hum100: 0.0079 };

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

/** Where a case's files go: `name` in the corpus directory. */
type At = (name: string) => string;

/** Unreadable inputs: each fails at probe with a reason, and the batch goes on. */
async function unreadableCases(at: At): Promise<CorpusCase[]> {
  const cases: CorpusCase[] = [];
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
  return cases;
}

/** Video files: the audio stream of one is used; one with no audio fails at probe. */
async function videoCases(at: At): Promise<CorpusCase[]> {
  const cases: CorpusCase[] = [];
  const videoAudio = at('video-audio.wav');
  const videoScript = await renderCall(
    videoAudio,
    generateCallScript({ durationSeconds: SHORT_CALL_SECONDS, stereo: true, seed: 21 }),
    { sampleRate: 16000 },
  );
  // The video stream comes first, as in screen recordings: the audio is stream 1.
  await writeVideo(at('video-with-audio.mp4'), SHORT_CALL_SECONDS, videoAudio);
  cases.push({
    name: 'video-with-audio',
    what: 'MP4: testsrc video (stream 0) + stereo DTMF call in AAC (stream 1)',
    kind: 'file',
    path: at('video-with-audio.mp4'),
    key: 'files/video-with-audio.mp4',
    script: videoScript,
    expected: { status: 'done', speakers: ['agent', 'customer'], note: 'audio stream used; hasVideo true' },
  });

  await writeVideo(at('video-no-audio.mp4'), 5);
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
  return cases;
}

/** Lengths: a second, an hour of silence, and the long silent call (planned only). */
async function lengthCases(at: At): Promise<CorpusCase[]> {
  const cases: CorpusCase[] = [];
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
  const longSilent = sparseScript(LONG_SILENT_SECONDS, 20, 10);
  await renderCall(at('long-silent.flac'), longSilent);
  cases.push({
    name: 'long-silent',
    what: '2-hour mono 8 kHz call (FLAC), silence with 20 phrases',
    kind: 'plan-only',
    path: at('long-silent.flac'),
    key: 'files/long-silent.flac',
    script: longSilent,
    plan: LONG_CALL_PLAN,
    expected: {
      status: 'done',
      speakers: ['mixed'],
      note: 'silence not planned: one short session around each phrase; transcode length exact',
    },
  });
  return cases;
}

/** Formats that strain the probe: six channels at 96 kHz, A-law, headers that lie about the length. */
async function mislabelledFormatCases(at: At): Promise<CorpusCase[]> {
  const cases: CorpusCase[] = [];
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
  return cases;
}

/**
 * What PBXs and call recorders write (issue 13): headerless telephony formats, named by their
 * extension alone, and files whose name does not say what the content is.
 */
async function telephonyCases(at: At): Promise<CorpusCase[]> {
  const cases: CorpusCase[] = [];
  // Headerless telephony formats: nothing in the file says what it is, only the extension.
  const telephonyCall = generateCallScript({ durationSeconds: SHORT_CALL_SECONDS, stereo: false, seed: 71 });
  const telephonyWav16k = at('telephony-16k.wav');
  await renderCall(telephonyWav16k, { ...telephonyCall, background: 'noise' }, { sampleRate: 16000 });
  const raw = async (name: string, what: string, encode: string[]) => {
    await writeEncoded(telephonyWav16k, at(name), encode);
    cases.push({
      name: name.replace('.', '-'),
      what,
      kind: 'file',
      path: at(name),
      key: `telephony/${name}`,
      script: telephonyCall,
      expected: { status: 'done', speakers: ['mixed'], note: 'read as its extension names it' },
    });
  };
  const to8k = ['-ar', '8000', '-ac', '1'];
  await raw('asterisk.g722', 'raw G.722 as Asterisk writes it (.g722, no header)', [
    '-c:a',
    'g722',
    '-f',
    'g722',
  ]);
  await raw('recorder.ulaw', 'raw G.711 mu-law (.ulaw, no header)', [...to8k, '-f', 'mulaw']);
  await raw('recorder.alaw', 'raw G.711 A-law (.alaw, no header)', [...to8k, '-f', 'alaw']);
  await raw('asterisk.gsm', 'raw GSM 06.10 (.gsm, no header)', [...to8k, '-c:a', 'libgsm', '-f', 'gsm']);
  await raw('asterisk.sln16', 'Asterisk signed linear at 16 kHz (.sln16, no header)', ['-f', 's16le']);
  // Names that do not say what the content is: the content decides.
  await raw('wav-named.ulaw', 'a WAV file named .ulaw (the header wins over the extension)', [
    ...to8k,
    '-f',
    'wav',
  ]);
  await raw('no-extension', 'a WAV file with no extension', [...to8k, '-f', 'wav']);
  await raw('opus-named.wav', 'Opus in Ogg named .wav', ['-c:a', 'libopus', '-b:a', '24k', '-f', 'ogg']);

  await raw('asterisk.g726', 'raw G.726 32 kbit/s, RFC 3551 packing (.g726, no header)', [
    ...to8k,
    '-c:a',
    'g726le',
    '-code_size',
    '4',
    '-f',
    'g726le',
  ]);
  return cases;
}

/** Formats with a header, as recorders, softphones and browsers write them: each read by its content. */
async function recorderFormatCases(at: At): Promise<CorpusCase[]> {
  const cases: CorpusCase[] = [];
  const formats: { name: string; what: string; codec: string; stereo: boolean; encode: string[] }[] = [
    {
      name: 'recorder.mp3',
      what: 'MP3 44.1 kHz stereo, VBR (a call recorder export)',
      codec: 'mp3',
      stereo: true,
      encode: ['-ar', '44100', '-c:a', 'libmp3lame', '-q:a', '5'],
    },
    {
      name: 'archive.flac',
      what: 'FLAC 16 kHz mono',
      codec: 'flac',
      stereo: false,
      encode: ['-ar', '16000', '-ac', '1', '-c:a', 'flac'],
    },
    {
      name: 'softphone.opus',
      what: 'Opus in Ogg, 48 kHz stereo (a softphone recording)',
      codec: 'opus',
      stereo: true,
      // 64 kbit/s, as softphones record stereo: at 32 kbit/s Opus codes the two sides jointly, and the
      // agent's first word leaks into the customer's channel at -17 dBFS (heard as a 〈不明〉 blip).
      encode: ['-c:a', 'libopus', '-b:a', '64k'],
    },
    {
      name: 'browser.webm',
      what: 'Opus in WebM, mono (a browser MediaRecorder upload)',
      codec: 'opus',
      stereo: false,
      encode: ['-ac', '1', '-c:a', 'libopus', '-b:a', '24k'],
    },
    {
      name: 'studio-24bit.wav',
      what: '24-bit PCM WAV, 48 kHz stereo',
      codec: 'pcm_s24le',
      stereo: true,
      encode: ['-c:a', 'pcm_s24le'],
    },
    {
      name: 'float.wav',
      what: '32-bit float WAV, 44.1 kHz mono',
      codec: 'pcm_f32le',
      stereo: false,
      encode: ['-ar', '44100', '-ac', '1', '-c:a', 'pcm_f32le'],
    },
  ];
  for (const [i, f] of formats.entries()) {
    const script = generateCallScript({
      durationSeconds: SHORT_CALL_SECONDS,
      stereo: f.stereo,
      seed: 81 + i,
    });
    const wav = at(`${f.name}-source.wav`);
    await renderCall(wav, { ...script, background: 'noise' }, { sampleRate: 48000 });
    await writeEncoded(wav, at(f.name), f.encode);
    cases.push({
      name: f.name.replace('.', '-'),
      what: f.what,
      kind: 'file',
      path: at(f.name),
      key: `formats/${f.name}`,
      script,
      codec: f.codec,
      expected: {
        status: 'done',
        speakers: f.stereo ? ['agent', 'customer'] : ['mixed'],
        note: `codec ${f.codec}`,
      },
    });
  }
  return cases;
}

/** A long hold: both sides quiet over line noise for 20 minutes between the opening and the close. */
async function longHoldCases(at: At): Promise<CorpusCase[]> {
  const cases: CorpusCase[] = [];
  const opening = generateCallScript({ durationSeconds: HOLD_EDGE_SECONDS, stereo: true, seed: 87 });
  const close = generateCallScript({ durationSeconds: HOLD_EDGE_SECONDS, stereo: true, seed: 88 });
  const resumeAt = HOLD_EDGE_SECONDS + HOLD_SECONDS;
  const holdScript: FixtureScript = {
    durationSeconds: resumeAt + HOLD_EDGE_SECONDS,
    background: 'noise',
    channels: [0, 1].map((c) => ({
      phrases: [
        ...opening.channels[c]!.phrases,
        ...close.channels[c]!.phrases.map((p) => ({ ...p, start: p.start + resumeAt })),
      ],
    })),
  };
  await renderCall(at('long-hold.wav'), holdScript);
  cases.push({
    name: 'long-hold',
    what: `stereo call with a ${HOLD_SECONDS / 60}-minute hold (line noise only) between its opening and its close`,
    kind: 'file',
    path: at('long-hold.wav'),
    key: 'lines/long-hold.wav',
    script: holdScript,
    expected: {
      status: 'done',
      speakers: ['agent', 'customer'],
      note: 'the phrases after the hold at their times; the hold is silence on both channels',
    },
  });
  return cases;
}

/**
 * Recordings damaged on the way, refused with the damage named (the packet gap re-encodes the WebM
 * source {@link recorderFormatCases} writes).
 */
async function damagedCases(at: At): Promise<CorpusCase[]> {
  const cases: CorpusCase[] = [];
  // A browser recording that lost 5 s of packets at 6 s (a network drop): its timestamps jump, its audio
  // does not. Decoded, every phrase after the drop would come 5 s early; refused, with the gap named.
  await writeEncoded(at('browser.webm-source.wav'), at('packet-gap.webm'), [
    '-af',
    "asetpts='if(gte(T,6),PTS+5/TB,PTS)'",
    '-ac',
    '1',
    '-c:a',
    'libopus',
    '-b:a',
    '24k',
  ]);
  cases.push({
    name: 'packet-gap',
    what: 'Opus in WebM whose timestamps jump 5 s at 6 s (packets lost in a network drop)',
    kind: 'file',
    path: at('packet-gap.webm'),
    key: 'formats/packet-gap.webm',
    expected: {
      status: 'failed',
      stage: 'probe',
      reason:
        /its packets hold 12(\.\d+)? s of audio over 17\.\d+ s of timestamps \(its timestamps jump over 5\.\d+ s with no audio in them/,
      note: 'probe: the packets read without decoding, the gap named',
    },
  });

  // An MP3 damaged in its middle: every frame header is intact (the packets hold 20 s), a fifth of the
  // frames' payload is noise, which the decoder drops while exiting 0. Decoded, every phrase after the
  // damage would come early; refused when the plan, which decodes every sample, counts the loss.
  await writeDamagedMp3(at('undamaged.mp3'), at('damaged-frames.mp3'));
  cases.push({
    name: 'damaged-frames',
    what: 'CBR MP3 (20 s) whose middle fifth of frames carry noise after intact headers',
    kind: 'file',
    path: at('damaged-frames.mp3'),
    key: 'formats/damaged-frames.mp3',
    expected: {
      status: 'failed',
      stage: 'plan',
      reason:
        /decodes to 1\d\.\d+ s but its packets hold 20\.\d+ s \(\d+\.\d+ s of it did not decode, which would shift every later time\)$/,
      note: 'plan: the decoded length checked against the packets the probe read',
    },
  });
  return cases;
}

/** What phones record (issue 13): AMR-NB with DTX, alone and in 3GP. */
async function phoneCases(at: At): Promise<CorpusCase[]> {
  const cases: CorpusCase[] = [];
  // AMR-NB with DTX, as phones record it: 75 s whose silences (over line noise) are comfort-noise and
  // NO_DATA frames, which ffmpeg's decoder drops (to about 22 s) while exiting 0. One leg: the encoder's own
  // voice detection would take a quiet far leg's phrase for silence, and this case checks the decoding.
  const amrCall = generateCallScript({
    durationSeconds: AMR_CALL_SECONDS,
    stereo: false,
    seed: 73,
    legs: null,
  });
  await renderCall(at('amr-source.wav'), { ...amrCall, background: 'noise' });
  encodeAmrNb(at('amr-source.wav'), at('phone-dtx.amr'));
  cases.push({
    name: 'amr-dtx',
    what: `AMR-NB 12.2 kbit/s with DTX (comfort-noise and NO_DATA frames), ${AMR_CALL_SECONDS} s`,
    kind: 'file',
    path: at('phone-dtx.amr'),
    key: 'phones/phone-dtx.amr',
    script: amrCall,
    expected: { status: 'done', speakers: ['mixed'], note: `${AMR_CALL_SECONDS} s counted from its frames` },
  });
  // The same frames in a 3GP file, as Android's recorder writes them.
  await writeEncoded(at('phone-dtx.amr'), at('phone-dtx.3gp'), ['-c:a', 'copy']);
  cases.push({
    name: 'amr-dtx-3gp',
    what: `the same AMR-NB frames with DTX in a 3GP container`,
    kind: 'file',
    path: at('phone-dtx.3gp'),
    key: 'phones/phone-dtx.3gp',
    script: amrCall,
    expected: { status: 'done', speakers: ['mixed'], note: `${AMR_CALL_SECONDS} s counted from its frames` },
  });
  return cases;
}

/** What lines do to a call: hum and DC, mono up-mixed to stereo, a dead leg. */
async function lineCases(at: At): Promise<CorpusCase[]> {
  const cases: CorpusCase[] = [];
  // Line hum and DC offset under three minutes of leading silence (a call answered, then held): DC at
  // -26 dBFS, 50 Hz hum at -35 dBFS RMS and its 100 Hz harmonic at -45 dBFS on every sample.
  const humScript: FixtureScript = {
    durationSeconds: HUM_CALL_SECONDS,
    background: 'silence',
    channels: [
      {
        phrases: Array.from({ length: 9 }, (_, i) => ({ id: 11 + i * 7, start: 180 + i * 4.5 })),
      },
    ],
  };
  await renderCall(at('hum-clean.wav'), humScript);
  await writeEncoded(at('hum-clean.wav'), at('hum-dc.wav'), [
    '-af',
    `aeval='val(0)+${HUM.dc}+${HUM.hum50}*sin(2*PI*50*t)+${HUM.hum100}*sin(2*PI*100*t)'`,
    '-c:a',
    'pcm_s16le',
  ]);
  cases.push({
    name: 'hum-dc',
    what: 'DC offset and 50 Hz mains hum (-35 dBFS) under 3 min of leading silence, 9 phrases',
    kind: 'file',
    path: at('hum-dc.wav'),
    key: 'lines/hum-dc.wav',
    script: humScript,
    expected: {
      status: 'done',
      speakers: ['mixed'],
      note: 'DC and hum removed: silences found, every cut in silence, 9 phrases at their times',
    },
  });

  // Mono up-mixed to stereo: the same signal on both channels (and once with the right channel 2 dB lower).
  const monoCall = generateCallScript({ durationSeconds: SHORT_CALL_SECONDS, stereo: false, seed: 79 });
  await renderCall(at('mono-for-upmix.wav'), { ...monoCall, background: 'noise' });
  const upmix = async (name: string, pan: string, what: string) => {
    await writeEncoded(at('mono-for-upmix.wav'), at(name), ['-af', pan]);
    cases.push({
      name: name.replace('.wav', ''),
      what,
      kind: 'file',
      path: at(name),
      key: `upmixed/${name}`,
      script: monoCall,
      expected: {
        status: 'done',
        speakers: ['mixed'],
        note: 'recognized once, as mixed; the decision in result.json',
      },
    });
  };
  await upmix(
    'duplicated-stereo.wav',
    'pan=stereo|c0=c0|c1=c0',
    'mono up-mixed to stereo: both channels identical',
  );
  await upmix(
    'near-duplicate-stereo.wav',
    'pan=stereo|c0=c0|c1=0.8*c0',
    'the same signal on both channels, one 2 dB lower',
  );

  // A stereo call whose customer channel carries only line noise (a dead leg of the recorder).
  const oneSided: FixtureScript = {
    ...generateCallScript({ durationSeconds: SHORT_CALL_SECONDS, stereo: false, seed: 77 }),
    background: 'noise',
  };
  const oneSidedStereo = { ...oneSided, channels: [oneSided.channels[0]!, { phrases: [] }] };
  await renderCall(at('silent-channel.wav'), oneSidedStereo);
  cases.push({
    name: 'silent-channel',
    what: 'stereo call whose second channel is line noise only',
    kind: 'file',
    path: at('silent-channel.wav'),
    key: 'lines/silent-channel.wav',
    script: oneSidedStereo,
    expected: { status: 'done', speakers: ['agent', 'customer'], note: 'channel 1 silent: not recognized' },
  });
  return cases;
}

/** Object keys that are hard to carry: spaces, non-ASCII, a leading slash, `../`. */
async function keyCases(at: At): Promise<CorpusCase[]> {
  const cases: CorpusCase[] = [];
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
  return cases;
}

/** Backfill manifests: rows good, missing, refused and repeated; a broken CSV quote. */
async function manifestCases(at: At): Promise<CorpusCase[]> {
  const cases: CorpusCase[] = [];
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
      reason: /manifest refused: line 2: a quote opened here is never closed/,
      note: 'the batch fails at once with the CSV error and its line; no call starts',
    },
  });
  return cases;
}

/**
 * Writes every case's input under `dir` and returns the cases. Idempotent: the same dir gets the same
 * bytes (seeded), except the random-bytes file, which is random by nature and seeded too.
 */
export async function generateCorpus(dir: string): Promise<CorpusCase[]> {
  mkdirSync(dir, { recursive: true });
  const at = (name: string) => join(dir, name);
  const cases: CorpusCase[] = [];
  // In this order: the packet gap reuses a source the recorder formats write.
  for (const section of [
    unreadableCases,
    videoCases,
    lengthCases,
    mislabelledFormatCases,
    telephonyCases,
    recorderFormatCases,
    longHoldCases,
    damagedCases,
    phoneCases,
    lineCases,
    keyCases,
    manifestCases,
  ]) {
    cases.push(...(await section(at)));
  }
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
    console.error('usage: node test/corpus/generate.ts <dir>');
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
