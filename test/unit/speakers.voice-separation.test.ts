import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeMulaw } from '../../schemas/g711.ts';
import { seededRandom } from '../../schemas/seeded-random.ts';
import { phraseDurationSeconds } from '../../schemas/synthetic-recording.ts';
import { generateCallScript, scriptedCall } from '../../activities/media/call-script.ts';
import { runFfmpeg } from '../../activities/media/ffmpeg.ts';
import { renderFixture, renderPcm } from '../../activities/media/fixture.ts';
import { stagedAudioReader } from '../../activities/speakers/speakers-activities.ts';
import { analyzerFor, voicedFrames, VOICED_DIMS } from '../../activities/speakers/voice-features.ts';
import {
  separateVoices,
  takeoverInterleaving,
  type AudioReader,
  type SeparationResult,
  type UtteranceSpan,
} from '../../activities/speakers/voice-separation.ts';

const RATE = 8000;

/** A synthetic voice: harmonics of a pitch, falling by `tilt` per harmonic, at a level, in syllables. */
interface Voice {
  pitchHz: number;
  levelDbfs: number;
  /** Amplitude of harmonic k is k^-tilt. */
  tilt: number;
}

const LOW: Voice = { pitchHz: 110, levelDbfs: -18, tilt: 1.2 };
const HIGH: Voice = { pitchHz: 230, levelDbfs: -26, tilt: 0.6 };

/** Adds `seconds` of `voice` at `start` into `out`; pitch and level wander a little, as a person's do. */
function speak(out: Float32Array, voice: Voice, start: number, seconds: number, random: () => number): void {
  const f0 = voice.pitchHz * (1 + (random() - 0.5) * 0.08);
  const amplitude = 10 ** ((voice.levelDbfs + (random() - 0.5) * 2) / 20);
  const harmonics: number[] = [];
  for (let k = 1; k * f0 < 3400; k++) harmonics.push(k ** -voice.tilt);
  const norm = Math.sqrt(harmonics.reduce((s, a) => s + (a * a) / 2, 0));
  const from = Math.round(start * RATE);
  const n = Math.round(seconds * RATE);
  let phase = 0;
  for (let i = 0; i < n && from + i < out.length; i++) {
    const t = i / RATE;
    // Intonation (a slow glide) and syllables (4 a second, never quite silent).
    const f = f0 * (1 + 0.05 * Math.sin(2 * Math.PI * 0.7 * t));
    phase += (2 * Math.PI * f) / RATE;
    const syllable = 0.55 + 0.45 * Math.sin(2 * Math.PI * 4 * t);
    let v = 0;
    for (let k = 0; k < harmonics.length; k++) v += harmonics[k]! * Math.sin((k + 1) * phase);
    out[from + i] = out[from + i]! + (amplitude * syllable * v) / norm + (random() - 0.5) * 1e-3;
  }
}

function readerOf(samples: Float32Array): AudioReader {
  return {
    sampleRate: RATE,
    read(start, end) {
      const from = Math.max(0, Math.min(samples.length, Math.round(start * RATE)));
      const to = Math.max(from, Math.min(samples.length, Math.round(end * RATE)));
      return samples.slice(from, to);
    },
  };
}

/** A call of alternating utterances of `voices` (by index per utterance); spans and truth. */
function conversation(order: number[], voices: Voice[], seed = 1) {
  const random = seededRandom(seed);
  const spans: UtteranceSpan[] = [];
  let t = 0.5;
  for (let i = 0; i < order.length; i++) {
    const seconds = 1.2 + random() * 1.8;
    spans.push({ start: t, end: t + seconds });
    t += seconds + 0.4 + random() * 0.6;
  }
  const samples = new Float32Array(Math.ceil((t + 0.5) * RATE));
  spans.forEach((s, i) => speak(samples, voices[order[i]!]!, s.start, s.end - s.start, random));
  return { samples, spans, truth: order };
}

/** Voices of the assignments mapped to truth labels: the share that agree under the best one-to-one map. */
function agreement(result: SeparationResult, truth: number[]): number {
  const counts = new Map<string, number>();
  result.assignments.forEach((a, i) => {
    if (a.voice === null) return;
    const key = `${a.voice}:${truth[i]}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  });
  const direct = (counts.get('0:0') ?? 0) + (counts.get('1:1') ?? 0);
  const swapped = (counts.get('0:1') ?? 0) + (counts.get('1:0') ?? 0);
  return Math.max(direct, swapped) / truth.length;
}

/** As `agreement`, for any number of voices: the best one-to-one map of voices to truth labels. */
function agreementOf(result: SeparationResult, truth: number[], labels: number): number {
  const permutations = (items: number[]): number[][] =>
    items.length <= 1
      ? [items]
      : items.flatMap((x, i) => permutations(items.filter((_, j) => j !== i)).map((p) => [x, ...p]));
  let best = 0;
  for (const map of permutations([...Array(labels).keys()])) {
    const right = result.assignments.filter((a, i) => a.voice !== null && map[a.voice] === truth[i]).length;
    best = Math.max(best, right);
  }
  return best / truth.length;
}

const withoutCpu = (r: SeparationResult) => ({ ...r, cpuMs: 0 });

const alternating = [0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1];

describe('separateVoices: two voices and one', () => {
  it('separates two voices that differ in pitch, level and brightness; voice 0 is heard first', () => {
    const { samples, spans, truth } = conversation(alternating, [LOW, HIGH]);
    const result = separateVoices(readerOf(samples), spans);
    expect(result.voices).toBe(2);
    expect(result.assignments).toHaveLength(spans.length);
    expect(agreement(result, truth)).toBe(1);
    expect(result.assignments[0]!.voice).toBe(0);
    expect(result.assignments[1]!.voice).toBe(1);
    for (const a of result.assignments) expect(a.confidence).toBeGreaterThan(0.9);
    expect(result.cpuMs).toBeGreaterThanOrEqual(0);
  });

  it('keeps one voice as one, whatever its pitch and level wander', () => {
    const { samples, spans } = conversation(
      alternating.map(() => 0),
      [LOW],
      7,
    );
    const result = separateVoices(readerOf(samples), spans);
    expect(result.voices).toBe(1);
    expect(result.assignments.every((a) => a.voice === 0)).toBe(true);
    expect(result.reason).toMatch(/one voice/);
  });

  it('keeps a long call of one steady voice as one, and still splits a long call of two (100 utterances)', () => {
    const one = conversation(
      Array.from({ length: 100 }, () => 0),
      [LOW],
      7,
    );
    const kept = separateVoices(readerOf(one.samples), one.spans);
    expect(kept.voices).toBe(1);
    expect(kept.assignments.every((a) => a.voice === 0)).toBe(true);
    const order = Array.from({ length: 100 }, (_, i) => ((i * 7919) >> 3) & 1);
    const two = conversation(order, [LOW, HIGH], 7);
    const split = separateVoices(readerOf(two.samples), two.spans);
    expect(split.voices).toBe(2);
    expect(agreement(split, two.truth)).toBeGreaterThanOrEqual(0.98);
  });

  it('analyses every step-th frame of a call with more utterance time than it analyses in full, and still tells its voices apart', () => {
    // About 380 s of utterances: every other frame is analysed, each standing for two.
    const order = Array.from({ length: 180 }, (_, i) => ((i * 7919) >> 3) & 1);
    const two = conversation(order, [LOW, HIGH], 9);
    const utteranceSeconds = two.spans.reduce((s, u) => s + u.end - u.start, 0);
    expect(utteranceSeconds).toBeGreaterThan(300);
    const split = separateVoices(readerOf(two.samples), two.spans);
    expect(split.voices).toBe(2);
    expect(agreement(split, two.truth)).toBeGreaterThanOrEqual(0.98);
  });
});

describe("separateVoices: a line's changes and transfers", () => {
  it('keeps the agent-only leg of a mono DTMF call as one voice, read as the speakers stage stages it', async () => {
    const { script } = scriptedCall({ durationSeconds: 90, stereo: false, seed: 44 });
    const channel = script.channels[0]!;
    const phrases = channel.phrases.filter((p) => (p.leg ?? 0) === 0);
    const dir = mkdtempSync(join(tmpdir(), 'callpipe-voices-'));
    try {
      const wav = join(dir, 'agent-only.wav');
      const mulaw = join(dir, 'agent-only.mulaw');
      await renderFixture({ ...script, channels: [{ ...channel, phrases }] }, wav, { sampleRate: RATE });
      await runFfmpeg([
        '-v',
        'error',
        '-i',
        wav,
        '-ar',
        String(RATE),
        '-c:a',
        'pcm_mulaw',
        '-f',
        'mulaw',
        mulaw,
      ]);
      const audio = stagedAudioReader([{ start: 0, bytes: new Uint8Array(readFileSync(mulaw)) }]);
      const spans = phrases.map((p) => ({ start: p.start, end: p.start + phraseDurationSeconds(p.id) }));
      const result = separateVoices(audio, spans);
      expect(result.voices).toBe(1);
      expect(result.assignments.every((a) => a.voice === 0)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('separates one voice heard through two lines (8 dB apart, one duller), and says how sure it is', () => {
    const far: Voice = { ...LOW, levelDbfs: LOW.levelDbfs - 8, tilt: LOW.tilt + 0.4 };
    const { samples, spans, truth } = conversation(alternating, [LOW, far], 2);
    const result = separateVoices(readerOf(samples), spans);
    expect(result.voices).toBe(2);
    expect(agreement(result, truth)).toBe(1);
    for (const a of result.assignments) expect(a.confidence).toBeGreaterThan(0.9);
  });

  it('finds a third voice that takes over partway (a transfer), the customer kept one voice throughout', () => {
    const second: Voice = { pitchHz: 160, levelDbfs: -30, tilt: 1.6 };
    const order = [...alternating, ...alternating.map((v) => (v === 0 ? 2 : v))];
    const { samples, spans, truth } = conversation(order, [LOW, HIGH, second], 6);
    const result = separateVoices(readerOf(samples), spans);
    expect(result.voices).toBe(3);
    expect(result.reason).toMatch(/3 voices/);
    expect(agreementOf(result, truth, 3)).toBeGreaterThanOrEqual(0.95);
    // Voices are numbered as heard: the second agent is voice 2.
    expect(result.assignments.at(-2)!.voice).toBe(2);
  });

  it('finds a warm transfer: the first agent heard once more a few turns after the second has begun', () => {
    // Close enough to the first agent that, heard in turn with it, it would not pay a conference's price.
    const second: Voice = { pitchHz: 120, levelDbfs: -19, tilt: 1.25 };
    // The second half's sixth agent turn is the first agent's: 5 of the second agent's 8 turns come before
    // it, so 5 of the two agents' 80 pairs are out of order (0.0625).
    let agentTurns = 0;
    const after = alternating.map((v) => (v === 0 ? (++agentTurns === 6 ? 0 : 2) : v));
    const order = [...alternating, ...after];
    const { samples, spans, truth } = conversation(order, [LOW, HIGH, second], 6);
    const result = separateVoices(readerOf(samples), spans);
    expect(result.voices).toBe(3);
    expect(agreementOf(result, truth, 3)).toBeGreaterThanOrEqual(0.95);
  });

  it('keeps two voices as two when one of them changes its line a little partway (quieter, duller): not a transfer', () => {
    const later: Voice = { ...LOW, levelDbfs: LOW.levelDbfs - 1, tilt: LOW.tilt + 0.05 };
    const order = [...alternating, ...alternating.map((v) => (v === 0 ? 2 : v))];
    const { samples, spans } = conversation(order, [LOW, HIGH, later], 6);
    const result = separateVoices(readerOf(samples), spans);
    expect(result.voices).toBe(2);
  });
});

describe('takeoverInterleaving: whether a split voice takes over from another', () => {
  // Twelve utterances a second apart: the first agent in the first half, the customer throughout.
  const times = Float64Array.from({ length: 12 }, (_, i) => i);
  const customer = [1, 3, 5, 7, 9, 11];

  it('sees the takeover when the half that keeps the split voice is the second agent', () => {
    // Voice 1 (the customer and the second agent) split: the customer became voice 2, the second agent kept 1.
    const labels = Int32Array.from(times, (_, i) => (customer.includes(i) ? 2 : i < 6 ? 0 : 1));
    expect(takeoverInterleaving(labels, times, 1, 2)).toBe(0);
  });

  it('sees the takeover when the new voice is the second agent', () => {
    const labels = Int32Array.from(times, (_, i) => (customer.includes(i) ? 1 : i < 6 ? 0 : 2));
    expect(takeoverInterleaving(labels, times, 1, 2)).toBe(0);
  });

  it('sees none when every voice is heard in turn with the others', () => {
    const labels = Int32Array.from(times, (_, i) => i % 3);
    expect(takeoverInterleaving(labels, times, 1, 2)).toBeGreaterThan(0.25);
  });
});

describe('separateVoices: odd input', () => {
  it('gives no voice, with a reason, when the utterances are silent', () => {
    const samples = new Float32Array(20 * RATE);
    const spans = [
      { start: 1, end: 3 },
      { start: 4, end: 6 },
      { start: 8, end: 12 },
    ];
    const result = separateVoices(readerOf(samples), spans);
    expect(result.voices).toBe(0);
    expect(result.reason).toMatch(/audible speech/);
    expect(result.assignments).toEqual(spans.map(() => ({ voice: null, confidence: 0, joined: false })));
  });

  it('gives no voice, with a reason, when there are no utterances', () => {
    const result = separateVoices(readerOf(new Float32Array(RATE)), []);
    expect(result).toMatchObject({ voices: 0, assignments: [], joined: 0 });
    expect(result.reason).toMatch(/no utterances/);
  });

  it('never throws on odd input: one span, spans outside the audio or reversed, a failing reader', () => {
    const { samples } = conversation([0], [LOW]);
    const one = separateVoices(readerOf(samples), [{ start: 0.5, end: 2 }]);
    expect(one.voices).toBe(1);
    expect(one.reason).toBeTruthy();
    const odd = separateVoices(readerOf(samples), [
      { start: 100, end: 120 },
      { start: 3, end: 1 },
      { start: Number.NaN, end: 2 },
    ]);
    expect(odd.voices).toBe(0);
    expect(odd.assignments).toHaveLength(3);
    const failing: AudioReader = {
      sampleRate: RATE,
      read() {
        throw new Error('gone');
      },
    };
    expect(separateVoices(failing, [{ start: 0, end: 2 }]).voices).toBe(0);
    expect(
      separateVoices({ sampleRate: 0, read: () => new Float32Array(0) }, [{ start: 0, end: 1 }]).reason,
    ).toMatch(/sample rate/);
  });

  it('counts an utterance that the recognizer joined: the other voice answers inside a long sentence', () => {
    const order = [...alternating, 0];
    const { samples, spans, truth } = conversation(order, [LOW, HIGH], 3);
    // The last utterance: 4 s of the low voice with a quick answer of the high one in its middle.
    const start = spans.at(-1)!.end + 1;
    const joined = { start, end: start + 4.2 };
    const longer = new Float32Array(Math.ceil((joined.end + 1) * RATE));
    longer.set(samples);
    const random = seededRandom(11);
    speak(longer, LOW, start, 1.8, random);
    speak(longer, HIGH, start + 1.9, 0.7, random);
    speak(longer, LOW, start + 2.7, 1.5, random);
    const result = separateVoices(readerOf(longer), [...spans, joined]);
    expect(result.voices).toBe(2);
    expect(agreement({ ...result, assignments: result.assignments.slice(0, -1) }, truth)).toBe(1);
    const last = result.assignments.at(-1)!;
    expect(last.joined).toBe(true);
    expect(last.voice).toBe(result.assignments[0]!.voice);
    expect(result.joined).toBeGreaterThanOrEqual(1);
    expect(result.assignments.filter((a) => a.joined)).toHaveLength(result.joined);
  });

  it('is deterministic', () => {
    const { samples, spans } = conversation(alternating, [LOW, HIGH], 5);
    const a = separateVoices(readerOf(samples), spans);
    const b = separateVoices(readerOf(samples), spans);
    expect(withoutCpu(a)).toEqual(withoutCpu(b));
  });
});

describe('separateVoices: DTMF legs', () => {
  it('separates the DTMF legs of a synthetic recording that differ by their line only (level, tilt)', () => {
    const script = generateCallScript({ durationSeconds: 150, seed: 4, stereo: true });
    const stereo = Buffer.concat([...renderPcm(script, { sampleRate: RATE, channels: 2 })]);
    const frames = stereo.length / 4;
    const mono = new Float32Array(frames);
    // Leg 0 louder and bright (a first difference), leg 1 quieter and dull (a one-pole low-pass).
    const gains = [10 ** (3 / 20), 10 ** (-6 / 20)];
    let previous = 0;
    let smoothed = 0;
    for (let i = 0; i < frames; i++) {
      const agent = stereo.readInt16LE(4 * i) / 32768;
      const customer = stereo.readInt16LE(4 * i + 2) / 32768;
      const bright = agent - 0.3 * previous;
      previous = agent;
      smoothed = 0.7 * customer + 0.3 * smoothed;
      mono[i] = gains[0]! * bright + gains[1]! * smoothed;
    }
    const phrases = script.channels
      .flatMap((c, leg) =>
        c.phrases.map((p) => ({ leg, start: p.start, end: p.start + phraseDurationSeconds(p.id) })),
      )
      .sort((a, b) => a.start - b.start);
    const result = separateVoices(readerOf(mono), phrases);
    expect(result.voices).toBe(2);
    expect(
      agreement(
        result,
        phrases.map((p) => p.leg),
      ),
    ).toBeGreaterThanOrEqual(0.95);
  });
});

describe('voicedFrames with a step', () => {
  it('analyses every step-th frame of the back-to-back ones, the same features at the same times', () => {
    const { samples, spans } = conversation([0, 1, 0, 1], [LOW, HIGH], 3);
    const analyzer = analyzerFor(RATE);
    for (const span of spans) {
      const all = voicedFrames(readerOf(samples), span, analyzer);
      const third = voicedFrames(readerOf(samples), span, analyzer, 3);
      expect(third.count).toBeGreaterThan(0);
      expect(third.count).toBeLessThanOrEqual(Math.ceil(all.count / 3) + 1);
      for (let f = 0; f < third.count; f++) {
        const at = Array.from(all.times).findIndex((t) => Math.abs(t - third.times[f]!) < 1e-9);
        expect(at).toBeGreaterThanOrEqual(0);
        const row = (x: Float64Array, i: number) =>
          Array.from(x.subarray(i * VOICED_DIMS, (i + 1) * VOICED_DIMS));
        expect(row(third.features, f)).toEqual(row(all.features, at));
      }
    }
  });
});

describe('voicedFrames from mu-law codes', () => {
  it('gives the same frames, bit for bit, whether it decodes the codes itself or reads decoded samples, back to back or a step apart', () => {
    const { samples, spans } = conversation([0, 1, 0, 1], [LOW, HIGH], 5);
    const bytes = Uint8Array.from(samples, (v) => encodeMulaw(Math.round(v * 32767)));
    const staged = stagedAudioReader([{ start: 0, bytes }]);
    // With the codes nothing is read as samples, frames apart included.
    let samplesRead = 0;
    const codesOnly: AudioReader = {
      ...staged,
      readInto: (...args) => {
        samplesRead++;
        return staged.readInto!(...args);
      },
    };
    // The same reader less its codes: every frame read as samples.
    const decoded: AudioReader = {
      sampleRate: staged.sampleRate,
      read: staged.read,
      readInto: staged.readInto!,
    };
    const analyzer = analyzerFor(RATE);
    const voiced = [0, 0, 0];
    for (const span of spans)
      for (const [which, step] of [1, 3, 4].entries()) {
        const fromCodes = voicedFrames(codesOnly, span, analyzer, step);
        const fromSamples = voicedFrames(decoded, span, analyzer, step);
        voiced[which] = voiced[which]! + fromCodes.count;
        expect([fromCodes.count, fromCodes.audible, fromCodes.tones]).toEqual([
          fromSamples.count,
          fromSamples.audible,
          fromSamples.tones,
        ]);
        expect(Array.from(fromCodes.features)).toEqual(Array.from(fromSamples.features));
        expect(Array.from(fromCodes.times)).toEqual(Array.from(fromSamples.times));
      }
    expect(voiced[0]).toBeGreaterThan(100);
    expect(samplesRead).toBe(0);
    // A step apart: about a step-th of the frames, each read from the codes at its own start.
    expect(voiced[2]).toBeGreaterThan(voiced[0]! / 5);
  });
});
