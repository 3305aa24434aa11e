/**
 * The corpus of bench/speakers.ts: mono calls whose voices are known, built once and cached under
 * `.callpipe/bench-speakers/<hash of the generator's parameters>/`.
 *
 * Speech calls: Japanese kana lines (an agent in service keigo, a customer, backchannels) spoken by
 * espeak-ng voices that differ per call (variant, pitch, speed), each speaker's leg through its own
 * telephone path (activities/media/telephone-path.ts: band, tilt, level, G.711 or GSM, line noise),
 * summed to 8-kHz mono. Backchannels fall in the other's pauses or over their sentences, and some turns
 * start before the other has finished. DTMF calls: the pipeline's synthetic recordings (call-script.ts,
 * fixture.ts), each leg rendered alone and mixed through two different paths, so the legs differ by their
 * path only.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generateCallScript } from '../../activities/media/call-script.ts';
import { renderFixture } from '../../activities/media/fixture.ts';
import { mixLegs, TELEPHONE_PATHS, type TelephonePath } from '../../activities/media/telephone-path.ts';
import { seededRandom, type Random } from '../../schemas/seeded-random.ts';
import { phraseDurationSeconds, type TelephonePathName } from '../../schemas/synthetic-recording.ts';

const run = promisify(execFile);

/** Bump when the generator changes in a way its parameters do not show. */
const GENERATOR_VERSION = 4;

export type CallKind = 'two-voice' | 'one-voice' | 'three-voice' | 'dtmf';

/** One speaker's stretch of speech, as the script placed it (trimmed to the audible sound). */
export interface Segment {
  speaker: number;
  start: number;
  end: number;
}

/** What a recognizer reports: overlapping segments merged, the truth being who holds most of the span. */
export interface TruthSpan {
  start: number;
  end: number;
  speaker: number;
  /** Seconds of each speaker inside the span. */
  seconds: Record<number, number>;
}

export interface CorpusCall {
  id: string;
  kind: CallKind;
  /** Voices the call really holds. */
  voices: number;
  /** The mixed 8-kHz mono WAV. */
  path: string;
  durationSeconds: number;
  segments: Segment[];
  spans: TruthSpan[];
  /** Who speaks through what, for the report. */
  description: string;
}

// Kana only: espeak-ng's Japanese voice reads no kanji.
const AGENT_LINES = [
  'おでんわ ありがとう ございます。 かすたまあ せんたあの やまだで ございます。',
  'ほんじつは どのような ごようけん でしょうか。',
  'おそれいりますが、 おなまえを ちょうだい できますでしょうか。',
  'ごけいやくの ばんごうを おしえて いただけますか。',
  'かくにん いたしますので、 しょうしょう おまち いただけますでしょうか。',
  'たいへん おまたせ いたしました。',
  'ごふべんを おかけして もうしわけ ございません。',
  'ただいまの ごじょうきょうを もうすこし くわしく おうかがい しても よろしいでしょうか。',
  'こちらで てつづきを すすめさせて いただきます。',
  'せいきゅうしょは らいげつの はじめに おとどけ いたします。',
  'ほかに ごふめいな てんは ございますでしょうか。',
  'おてすうですが、 ほんにん かくにんの ため、 せいねんがっぴを おねがい いたします。',
  'かしこまりました。 それでは へんこうの おてつづきを いたします。',
  'ごれんらく さきの でんわばんごうに おまちがいは ございませんか。',
  'きゃんぺえんの ごあんないも させて いただいて よろしいでしょうか。',
  'りょうきん ぷらんの へんこうは らいげつから てきよう されます。',
  'おしはらいの ほうほうを かくにん させて いただきます。',
  'ごようぼうは たんとう ぶしょに しっかりと おつたえ いたします。',
  'まことに おそれいりますが、 もういちど おねがい できますでしょうか。',
  'ほんじつは おでんわ いただき、 まことに ありがとう ございました。',
  'それでは しつれい いたします。',
  'ごいけん ありがとう ございます。 こんごの さあびすに いかして まいります。',
];
const CUSTOMER_LINES = [
  'あの、 せいきゅうしょの ことで ちょっと ききたいんですけど。',
  'けいやく ばんごうは ちょっと いま てもとに ないんです。',
  'さとう です。 さとう はなこ です。',
  'せんげつから りょうきんが たかく なってる みたいで。',
  'ああ、 そうなんですね。 わかりました。',
  'いや、 それは きいて ないですね。',
  'はい、 それで だいじょうぶです。',
  'いつごろ とどきますか。',
  'じゃあ、 その ぷらんに かえて ください。',
  'でんわばんごうは かわって ないです。',
  'ちょっと まって ください、 いま かくにん します。',
  'なんども でんわ してるんですけど、 つながらなくて。',
  'それって てすうりょう かかりますか。',
  'ええと、 たぶん きょねんの しがつ ごろ だったと おもいます。',
  'わかりました、 ありがとう ございます。',
  'ほかは とくに ないです。',
  'ああ、 はい、 おねがい します。',
  'すみません、 もう いちど いって もらえますか。',
];
const BACKCHANNELS = ['はい', 'ええ', 'はい はい', 'そうですね', 'ええ、 ええ', 'はい、 わかりました'];
const TRANSFER_LINE = 'それでは たんとうの ものに おつなぎ いたします。 しょうしょう おまち ください。';
const VOICEMAIL_LINES = [
  ...CUSTOMER_LINES.slice(0, 4),
  'また あとで かけなおします。 よろしく おねがい します。',
];

/** espeak-ng variants that sound like people (no robots, whispers or effects). */
const VARIANTS = [
  'm1',
  'm2',
  'm3',
  'm4',
  'm5',
  'm6',
  'm7',
  'f1',
  'f2',
  'f3',
  'f4',
  'f5',
  'adam',
  'andy',
  'benjamin',
  'david',
  'edward',
  'john',
  'linda',
  'max',
  'michel',
  'paul',
  'rob',
  'robert',
  'steph',
  'travis',
  'victor',
  'belinda',
  'aunty',
  'annie',
  'quincy',
];

interface Voice {
  variant: string;
  pitch: number;
  speed: number;
}

const ESPEAK_RATE = 22050;

interface Parameters {
  version: number;
  twoVoiceCalls: number;
  oneVoiceCalls: number;
  threeVoiceCalls: number;
  dtmfCalls: number;
  seed: number;
  paths: typeof TELEPHONE_PATHS;
  lines: string[][];
  variants: string[];
}

export interface CorpusOptions {
  root: string;
  twoVoiceCalls?: number;
  dtmfCalls?: number;
  seed?: number;
  log?: (line: string) => void;
}

/** The corpus: from the cache when its parameters are unchanged, else built (minutes). */
export async function speakerCorpus(options: CorpusOptions): Promise<CorpusCall[]> {
  const parameters: Parameters = {
    version: GENERATOR_VERSION,
    twoVoiceCalls: options.twoVoiceCalls ?? 20,
    oneVoiceCalls: 3,
    threeVoiceCalls: 6,
    dtmfCalls: options.dtmfCalls ?? 6,
    seed: options.seed ?? 1,
    paths: TELEPHONE_PATHS,
    lines: [AGENT_LINES, CUSTOMER_LINES, BACKCHANNELS, [TRANSFER_LINE], VOICEMAIL_LINES],
    variants: VARIANTS,
  };
  const hash = createHash('sha256').update(JSON.stringify(parameters)).digest('hex').slice(0, 16);
  const dir = join(options.root, hash);
  const manifest = join(dir, 'corpus.json');
  if (existsSync(manifest)) return JSON.parse(await readFile(manifest, 'utf8')) as CorpusCall[];
  await mkdir(dir, { recursive: true });
  const log = options.log ?? (() => {});
  const calls: CorpusCall[] = [];
  const random = seededRandom(parameters.seed);
  const synth = new Synthesizer(join(dir, 'speech'));
  for (let i = 0; i < parameters.twoVoiceCalls; i++) {
    calls.push(await speechCall(dir, `two-${i + 1}`, 'two-voice', random, synth));
    log(`built ${calls.at(-1)!.id}: ${calls.at(-1)!.description}`);
  }
  for (let i = 0; i < parameters.oneVoiceCalls; i++) {
    calls.push(await speechCall(dir, `one-${i + 1}`, 'one-voice', random, synth));
    log(`built ${calls.at(-1)!.id}: ${calls.at(-1)!.description}`);
  }
  for (let i = 0; i < parameters.threeVoiceCalls; i++) {
    calls.push(await speechCall(dir, `three-${i + 1}`, 'three-voice', random, synth));
    log(`built ${calls.at(-1)!.id}: ${calls.at(-1)!.description}`);
  }
  for (let i = 0; i < parameters.dtmfCalls; i++) {
    calls.push(await dtmfCall(dir, `dtmf-${i + 1}`, i, parameters.seed));
    log(`built ${calls.at(-1)!.id}: ${calls.at(-1)!.description}`);
  }
  await writeFile(`${manifest}.tmp`, JSON.stringify(calls));
  await rename(`${manifest}.tmp`, manifest);
  return calls;
}

const between = (random: Random, lo: number, hi: number) => lo + random() * (hi - lo);
const pick = <T>(random: Random, list: readonly T[]): T => list[Math.floor(random() * list.length)]!;

/** A path near a preset: its level moved by up to ±3 dB, so no two calls sound quite alike. */
function pathNear(random: Random, name: TelephonePathName): TelephonePath {
  const preset = TELEPHONE_PATHS[name];
  return { ...preset, gainDb: Math.round((preset.gainDb + between(random, -3, 3)) * 10) / 10 };
}

function distinctVoices(random: Random, count: number): Voice[] {
  const voices: Voice[] = [];
  while (voices.length < count) {
    const variant = pick(random, VARIANTS);
    if (voices.some((v) => v.variant === variant)) continue;
    voices.push({
      variant,
      pitch: Math.round(between(random, 25, 75)),
      speed: Math.round(between(random, 140, 185)),
    });
  }
  return voices;
}

/** One utterance's prosody: pitch and speed vary a little from line to line, as a person's do. */
const spoken = (random: Random, v: Voice): Voice => ({
  ...v,
  pitch: Math.max(0, Math.min(99, v.pitch + Math.round(between(random, -6, 6)))),
  speed: Math.round(v.speed * between(random, 0.93, 1.07)),
});

const voiceText = (v: Voice) => `${v.variant} p${v.pitch} s${v.speed}`;

/** espeak-ng's audio of one line, trimmed to its audible part; cached on disk by voice and text. */
class Synthesizer {
  readonly dir: string;
  constructor(dir: string) {
    this.dir = dir;
  }

  async say(voice: Voice, text: string): Promise<Float32Array> {
    await mkdir(this.dir, { recursive: true });
    const key = createHash('sha256')
      .update(JSON.stringify([voice, text]))
      .digest('hex')
      .slice(0, 20);
    const file = join(this.dir, `${key}.f32`);
    if (existsSync(file)) {
      const b = await readFile(file);
      return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
    }
    const { stdout } = await run(
      'espeak-ng',
      ['-v', `ja+${voice.variant}`, '-p', String(voice.pitch), '-s', String(voice.speed), '--stdout', text],
      { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
    );
    const data = stdout.indexOf('data');
    const pcm = stdout.subarray(data + 8);
    const samples = new Float32Array(pcm.length >> 1);
    for (let i = 0; i < samples.length; i++) samples[i] = pcm.readInt16LE(2 * i) / 32768;
    const audible = (x: number) => Math.abs(x) > 0.01;
    const first = Math.max(0, samples.findIndex(audible) - 100);
    let last = samples.length - 1;
    while (last > first && !audible(samples[last]!)) last--;
    const trimmed = samples.slice(first, Math.min(samples.length, last + 100));
    await writeFile(file, Buffer.from(trimmed.buffer));
    return trimmed;
  }
}

interface Placed {
  speaker: number;
  start: number;
  audio: Float32Array;
}

/** A speech call of `kind`, written to `<dir>/<id>.wav`. */
async function speechCall(
  dir: string,
  id: string,
  kind: 'two-voice' | 'one-voice' | 'three-voice',
  random: Random,
  synth: Synthesizer,
): Promise<CorpusCall> {
  const placed: Placed[] = [];
  const seconds = (a: Float32Array) => a.length / ESPEAK_RATE;
  const end = (p: Placed) => p.start + seconds(p.audio);
  let voices: Voice[];
  let pathNames: TelephonePathName[];
  if (kind === 'one-voice') {
    voices = distinctVoices(random, 1);
    pathNames = [pick(random, Object.keys(TELEPHONE_PATHS) as TelephonePathName[])];
    // A voicemail (the customer's lines) or an announcement (the agent's), a minute or two.
    const lines = random() < 0.5 ? [...VOICEMAIL_LINES, ...CUSTOMER_LINES] : AGENT_LINES;
    const target = between(random, 60, 120);
    let t = 0.5;
    for (let i = 0; t < target; i++) {
      const audio = await synth.say(spoken(random, voices[0]!), lines[i % lines.length]!);
      placed.push({ speaker: 0, start: t, audio });
      t += seconds(audio) + between(random, 0.4, 1.5);
    }
  } else {
    const count = kind === 'three-voice' ? 3 : 2;
    voices = distinctVoices(random, count);
    const names = Object.keys(TELEPHONE_PATHS) as TelephonePathName[];
    pathNames = [];
    while (pathNames.length < count) {
      const name = pick(random, names);
      // Two speakers on the same kind of line happen, but not in every call.
      if (pathNames.includes(name) && random() < 0.7) continue;
      pathNames.push(name);
    }
    const target = between(random, 120, 600);
    // Speaker 1 is the customer; the agent is 0, then 2 after a transfer half way.
    let agent = 0;
    let t = 0.5;
    let speaker = 0;
    let transferred = kind !== 'three-voice';
    while (t < target) {
      const isAgent = speaker !== 1;
      const sentences = isAgent ? 1 + Math.floor(random() * 3) : 1 + Math.floor(random() * 2);
      for (let s = 0; s < sentences; s++) {
        const line =
          !isAgent && random() < 0.2
            ? pick(random, BACKCHANNELS)
            : pick(random, isAgent ? AGENT_LINES : CUSTOMER_LINES);
        const audio = await synth.say(spoken(random, voices[speaker]!), line);
        const p = { speaker, start: t, audio };
        placed.push(p);
        t = end(p);
        // The listener's backchannel: over the sentence, or in the pause after it.
        const listener = speaker === 1 ? agent : 1;
        let gap = between(random, 0.25, 0.8);
        if (seconds(audio) > 2 && random() < 0.35) {
          const bc = await synth.say(
            spoken(random, voices[listener]!),
            pick(random, BACKCHANNELS.slice(0, 3)),
          );
          // After a turn's last sentence the listener speaks next: the backchannel goes over the sentence.
          if (s === sentences - 1 || random() < 0.5) {
            placed.push({
              speaker: listener,
              start: p.start + seconds(audio) * between(random, 0.35, 0.65),
              audio: bc,
            });
          } else {
            placed.push({ speaker: listener, start: t + 0.25, audio: bc });
            gap = Math.max(gap, seconds(bc) + 0.5);
          }
        }
        if (s < sentences - 1) t += gap;
      }
      if (!transferred && t > target / 2 && speaker === 1) {
        const p = {
          speaker: agent,
          start: t + 0.6,
          audio: await synth.say(spoken(random, voices[agent]!), TRANSFER_LINE),
        };
        placed.push(p);
        t = end(p) + between(random, 4, 10);
        agent = 2;
        transferred = true;
        speaker = agent;
        continue;
      }
      // The other answers after a pause, or now and then before the sentence has ended.
      t += random() < 0.12 ? -between(random, 0.2, 0.6) : between(random, 0.3, 1.2);
      speaker = speaker === 1 ? agent : 1;
    }
  }

  const durationSeconds = Math.ceil(Math.max(...placed.map(end)) + 1);
  const legs: { input: string; path: TelephonePath }[] = [];
  for (let v = 0; v < voices.length; v++) {
    const leg = new Float32Array(Math.round(durationSeconds * ESPEAK_RATE));
    for (const p of placed.filter((x) => x.speaker === v)) {
      const at = Math.round(p.start * ESPEAK_RATE);
      for (let i = 0; i < p.audio.length && at + i < leg.length; i++)
        leg[at + i] = leg[at + i]! + p.audio[i]!;
    }
    const input = join(dir, `${id}.leg${v}.wav`);
    await writeFile(input, wav16(leg, ESPEAK_RATE));
    legs.push({ input, path: pathNear(random, pathNames[v]!) });
  }
  const path = join(dir, `${id}.wav`);
  await mixLegs(legs, path);
  const segments = placed
    .map((p) => ({ speaker: p.speaker, start: round3(p.start), end: round3(end(p)) }))
    .sort((a, b) => a.start - b.start);
  const role = (v: number) =>
    kind === 'one-voice' ? 'voice' : v === 1 ? 'customer' : v === 0 ? 'agent' : 'agent 2';
  return {
    id,
    kind,
    voices: voices.length,
    path,
    durationSeconds,
    segments,
    spans: mergeSpans(segments),
    description: voices
      .map((v, i) => `${role(i)} ${voiceText(v)} via ${pathNames[i]} ${legs[i]!.path.gainDb} dB`)
      .join(', '),
  };
}

/** Path pairs of the DTMF calls: the pipeline's recordings differ by nothing else. */
const DTMF_PAIRS: [TelephonePathName, TelephonePathName][] = [
  ['headset', 'mobile-gsm'],
  ['landline', 'mobile-gsm'],
  ['headset', 'landline'],
  ['landline', 'far-line'],
  ['headset', 'far-line'],
  ['mobile-gsm', 'far-line'],
];

/** A DTMF call: the generator's stereo script, each channel rendered alone as a leg, then mixed. */
async function dtmfCall(dir: string, id: string, index: number, seed: number): Promise<CorpusCall> {
  const random = seededRandom(seed * 1000 + index);
  const durationSeconds = Math.round(between(random, 120, 600));
  const script = generateCallScript({ durationSeconds, seed: seed * 100 + index, stereo: true });
  const pair = DTMF_PAIRS[index % DTMF_PAIRS.length]!;
  const legs: { input: string; path: TelephonePath }[] = [];
  for (let c = 0; c < 2; c++) {
    const input = join(dir, `${id}.leg${c}.wav`);
    await renderFixture(
      { durationSeconds, background: 'silence', channels: [script.channels[c] ?? { phrases: [] }] },
      input,
      { sampleRate: 8000 },
    );
    legs.push({ input, path: TELEPHONE_PATHS[pair[c]!] });
  }
  const path = join(dir, `${id}.wav`);
  await mixLegs(legs, path);
  const segments = script.channels
    .flatMap((channel, speaker) =>
      channel.phrases.map((p) => ({
        speaker,
        start: p.start,
        end: round3(p.start + phraseDurationSeconds(p.id)),
      })),
    )
    .sort((a, b) => a.start - b.start);
  return {
    id,
    kind: 'dtmf',
    voices: 2,
    path,
    durationSeconds,
    segments,
    spans: mergeSpans(segments),
    description: `agent via ${pair[0]}, customer via ${pair[1]}`,
  };
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** Segments as a recognizer reports them: overlapping ones (of any speakers) merged into one span. */
export function mergeSpans(segments: readonly Segment[]): TruthSpan[] {
  const sorted = [...segments].sort((a, b) => a.start - b.start);
  const groups: Segment[][] = [];
  let groupEnd = -Infinity;
  for (const s of sorted) {
    if (s.start < groupEnd) {
      groups.at(-1)!.push(s);
      groupEnd = Math.max(groupEnd, s.end);
    } else {
      groups.push([s]);
      groupEnd = s.end;
    }
  }
  return groups.map((g) => {
    const seconds: Record<number, number> = {};
    for (const s of g) seconds[s.speaker] = (seconds[s.speaker] ?? 0) + (s.end - s.start);
    const speaker = Number(Object.entries(seconds).sort((a, b) => b[1] - a[1])[0]![0]);
    return { start: g[0]!.start, end: Math.max(...g.map((s) => s.end)), speaker, seconds };
  });
}

/** A 16-bit mono WAV file of `samples`. */
function wav16(samples: Float32Array, rate: number): Buffer {
  const b = Buffer.alloc(44 + samples.length * 2);
  b.write('RIFF', 0);
  b.writeUInt32LE(36 + samples.length * 2, 4);
  b.write('WAVEfmt ', 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(rate, 24);
  b.writeUInt32LE(rate * 2, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36);
  b.writeUInt32LE(samples.length * 2, 40);
  for (let i = 0; i < samples.length; i++) {
    b.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(samples[i]! * 32767))), 44 + 2 * i);
  }
  return b;
}
