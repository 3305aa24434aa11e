/**
 * Simulated telephone paths, for mono recordings of two speakers that sound like a PBX's: each
 * speaker's leg reaches the recorder through its own line (band limits, a microphone's or line's
 * spectral tilt, a level, a codec, line noise), and the recorder sums the legs into one channel. So a
 * speaker is told apart by how their leg sounds, as in real recordings, not by a channel.
 *
 * Everything runs at 8 kHz, the rate of a telephone line: a leg is resampled, filtered, passed through
 * its codec and back, then gets its noise; the legs are summed at unit weight and the sum is resampled
 * to the rate asked. No normalization: the level difference between the legs is part of what they are.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { TelephonePathName } from '../../schemas/synthetic-recording.ts';
import { MediaError } from './errors.ts';
import { runFfmpeg, runFfprobe } from './ffmpeg.ts';
import { makeScratchDir } from '../scratch.ts';

export interface TelephonePath {
  /** Gain of the leg in dB. */
  gainDb: number;
  /** Band limits of the line, Hz (each edge a fourth-order roll-off; the upper one below 4,000 Hz). */
  bandHz: readonly [number, number];
  /**
   * Spectral tilt in dB per octave: the slope at 1 kHz of a first-order shelf that leaves 1 kHz at
   * 0 dB (positive: bright, negative: dull); 0 is flat. A first-order shelf is at most 6 dB per octave.
   */
  tiltDbPerOctave: number;
  /** Codec round trip of the leg, at 8 kHz. */
  codec: 'none' | 'mulaw' | 'alaw' | 'gsm';
  /** Continuous line noise of the leg (white, added after the codec), dBFS RMS; undefined for none. */
  noiseDbfs?: number;
}

/**
 * Named paths. Every one passes the DTMF of synthetic recordings intact: a two-leg mono call of any
 * pair of them decodes phrase for phrase (test/unit/media.two-leg-fixture.test.ts). The tilts stay
 * mild for that reason: across the DTMF band (697–1477 Hz, about an octave) a tilt is also the twist
 * between a symbol's two tones.
 */
export const TELEPHONE_PATHS: Readonly<Record<TelephonePathName, TelephonePath>> = {
  /** A fixed line through a G.711 mu-law trunk: the reference. */
  landline: { gainDb: 0, bandHz: [300, 3400], tiltDbPerOctave: 0, codec: 'mulaw' },
  /** A mobile caller: GSM full rate, quieter, a slightly dull handset. */
  'mobile-gsm': { gainDb: -6, bandHz: [300, 3400], tiltDbPerOctave: -1.5, codec: 'gsm' },
  /** The agent's headset: wider band, A-law, louder and bright. */
  headset: { gainDb: 3, bandHz: [200, 3600], tiltDbPerOctave: 3, codec: 'alaw' },
  /** A long or poor line: quiet, narrow, dull, with audible hiss. */
  'far-line': { gainDb: -10, bandHz: [300, 3000], tiltDbPerOctave: -3, codec: 'mulaw', noiseDbfs: -50 },
};

export interface MixLegsOptions {
  /** Sample rate of the output. Default 8,000. */
  sampleRate?: number;
  /**
   * How to write the output: ffmpeg's muxer and codec arguments. Default: what ffmpeg picks for the
   * file name's extension (16-bit PCM for `.wav`).
   */
  output?: { format: string; codec: readonly string[] };
  signal?: AbortSignal;
}

/** The rate of the line: codecs, filters and the sum run at it. */
const LINE_RATE = 8000;
/** A first-order shelf's slope at its centre approaches 6.02 dB per octave and never reaches it. */
const MAX_TILT_DB_PER_OCTAVE = 6;
const SHELF_CENTRE_HZ = 1000;

function checkPath(path: TelephonePath, leg: number): void {
  const fail = (why: string) => {
    throw new MediaError('invalid-option', `telephone path of leg ${leg}: ${why}`);
  };
  const [low, high] = path.bandHz;
  if (!(low >= 0 && low < high && high < LINE_RATE / 2)) {
    fail(`band ${low}–${high} Hz must rise from 0 Hz up to below ${LINE_RATE / 2} Hz`);
  }
  if (!Number.isFinite(path.gainDb)) fail('gain must be a number of dB');
  if (!(Math.abs(path.tiltDbPerOctave) < MAX_TILT_DB_PER_OCTAVE)) {
    fail(`tilt must be within ±${MAX_TILT_DB_PER_OCTAVE} dB per octave`);
  }
  if (path.noiseDbfs !== undefined && !(path.noiseDbfs < 0)) fail('noise must be below 0 dBFS');
}

/**
 * A first-order shelf with slope `tilt` dB per octave at 1 kHz and 0 dB there, as biquad coefficients at
 * the line rate (bilinear transform, prewarped at 1 kHz). For H(s) = √r·(1 + s/w1)/(1 + s/w2) with
 * w1 = w0/√r and w2 = w0·√r the slope at w0 is 6.02·(r − 1)/(r + 1) dB per octave.
 */
function tiltFilter(tilt: number): string {
  const slope = tilt / (20 * Math.log10(2));
  const r = (1 + slope) / (1 - slope);
  const w0 = 2 * Math.PI * SHELF_CENTRE_HZ;
  const k = w0 / Math.tan(w0 / (2 * LINE_RATE));
  const w1 = w0 / Math.sqrt(r);
  const w2 = w0 * Math.sqrt(r);
  // (s + w1)/(s + w2) scaled by r/√r = √r, then s = k(1 − z⁻¹)/(1 + z⁻¹), divided through by a0.
  const a0 = k + w2;
  const c = Math.sqrt(r);
  const coefficients = {
    b0: (c * (k + w1)) / a0,
    b1: (c * (w1 - k)) / a0,
    b2: 0,
    a0: 1,
    a1: (w2 - k) / a0,
    a2: 0,
  };
  return `biquad=${Object.entries(coefficients)
    .map(([name, value]) => `${name}=${value.toPrecision(12)}`)
    .join(':')}`;
}

/** The filters of a leg before its codec: line rate, band, tilt, gain. */
function lineFilters(path: TelephonePath): string {
  const [low, high] = path.bandHz;
  const filters = [`aresample=${LINE_RATE}`];
  // Two second-order sections per edge: a line's band edges are steep.
  if (low > 0) filters.push(`highpass=f=${low}:poles=2`, `highpass=f=${low}:poles=2`);
  filters.push(`lowpass=f=${high}:poles=2`, `lowpass=f=${high}:poles=2`);
  if (path.tiltDbPerOctave !== 0) filters.push(tiltFilter(path.tiltDbPerOctave));
  if (path.gainDb !== 0) filters.push(`volume=${path.gainDb}dB`);
  return filters.join(',');
}

/** How a leg's codec round trip is stored between the two runs: encoder arguments and how to read it. */
const CODEC_FILES: Record<TelephonePath['codec'], { ext: string; encode: string[]; read: string[] }> = {
  // Float, so a gain above 0 dB is not clipped before the sum.
  none: { ext: 'wav', encode: ['-c:a', 'pcm_f32le', '-f', 'wav'], read: [] },
  mulaw: { ext: 'wav', encode: ['-c:a', 'pcm_mulaw', '-f', 'wav'], read: [] },
  alaw: { ext: 'wav', encode: ['-c:a', 'pcm_alaw', '-f', 'wav'], read: [] },
  gsm: { ext: 'gsm', encode: ['-c:a', 'libgsm', '-f', 'gsm'], read: ['-f', 'gsm', '-sample_rate', '8000'] },
};

/**
 * Waits for every run, then fails with the first failure: the temporary directory is removed only once
 * no ffmpeg writes into it any more.
 */
export async function settleAll<T>(runs: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(runs);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/** Length of an audio file in seconds, from its container. */
async function durationOf(path: string, signal?: AbortSignal): Promise<number> {
  const json = await runFfprobe(['-v', 'error', '-show_entries', 'format=duration', '-of', 'json', path], {
    signal,
  });
  const seconds = Number((JSON.parse(json) as { format?: { duration?: string } }).format?.duration);
  if (!(seconds > 0)) throw new MediaError('zero-duration', `no audio to mix in ${path}`, path);
  return seconds;
}

/**
 * Passes each leg (an audio file of one speaker, any rate and channel count, downmixed) through its
 * telephone path and sums them into one mono file at `outPath`. Shorter legs are padded with silence
 * to the longest; the sum saturates at full scale rather than wrapping.
 */
export async function mixLegs(
  legs: readonly { input: string; path: TelephonePath }[],
  outPath: string,
  options: MixLegsOptions = {},
): Promise<void> {
  const { signal } = options;
  const sampleRate = options.sampleRate ?? LINE_RATE;
  if (legs.length === 0) throw new MediaError('invalid-option', 'no legs to mix');
  if (!Number.isInteger(sampleRate) || sampleRate < LINE_RATE) {
    throw new MediaError('invalid-option', `sample rate must be an integer of at least ${LINE_RATE} Hz`);
  }
  legs.forEach((leg, i) => checkPath(leg.path, i));

  const dir = await makeScratchDir('legs-');
  try {
    const lengths = await settleAll(legs.map((leg) => durationOf(leg.input, signal)));
    const frames = Math.round(Math.max(...lengths) * LINE_RATE);
    const coded = legs.map((leg, i) => join(dir, `leg-${i}.${CODEC_FILES[leg.path.codec].ext}`));
    await settleAll(
      legs.map((leg, i) =>
        runFfmpeg(
          [
            '-v',
            'error',
            '-i',
            leg.input,
            '-ac',
            '1',
            '-af',
            lineFilters(leg.path),
            ...CODEC_FILES[leg.path.codec].encode,
            '-y',
            coded[i]!,
          ],
          { signal },
        ),
      ),
    );

    // Each leg back from its codec, cut or padded to the longest (a codec may pad its last frame), plus
    // its noise; then the sum.
    const graph: string[] = [];
    legs.forEach((leg, i) => {
      const line = `aresample=${LINE_RATE},apad=whole_len=${frames},atrim=end_sample=${frames}`;
      if (leg.path.noiseDbfs === undefined) {
        graph.push(`[${i}:a]${line}[leg${i}]`);
        return;
      }
      // White noise uniform in ±a has an RMS of a/√3.
      const amplitude = Math.min(1, 10 ** (leg.path.noiseDbfs / 20) * Math.sqrt(3));
      graph.push(
        `[${i}:a]${line}[line${i}]`,
        `anoisesrc=r=${LINE_RATE}:color=white:seed=${i + 1}:a=${amplitude.toPrecision(6)}[noise${i}]`,
        `[line${i}][noise${i}]amix=inputs=2:duration=first:normalize=0[leg${i}]`,
      );
    });
    const sum =
      legs.length === 1
        ? `[leg0]anull`
        : `${legs.map((_, i) => `[leg${i}]`).join('')}amix=inputs=${legs.length}:duration=longest:normalize=0`;
    graph.push(`${sum},aresample=${sampleRate}[out]`);

    const output = options.output ? ['-f', options.output.format, ...options.output.codec] : [];
    await runFfmpeg(
      [
        '-v',
        'error',
        ...legs.flatMap((leg, i) => [...CODEC_FILES[leg.path.codec].read, '-i', coded[i]!]),
        '-filter_complex',
        graph.join(';'),
        '-map',
        '[out]',
        '-ac',
        '1',
        '-ar',
        String(sampleRate),
        ...output,
        '-y',
        outPath,
      ],
      { signal },
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
