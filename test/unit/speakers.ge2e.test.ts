/**
 * The GE2E speaker model's conversion (cli/tools/convert-ge2e.py), its input features and its forward
 * pass, against values computed independently with numpy (test/fixtures/ge2e/make-reference.py: no
 * PyTorch, no librosa, none of callpipe's code).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { venvPython } from '../../cli/tools/provision.ts';
import { convertSpeakerModel } from '../../cli/tools/speaker-model.ts';
import {
  embedSequences,
  encoderFromWeights,
  GE2E_MELS,
  loadEncoder,
  SpeakerModelError,
} from '../../activities/speakers/ge2e-encoder.ts';
import { melFrames } from '../../activities/speakers/ge2e-features.ts';
import { clusterEmbeddings } from '../../activities/speakers/embedding-separation.ts';
import { GE2E_WHEEL, speakerModelChoice, speakerModelManifestSchema } from '../../schemas/speaker-model.ts';
import { voiceSeparator } from '../../activities/speakers/speaker-separator.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'ge2e');
const reference = JSON.parse(readFileSync(join(FIXTURES, 'reference.json'), 'utf8')) as {
  mel16: number[][];
  embeddings: number[][];
  sequences: [number, number][];
  tiny: Record<string, { shape: number[]; values: number[] }>;
};
const work = mkdtempSync(join(tmpdir(), 'ge2e-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The reference's band-limited test signal (below 3.4 kHz), sampled at `rate`. */
function signal(rate: number, seconds: number): Float32Array {
  const parts = [
    [0.3, 180, 0.0],
    [0.2, 360, 0.5],
    [0.15, 720, 1.0],
    [0.1, 1230, 2.0],
    [0.05, 2710, 0.3],
    [0.04, 3390, 1.1],
  ] as const;
  return Float32Array.from({ length: Math.round(rate * seconds) }, (_, n) => {
    const t = n / rate;
    let y = 0;
    for (const [a, f, p] of parts) y += a * Math.sin(2 * Math.PI * f * t + p);
    return y * (0.6 + 0.4 * Math.sin(2 * Math.PI * 3 * t));
  });
}

describe('GE2E conversion (convert-ge2e.py, restricted unpickler)', () => {
  it('writes every tensor of a hand-made legacy checkpoint, shared storages and offsets included', () => {
    const dir = join(work, 'tiny');
    convertSpeakerModel(venvPython(), join(FIXTURES, 'tiny.pt'), dir);
    const manifest = speakerModelManifestSchema.parse(
      JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')),
    );
    expect(manifest.source).toEqual({
      package: GE2E_WHEEL.package,
      version: GE2E_WHEEL.version,
      sha256: GE2E_WHEEL.sha256,
    });
    const bytes = readFileSync(join(dir, 'weights.f32'));
    const weights = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    expect(manifest.tensors.map((t) => t.name)).toEqual(Object.keys(reference.tiny));
    for (const t of manifest.tensors) {
      const expected = reference.tiny[t.name]!;
      expect(t.shape).toEqual(expected.shape);
      const got = Array.from(weights.subarray(t.offset, t.offset + expected.values.length));
      got.forEach((v, i) => expect(v).toBeCloseTo(expected.values[i]!, 6));
    }
    // The converted tiny model is not a GE2E encoder: loading says which tensor is wrong.
    expect(() => loadEncoder(dir)).toThrow(/lstm\.weight_ih_l0 is 2x3, expected 1024x40/);
  });

  it('refuses a checkpoint whose pickle would run code', () => {
    expect(() => convertSpeakerModel(venvPython(), join(FIXTURES, 'evil.pt'), join(work, 'evil'))).toThrow(
      /unexpected object in the checkpoint: posix\.system/,
    );
  });

  it('says what is missing when no model is installed', () => {
    expect(() => loadEncoder(join(work, 'nothing'))).toThrow(SpeakerModelError);
  });
});

describe('GE2E mel frames (ge2e-features.ts)', () => {
  it('at 16 kHz equal librosa-style centred power mel frames', () => {
    const mel = melFrames(signal(16000, 0.5), 16000);
    expect(mel.length / GE2E_MELS).toBe(reference.mel16.length);
    reference.mel16.forEach((row, t) =>
      row.forEach((v, m) =>
        expect(mel[t * GE2E_MELS + m]!).toBeCloseTo(v, Math.max(0, 4 - Math.ceil(Math.log10(v + 1)))),
      ),
    );
  });

  it('at 8 kHz equal the 16-kHz frames of the same band-limited signal (an ideal resampling)', () => {
    const mel = melFrames(signal(8000, 0.5), 8000);
    expect(mel.length / GE2E_MELS).toBe(reference.mel16.length);
    // Away from the ends (where the zero padding differs), every band with energy within 2 %.
    for (let t = 3; t < reference.mel16.length - 3; t++) {
      const row = reference.mel16[t]!;
      const peak = Math.max(...row);
      row.forEach((v, m) => {
        if (v > 1e-3 * peak) expect(Math.abs(mel[t * GE2E_MELS + m]! - v) / v).toBeLessThan(0.02);
        else expect(mel[t * GE2E_MELS + m]!).toBeLessThan(2e-3 * peak);
      });
    }
  });
});

describe('GE2E forward pass (ge2e-encoder.ts)', () => {
  /** The reference's weights: a formula both sides compute, rounded to float32. */
  function formulaEncoder() {
    const names: [string, number[]][] = [];
    for (let l = 0; l < 3; l++) {
      names.push([`lstm.weight_ih_l${l}`, [1024, l === 0 ? 40 : 256]]);
      names.push([`lstm.weight_hh_l${l}`, [1024, 256]]);
      names.push([`lstm.bias_ih_l${l}`, [1024]]);
      names.push([`lstm.bias_hh_l${l}`, [1024]]);
    }
    names.push(['linear.weight', [256, 256]], ['linear.bias', [256]]);
    const sizes = names.map(([, s]) => s.reduce((a, b) => a * b, 1));
    const weights = new Float32Array(sizes.reduce((a, b) => a + b, 0));
    let offset = 0;
    const tensors = names.map(([name, shape], k) => {
      for (let i = 0; i < sizes[k]!; i++) weights[offset + i] = 0.08 * Math.sin(0.37 * i + 1.3 * k);
      const t = { name, shape, offset };
      offset += sizes[k]!;
      return t;
    });
    return encoderFromWeights({ format: 'ge2e-f32-v1', tensors, elements: weights.length }, weights);
  }

  it('gives the reference embeddings for sequences of different lengths in one batch', () => {
    const sequences = reference.sequences.map(([n, k]) =>
      Float32Array.from({ length: n * GE2E_MELS }, (_, i) =>
        Math.fround((0.5 + 0.5 * Math.sin(0.11 * i + k)) ** 3),
      ),
    );
    const embeddings = embedSequences(formulaEncoder(), sequences);
    embeddings.forEach((e, s) => {
      const expected = reference.embeddings[s]!;
      expect(e.length).toBe(expected.length);
      let norm = 0;
      e.forEach((v, j) => {
        norm += v * v;
        expect(Math.abs(v - expected[j]!)).toBeLessThan(2e-5);
      });
      expect(norm).toBeCloseTo(1, 5);
    });
    // Alone, each sequence embeds the same as in the batch.
    expect(Array.from(embedSequences(formulaEncoder(), [sequences[1]!])[0]!)).toEqual(
      Array.from(embeddings[1]!),
    );
  });
});

describe('voices from embeddings (embedding-separation.ts clusterEmbeddings)', () => {
  /** Unit vectors near one direction shared by every voice (as a line is) plus a voice's own, `own`. */
  function around(own: number, count: number, seed: number): Float32Array[] {
    let s = seed;
    const random = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648 - 0.5;
    return Array.from({ length: count }, () => {
      const e = Float32Array.from({ length: 256 }, () => 0.04 * random());
      e[0] = e[0]! + 1;
      e[own] = e[own]! + 0.6;
      let norm = 0;
      for (const v of e) norm += v * v;
      return e.map((v) => v / Math.sqrt(norm));
    });
  }
  const spansOf = (n: number) => Array.from({ length: n }, (_, i) => ({ start: 2 * i, end: 2 * i + 1.5 }));

  it('tells two voices apart, every utterance given its own, numbered as heard', () => {
    const a = around(1, 10, 1);
    const b = around(2, 10, 2);
    const embeddings = a.flatMap((e, i) => [e, b[i]!]);
    const result = clusterEmbeddings(
      embeddings,
      embeddings.map(() => 150),
      spansOf(20),
    );
    expect(result?.voices).toBe(2);
    expect(result?.assignments.map((x) => x.voice)).toEqual(embeddings.map((_, i) => i % 2));
  });

  it('keeps one voice one, however many utterances it has', () => {
    for (const n of [8, 200]) {
      const embeddings = around(1, n, n);
      const result = clusterEmbeddings(
        embeddings,
        embeddings.map(() => 150),
        spansOf(n),
      );
      expect(result?.voices).toBe(1);
      expect(result?.reason).toMatch(/one voice/);
    }
  });

  it('hands a call with too few embedded utterances on (undefined), and leaves the unembedded unassigned', () => {
    const embeddings = [...around(1, 3, 3), undefined, undefined, undefined, undefined];
    expect(clusterEmbeddings(embeddings, [150, 150, 150, 0, 0, 0, 0], spansOf(7))).toBeUndefined();
    const some = [...around(1, 6, 4), undefined];
    const result = clusterEmbeddings(some, [150, 150, 150, 150, 150, 150, 0], spansOf(7));
    expect(result?.assignments[6]).toEqual({ voice: null, confidence: 0, joined: false });
    expect(result?.reason).toMatch(/1 utterance holds too little voiced sound/);
  });
});

describe('CALLPIPE_SPEAKER_MODEL (speaker-separator.ts voiceSeparator)', () => {
  it('is the voice-feature method unset or off, and says why when a named model cannot be used', () => {
    expect(voiceSeparator(undefined).method).toBe('features');
    expect(voiceSeparator('off').method).toBe('features');
    const missing = voiceSeparator(join(work, 'no-model-here'));
    expect(missing.method).toBe('features');
    expect(missing.note).toMatch(/the speaker model could not be used: no usable speaker model in/);
    // auto without an installed model: the voice-feature method, nothing to explain.
    expect(speakerModelChoice('auto')).toEqual({ kind: 'auto' });
    expect(speakerModelChoice(' /opt/ge2e ')).toEqual({ kind: 'dir', dir: '/opt/ge2e' });
  });
});
