/**
 * The GE2E encoder's input (Resemblyzer's audio.py and hparams.py): the power spectrogram of 25-ms Hann
 * windows every 10 ms at 16 kHz (centred frames, 400-point transform) through librosa's 40 Slaney mel
 * triangles, not logarithmic, with the utterance brought up to −30 dBFS and its long silences left out.
 *
 * Staged audio is 8 kHz. Resampled to 16 kHz by an ideal band limit, a 400-sample window's transform is
 * twice the 200-sample window's at the same frequencies below 4 kHz and zero above, so the spectrum is
 * computed at the audio's own rate on the same 40-Hz grid and scaled by (16000 / rate)²: the 16-kHz
 * spectrogram without the resampling.
 */
import {
  voicedFrames,
  VOICED_HOP_SECONDS,
  type Analyzer,
  type AudioReader,
  type UtteranceSpan,
} from './voice-features.ts';
import { GE2E_MELS } from './ge2e-encoder.ts';

const MODEL_RATE = 16000;
const WINDOW_SECONDS = 0.025;
const HOP_SECONDS = 0.01;
/** Frames of one partial utterance (1.6 s), as the encoder was trained on. */
const PARTIAL_FRAMES = 160;
/** Resemblyzer's audio_norm_target_dBFS: quieter utterances are brought up to it. */
const TARGET_DBFS = -30;
/** Voice kept around each voiced frame (Resemblyzer keeps speech, trimming only long silences). */
const KEEP_AROUND_SECONDS = 0.1;

interface MelTables {
  rate: number;
  length: number;
  hop: number;
  bins: number;
  window: Float64Array;
  cos: Float64Array;
  sin: Float64Array;
  /** GE2E_MELS rows of `bins` weights, the power's scale folded in */
  filters: Float64Array;
}

const hzToMel = (hz: number) => {
  // Slaney's scale (librosa's default, htk=False): linear below 1 kHz, logarithmic above.
  const linear = hz / (200 / 3);
  if (hz < 1000) return linear;
  return 15 + Math.log(hz / 1000) / (Math.log(6.4) / 27);
};
const melToHz = (mel: number) =>
  mel < 15 ? mel * (200 / 3) : 1000 * Math.exp((Math.log(6.4) / 27) * (mel - 15));

/** librosa.filters.mel(sr=16000, n_fft=400, n_mels=40) over the bins 0..bins-1 of a 40-Hz grid. */
function melFilters(bins: number, scale: number): Float64Array {
  const fullBins = (MODEL_RATE * WINDOW_SECONDS) / 2 + 1;
  const binHz = MODEL_RATE / 2 / (fullBins - 1);
  const top = hzToMel(MODEL_RATE / 2);
  const edges = Array.from({ length: GE2E_MELS + 2 }, (_, i) => melToHz((top * i) / (GE2E_MELS + 1)));
  const filters = new Float64Array(GE2E_MELS * bins);
  for (let m = 0; m < GE2E_MELS; m++) {
    const [lo, mid, hi] = [edges[m]!, edges[m + 1]!, edges[m + 2]!];
    const norm = 2 / (hi - lo);
    for (let k = 0; k < bins; k++) {
      const f = k * binHz;
      const w = Math.max(0, Math.min((f - lo) / (mid - lo), (hi - f) / (hi - mid)));
      filters[m * bins + k] = w * norm * scale;
    }
  }
  return filters;
}

const tables = new Map<number, MelTables>();

function tablesFor(rate: number): MelTables {
  const known = tables.get(rate);
  if (known) return known;
  const length = Math.round(WINDOW_SECONDS * rate);
  if (rate > MODEL_RATE || Math.abs(length - WINDOW_SECONDS * rate) > 1e-9)
    throw new RangeError(
      `GE2E features need a rate of at most 16 kHz with whole 25-ms windows, not ${rate} Hz`,
    );
  const bins = Math.floor(length / 2) + 1;
  const window = Float64Array.from({ length }, (_, n) => 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / length));
  const cos = new Float64Array(bins * length);
  const sin = new Float64Array(bins * length);
  for (let k = 0; k < bins; k++)
    for (let n = 0; n < length; n++) {
      const angle = (2 * Math.PI * ((k * n) % length)) / length;
      cos[k * length + n] = Math.cos(angle) * window[n]!;
      sin[k * length + n] = Math.sin(angle) * window[n]!;
    }
  const made: MelTables = {
    rate,
    length,
    hop: Math.round(HOP_SECONDS * rate),
    bins,
    window,
    cos,
    sin,
    filters: melFilters(bins, (MODEL_RATE / rate) ** 2),
  };
  tables.set(rate, made);
  return made;
}

/**
 * Mel frames of `samples` (frame t centred on sample t·hop, zeros beyond the ends, as librosa's centred
 * STFT pads): frames × GE2E_MELS, row-major.
 */
export function melFrames(samples: Float32Array, rate: number): Float32Array {
  const t = tablesFor(rate);
  const frames = 1 + Math.floor(samples.length / t.hop);
  const out = new Float32Array(frames * GE2E_MELS);
  const frame = new Float64Array(t.length);
  const power = new Float64Array(t.bins);
  const half = Math.floor(t.length / 2);
  for (let f = 0; f < frames; f++) {
    const start = f * t.hop - half;
    for (let n = 0; n < t.length; n++) {
      const i = start + n;
      frame[n] = i >= 0 && i < samples.length ? samples[i]! : 0;
    }
    for (let k = 0; k < t.bins; k++) {
      let re = 0;
      let im = 0;
      const row = k * t.length;
      for (let n = 0; n < t.length; n++) {
        re += frame[n]! * t.cos[row + n]!;
        im += frame[n]! * t.sin[row + n]!;
      }
      power[k] = re * re + im * im;
    }
    for (let m = 0; m < GE2E_MELS; m++) {
      let e = 0;
      const row = m * t.bins;
      for (let k = 0; k < t.bins; k++) e += t.filters[row + k]! * power[k]!;
      out[f * GE2E_MELS + m] = e;
    }
  }
  return out;
}

/**
 * The encoder's input for one utterance: its mel frames near voiced sound (voice-features.ts: loud,
 * periodic, not a tone, so DTMF digits and silences stay out), at most `maxFrames` of them from the
 * middle, the level brought up to −30 dBFS. Undefined when the utterance holds no voiced frame.
 */
export function utteranceMels(
  audio: AudioReader,
  span: UtteranceSpan,
  analyzer: Analyzer,
  maxFrames = PARTIAL_FRAMES,
): { mels: Float32Array; frames: number } | undefined {
  const voiced = voicedFrames(audio, span, analyzer);
  if (voiced.count === 0) return undefined;
  const rate = audio.sampleRate;
  const t = tablesFor(rate);
  const samples = audio.read(span.start, span.end);
  const all = melFrames(samples, rate);
  const total = all.length / GE2E_MELS;
  const keep = new Uint8Array(total);
  const around = KEEP_AROUND_SECONDS + VOICED_HOP_SECONDS / 2;
  for (const time of voiced.times) {
    const from = Math.max(0, Math.ceil((time - around - span.start) / HOP_SECONDS));
    const to = Math.min(total - 1, Math.floor((time + around - span.start) / HOP_SECONDS));
    keep.fill(1, from, to + 1);
  }
  const kept: number[] = [];
  for (let f = 0; f < total; f++) if (keep[f]) kept.push(f);
  const first = Math.max(0, Math.floor((kept.length - maxFrames) / 2));
  const chosen = kept.slice(first, first + maxFrames);
  const mels = new Float32Array(chosen.length * GE2E_MELS);
  let squares = 0;
  let count = 0;
  chosen.forEach((f, i) => {
    mels.set(all.subarray(f * GE2E_MELS, (f + 1) * GE2E_MELS), i * GE2E_MELS);
    for (let n = f * t.hop, end = Math.min(samples.length, n + t.hop); n < end; n++, count++)
      squares += samples[n]! ** 2;
  });
  const rms = Math.sqrt(squares / Math.max(1, count));
  const target = 10 ** (TARGET_DBFS / 20);
  if (rms > 0 && rms < target) {
    const gain = (target / rms) ** 2;
    for (let i = 0; i < mels.length; i++) mels[i] = mels[i]! * gain;
  }
  return { mels, frames: chosen.length };
}
