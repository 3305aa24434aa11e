/**
 * A small DTMF generator for the emulator's tests: synthetic recordings as docs/design.md describes them
 * (`*id#`, 80 ms tones, 40 ms gaps, about -12 dBFS per sine, over silence or low noise), as float
 * samples, 16-bit PCM, mu-law or a WAV file. Kept apart from the fixture command so the emulator's tests
 * do not depend on it.
 */
import {
  DTMF_FREQUENCIES,
  DTMF_GAP_SECONDS,
  DTMF_LEVEL_DBFS,
  DTMF_TONE_SECONDS,
  phraseSymbols,
} from '../../schemas/synthetic-recording.ts';

export interface PhraseAt {
  id: number;
  /** Seconds from the start of the recording. */
  start: number;
}

export interface SynthOptions {
  rate: number;
  phrases: PhraseAt[];
  /** Total seconds; default one second after the last phrase. */
  duration?: number;
  /** Background noise level in dBFS (uniform white noise); default digital silence. */
  noiseDbfs?: number;
  /** Seed of the noise. */
  seed?: number;
}

/** Seconds from a phrase's start to the end of its last tone. */
export function phraseToneSeconds(id: number): number {
  return phraseSymbols(id).length * (DTMF_TONE_SECONDS + DTMF_GAP_SECONDS) - DTMF_GAP_SECONDS;
}

export function synthesize(options: SynthOptions): Float32Array {
  const { rate, phrases } = options;
  const last = Math.max(0, ...phrases.map((p) => p.start + phraseToneSeconds(p.id)));
  const duration = options.duration ?? last + 1;
  const out = new Float32Array(Math.round(duration * rate));
  if (options.noiseDbfs !== undefined) {
    // Uniform noise of RMS a has amplitude a·√3.
    const amplitude = 10 ** (options.noiseDbfs / 20) * Math.sqrt(3);
    let s = options.seed ?? 1;
    for (let i = 0; i < out.length; i++) {
      s = (s * 1103515245 + 12345) >>> 0;
      out[i] = (s / 2 ** 32 - 0.5) * 2 * amplitude;
    }
  }
  const a = 10 ** (DTMF_LEVEL_DBFS / 20);
  for (const phrase of phrases) {
    let t = phrase.start;
    for (const symbol of phraseSymbols(phrase.id)) {
      const [low, high] = DTMF_FREQUENCIES[symbol]!;
      const from = Math.round(t * rate);
      const n = Math.round(DTMF_TONE_SECONDS * rate);
      for (let i = 0; i < n && from + i < out.length; i++) {
        const x = i / rate;
        out[from + i]! += a * Math.sin(2 * Math.PI * low * x) + a * Math.sin(2 * Math.PI * high * x);
      }
      t += DTMF_TONE_SECONDS + DTMF_GAP_SECONDS;
    }
  }
  return out;
}

export function toPcm16(samples: Float32Array): Buffer {
  const out = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) {
    out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(samples[i]! * 32767))), i * 2);
  }
  return out;
}

/** G.711 mu-law encoder. */
export function toMulaw(samples: Float32Array): Buffer {
  const out = Buffer.alloc(samples.length);
  for (let i = 0; i < samples.length; i++) {
    let pcm = Math.max(-32635, Math.min(32635, Math.round(samples[i]! * 32768)));
    const sign = pcm < 0 ? 0x80 : 0;
    if (pcm < 0) pcm = -pcm;
    pcm += 0x84;
    let exponent = 7;
    for (let mask = 0x4000; (pcm & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
    const mantissa = (pcm >> (exponent + 3)) & 0x0f;
    out[i] = ~(sign | (exponent << 4) | mantissa) & 0xff;
  }
  return out;
}

/** Linear-interpolation resampler: crude, which is the point (a worse resampler than ffmpeg's). */
export function resampleLinear(samples: Float32Array, from: number, to: number): Float32Array {
  const n = Math.floor((samples.length * to) / from);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const x = (i * from) / to;
    const j = Math.floor(x);
    const f = x - j;
    out[i] = (samples[j] ?? 0) * (1 - f) + (samples[j + 1] ?? 0) * f;
  }
  return out;
}

/** A 16-bit PCM WAV file of one or more channels of equal length. */
export function wavFile(channels: Float32Array[], rate: number): Buffer {
  const frames = channels[0]!.length;
  const data = Buffer.alloc(frames * channels.length * 2);
  for (let i = 0; i < frames; i++) {
    for (let c = 0; c < channels.length; c++) {
      const v = Math.max(-32768, Math.min(32767, Math.round(channels[c]![i]! * 32767)));
      data.writeInt16LE(v, (i * channels.length + c) * 2);
    }
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels.length, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * channels.length * 2, 28);
  header.writeUInt16LE(channels.length * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
