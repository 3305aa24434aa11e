/**
 * The redacted copy of a recording (docs/personal-data.md): every channel decoded to 16-bit PCM at the
 * recording's own rate, each redacted span (redaction-spans.ts) replaced by a tone or by silence, encoded
 * as FLAC (lossless, so what is not masked is the recording sample for sample), then checked by decoding
 * the copy back: the same number of frames as the recording, over every span the tone (most of the
 * span's energy at the tone's frequency, at the tone's level, on every channel) or digital silence, and
 * everywhere else the recording's own samples (a hash of the frames outside the spans, taken from the
 * recording on the way in and from the copy on the way back). The masking is done here on the samples,
 * not by an ffmpeg filter, so that a span starts and ends on the exact frame rather than on the edge of
 * one of ffmpeg's frames; ffmpeg decodes and encodes, through our wrapper only.
 *
 * Fail-closed: a span that does not fit the audio, or a copy that does not check out, gives a reason
 * instead of a copy; the caller then writes nothing.
 */
import { createHash, type Hash } from 'node:crypto';
import { Transform, Writable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { REDACTED_AUDIO_TONE_HZ, REDACTED_AUDIO_TONE_PEAK } from '../../schemas/limits.ts';
import { runFfmpeg, spawnFfmpeg } from './ffmpeg.ts';
import { timeBoundMs, withinTimeBound, type MediaTimeBounds } from './time-bound.ts';
import { inputArgs, type MediaInput } from './media-input.ts';
import { clipSpans, spansBeyondAudio, walkSpans, type FrameSpan } from './redaction-spans.ts';

export type AudioMask = 'tone' | 'silence';

const BYTES_PER_SAMPLE = 2;
const FULL_SCALE = 32768;
/** Share of a span's energy that must lie at the tone's frequency (a clean tone measures about 0.99). */
const MIN_TONE_SHARE = 0.9;
/** The tone's level must be within this many dB of what was written. */
const TONE_LEVEL_TOLERANCE_DB = 1;

/** One sample of the tone, `offset` frames into a span. */
export function toneSample(offset: number, sampleRate: number): number {
  const v = REDACTED_AUDIO_TONE_PEAK * Math.sin((2 * Math.PI * REDACTED_AUDIO_TONE_HZ * offset) / sampleRate);
  return Math.round(v * (FULL_SCALE - 1)) + 0; // + 0: never -0
}

/**
 * Walks a stream of interleaved s16le frames against the spans, in whatever chunks it comes: counts the
 * frames, hashes those outside the spans, hands each stretch inside one to `inside`. The recording (on the
 * way in) and the copy (on the way back) are walked alike, so their hashes compare.
 */
class FrameWalker {
  frames = 0;
  readonly outside: Hash = createHash('sha256');
  readonly frameBytes: number;
  private rest: Buffer = Buffer.alloc(0);
  private readonly cursor = { span: 0 };

  private readonly spans: readonly FrameSpan[];
  constructor(spans: readonly FrameSpan[], channels: number) {
    this.spans = spans;
    this.frameBytes = BYTES_PER_SAMPLE * channels;
  }

  /** The chunk's whole frames (with a partial frame left from the last chunk), walked; the rest is kept. */
  walk(
    chunk: Buffer,
    inside: (buf: Buffer, span: number, first: number, count: number, offsetInSpan: number) => void,
  ): Buffer {
    const fb = this.frameBytes;
    const joined = this.rest.length ? Buffer.concat([this.rest, chunk]) : chunk;
    const count = Math.floor(joined.length / fb);
    const buf = joined.subarray(0, count * fb);
    this.rest = Buffer.from(joined.subarray(count * fb));
    walkSpans(this.spans, this.cursor, this.frames, count, {
      outside: (first, n) => this.outside.update(buf.subarray(first * fb, (first + n) * fb)),
      inside: (span, first, n, offset) => inside(buf, span, first, n, offset),
    });
    this.frames += count;
    return buf;
  }

  /** Why the stream cannot have ended here, if it cannot. */
  endError(what: string): Error | null {
    return this.rest.length ? new Error(`${what} ended inside a sample frame`) : null;
  }
}

/** Interleaved s16le frames in, the same frames out with every span masked. */
class SpanMasker extends Transform {
  readonly walker: FrameWalker;

  private readonly channels: number;
  private readonly mask: AudioMask;
  private readonly sampleRate: number;
  constructor(spans: readonly FrameSpan[], channels: number, mask: AudioMask, sampleRate: number) {
    super();
    this.channels = channels;
    this.mask = mask;
    this.sampleRate = sampleRate;
    this.walker = new FrameWalker(spans, channels);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const fb = this.walker.frameBytes;
    const out = this.walker.walk(chunk, (buf, _span, first, n, offset) => {
      for (let i = 0; i < n; i++) {
        const v = this.mask === 'tone' ? toneSample(offset + i, this.sampleRate) : 0;
        for (let ch = 0; ch < this.channels; ch++)
          buf.writeInt16LE(v, (first + i) * fb + ch * BYTES_PER_SAMPLE);
      }
    });
    callback(null, out);
  }

  override _flush(callback: TransformCallback): void {
    callback(this.walker.endError('the decoded recording'));
  }
}

/** Per span and channel: energy, loudest sample and a Goertzel filter at the tone's frequency. */
interface SpanMeasure {
  frames: number;
  energy: number[];
  peak: number[];
  s1: number[];
  s2: number[];
}

/** Reads the decoded copy: counts frames, hashes those outside the spans, measures those inside. */
class CopyReader extends Writable {
  readonly walker: FrameWalker;
  readonly measures: SpanMeasure[];
  private readonly coefficient: number;

  private readonly channels: number;
  constructor(spans: readonly FrameSpan[], channels: number, sampleRate: number) {
    super();
    this.channels = channels;
    this.walker = new FrameWalker(spans, channels);
    this.coefficient = 2 * Math.cos((2 * Math.PI * REDACTED_AUDIO_TONE_HZ) / sampleRate);
    const zeros = () => Array.from({ length: channels }, () => 0);
    this.measures = spans.map(() => ({
      frames: 0,
      energy: zeros(),
      peak: zeros(),
      s1: zeros(),
      s2: zeros(),
    }));
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    const fb = this.walker.frameBytes;
    this.walker.walk(chunk, (buf, span, first, n) => {
      const m = this.measures[span]!;
      m.frames += n;
      for (let ch = 0; ch < this.channels; ch++) {
        let s1 = m.s1[ch]!;
        let s2 = m.s2[ch]!;
        let energy = 0;
        let peak = m.peak[ch]!;
        for (let i = 0; i < n; i++) {
          const x = buf.readInt16LE((first + i) * fb + ch * BYTES_PER_SAMPLE) / FULL_SCALE;
          const s = x + this.coefficient * s1 - s2;
          s2 = s1;
          s1 = s;
          energy += x * x;
          peak = Math.max(peak, Math.abs(x));
        }
        m.s1[ch] = s1;
        m.s2[ch] = s2;
        m.energy[ch]! += energy;
        m.peak[ch] = peak;
      }
    });
    callback(null);
  }

  override _final(callback: (err?: Error | null) => void): void {
    callback(this.walker.endError('the copy'));
  }
}

/** Why span `i`'s channel `ch` does not carry the mask, or undefined when it does. */
function maskProblem(m: SpanMeasure, ch: number, mask: AudioMask, coefficient: number): string | undefined {
  if (mask === 'silence') {
    return m.peak[ch]! === 0
      ? undefined
      : `is not silent (peak ${(20 * Math.log10(m.peak[ch]!)).toFixed(1)} dBFS)`;
  }
  const n = m.frames;
  const energy = m.energy[ch]!;
  if (n === 0 || energy === 0) return 'carries no tone';
  const s1 = m.s1[ch]!;
  const s2 = m.s2[ch]!;
  // Goertzel: a sine of amplitude A over n samples gives power (A·n/2)² and energy A²·n/2, so the share is 1.
  const power = s1 * s1 + s2 * s2 - coefficient * s1 * s2;
  const share = (2 * power) / (n * energy);
  const levelDb = 10 * Math.log10(energy / n / (REDACTED_AUDIO_TONE_PEAK ** 2 / 2));
  if (share < MIN_TONE_SHARE) return `has ${Math.round(share * 100)} % of its energy in the tone`;
  if (Math.abs(levelDb) > TONE_LEVEL_TOLERANCE_DB)
    return `has the tone ${levelDb.toFixed(1)} dB off its level`;
  return undefined;
}

export interface RedactedAudioJob {
  /** The recording as ffmpeg reads it (media-input.ts openInput). */
  input: MediaInput;
  sampleRate: number;
  channels: number;
  /** Sorted, disjoint (redaction-spans.ts mapRedactionSpans). */
  spans: FrameSpan[];
  mask: AudioMask;
  /** Where the FLAC copy goes (a local file; the caller uploads it once it checked out). */
  outPath: string;
  signal?: AbortSignal;
  /**
   * The recording (its path as the reason names it), size and length, which bound the two passes in
   * wall-clock time (time-bound.ts). A job without its length (a call started before it was passed)
   * has no bound: its size alone would bound a long recording's decode too tightly.
   */
  bound?: { path: string; sizeBytes: number; audioSeconds: number; timeBounds?: MediaTimeBounds };
}

export type RedactedAudioOutcome =
  { ok: true; frames: number; spans: FrameSpan[]; maskedSeconds: number } | { ok: false; reason: string };

/** Decodes, masks and encodes the copy; returns the recording's length in frames and its outside hash. */
async function maskCopy(job: RedactedAudioJob): Promise<{ frames: number; outside: string }> {
  const { input, sampleRate, channels, signal } = job;
  const pcm = ['-c:a', 'pcm_s16le', '-f', 's16le'];
  const rate = ['-ar', String(sampleRate), '-ac', String(channels)];
  const decode = spawnFfmpeg(
    ['-v', 'error', ...inputArgs(input), '-map', `0:${input.streamIndex}`, '-vn', ...rate, ...pcm, 'pipe:1'],
    { signal },
  );
  const masker = new SpanMasker(job.spans, channels, job.mask, sampleRate);
  decode.stdout.on('error', (err) => masker.destroy(err));
  decode.stdout.pipe(masker);
  const encode = runFfmpeg(
    ['-v', 'error', '-f', 's16le', ...rate, '-i', 'pipe:0', '-c:a', 'flac', '-f', 'flac', '-y', job.outPath],
    { stdin: masker, signal },
  );
  const [decoded, encoded] = await Promise.allSettled([decode.done, encode]);
  if (decoded.status === 'rejected') throw decoded.reason;
  if (encoded.status === 'rejected') throw encoded.reason;
  return { frames: masker.walker.frames, outside: masker.walker.outside.digest('hex') };
}

/**
 * Decodes the copy at `job.outPath` back and says what is wrong with it (empty: nothing), given the
 * recording's length in frames and the hash of its frames outside `spans` (as the masking pass saw them).
 */
export async function checkRedactedCopy(
  job: Pick<RedactedAudioJob, 'outPath' | 'channels' | 'sampleRate' | 'mask' | 'signal'>,
  spans: FrameSpan[],
  expected: { frames: number; outside: string },
): Promise<string[]> {
  const reader = new CopyReader(spans, job.channels, job.sampleRate);
  const decode = spawnFfmpeg(
    ['-v', 'error', '-i', job.outPath, '-map', '0:a:0', '-c:a', 'pcm_s16le', '-f', 's16le', 'pipe:1'],
    { signal: job.signal },
  );
  const [decoded, read] = await Promise.allSettled([decode.done, pipeline(decode.stdout, reader)]);
  if (decoded.status === 'rejected') throw decoded.reason;
  if (read.status === 'rejected') throw read.reason;
  const problems: string[] = [];
  if (reader.walker.frames !== expected.frames) {
    problems.push(`the copy is ${reader.walker.frames} sample frames long, the recording ${expected.frames}`);
  }
  const coefficient = 2 * Math.cos((2 * Math.PI * REDACTED_AUDIO_TONE_HZ) / job.sampleRate);
  for (const [i, s] of spans.entries()) {
    const m = reader.measures[i]!;
    const where = `span ${i + 1} (${(s.from / job.sampleRate).toFixed(2)}–${(s.to / job.sampleRate).toFixed(2)} s)`;
    if (m.frames !== s.to - s.from) {
      problems.push(`${where} is ${m.frames} frames long in the copy, not ${s.to - s.from}`);
      continue;
    }
    for (let ch = 0; ch < job.channels; ch++) {
      const problem = maskProblem(m, ch, job.mask, coefficient);
      if (problem) problems.push(`${where} on channel ${ch + 1} ${problem}`);
    }
  }
  if (reader.walker.outside.digest('hex') !== expected.outside) {
    problems.push('the copy differs from the recording outside the redacted spans');
  }
  return problems;
}

/**
 * Writes the redacted copy to `job.outPath` and checks it. `ok: false` says why the copy must not be
 * used (the caller deletes it); ffmpeg's own failures throw, typed as media errors, to be retried.
 */
export async function writeRedactedAudio(job: RedactedAudioJob): Promise<RedactedAudioOutcome> {
  const { bound } = job;
  if (!bound) return maskAndCheck(job);
  // Two passes over the whole recording (mask, then check): each within the bound of one.
  const ms = 2 * timeBoundMs(bound, bound.timeBounds);
  return withinTimeBound('the redacted copy', bound.path, ms, job.signal, (signal) =>
    maskAndCheck({ ...job, signal }),
  );
}

async function maskAndCheck(job: RedactedAudioJob): Promise<RedactedAudioOutcome> {
  const made = await maskCopy(job);
  const beyond = spansBeyondAudio(job.spans, made.frames, job.sampleRate);
  if (beyond) return { ok: false, reason: beyond };
  const spans = clipSpans(job.spans, made.frames);
  const problems = await checkRedactedCopy(job, spans, made);
  if (problems.length) {
    const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : '';
    return {
      ok: false,
      reason: `the redacted copy did not check out: ${problems.slice(0, 3).join('; ')}${more}`,
    };
  }
  const maskedFrames = spans.reduce((n, s) => n + (s.to - s.from), 0);
  return { ok: true, frames: made.frames, spans, maskedSeconds: maskedFrames / job.sampleRate };
}
