/**
 * GE2E voice encoder (Resemblyzer's): a 3-layer LSTM over 40 mel bands, the last layer's final hidden state
 * through a linear layer, ReLU and L2 norm: a 256-dimensional speaker embedding per sequence of mel frames.
 * Plain TypeScript, no native code: sequences run as a batch, so each LSTM step of each layer is one
 * product of the batch's [input, hidden] rows with the layer's stacked weights.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { speakerModelManifestSchema, type SpeakerModelManifest } from '../../schemas/speaker-model.ts';

export const GE2E_MELS = 40;
const HIDDEN = 256;
const GATES = 4 * HIDDEN;
export const GE2E_EMBEDDING = 256;
const LAYERS = 3;

interface Layer {
  /** input size of the layer (40, then 256) */
  inputs: number;
  /** GATES rows of [W_ih | W_hh] (inputs + HIDDEN columns each); PyTorch's gate order i, f, g, o */
  weights: Float32Array;
  /** b_ih + b_hh */
  bias: Float32Array;
}

export interface Ge2eEncoder {
  layers: Layer[];
  /** GE2E_EMBEDDING rows of HIDDEN */
  linear: Float32Array;
  linearBias: Float32Array;
}

export class SpeakerModelError extends Error {
  override name = 'SpeakerModelError';
}

/** The encoder from a manifest and its weights (what the tools step writes). */
export function encoderFromWeights(manifest: SpeakerModelManifest, weights: Float32Array): Ge2eEncoder {
  const tensor = (name: string, shape: number[]): Float32Array => {
    const t = manifest.tensors.find((x) => x.name === name);
    if (!t) throw new SpeakerModelError(`the speaker model has no tensor ${name}`);
    if (t.shape.join('x') !== shape.join('x'))
      throw new SpeakerModelError(`${name} is ${t.shape.join('x')}, expected ${shape.join('x')}`);
    const n = shape.reduce((a, b) => a * b, 1);
    if (t.offset + n > weights.length) throw new SpeakerModelError(`${name} runs past the weights' end`);
    return weights.subarray(t.offset, t.offset + n);
  };
  const layers: Layer[] = [];
  for (let l = 0; l < LAYERS; l++) {
    const inputs = l === 0 ? GE2E_MELS : HIDDEN;
    const ih = tensor(`lstm.weight_ih_l${l}`, [GATES, inputs]);
    const hh = tensor(`lstm.weight_hh_l${l}`, [GATES, HIDDEN]);
    const bih = tensor(`lstm.bias_ih_l${l}`, [GATES]);
    const bhh = tensor(`lstm.bias_hh_l${l}`, [GATES]);
    const width = inputs + HIDDEN;
    const stacked = new Float32Array(GATES * width);
    for (let r = 0; r < GATES; r++) {
      stacked.set(ih.subarray(r * inputs, (r + 1) * inputs), r * width);
      stacked.set(hh.subarray(r * HIDDEN, (r + 1) * HIDDEN), r * width + inputs);
    }
    layers.push({ inputs, weights: stacked, bias: bih.map((b, i) => b + bhh[i]!) });
  }
  return {
    layers,
    linear: tensor('linear.weight', [GE2E_EMBEDDING, HIDDEN]),
    linearBias: tensor('linear.bias', [GE2E_EMBEDDING]),
  };
}

/** The converted model in `dir` (manifest.json and weights.f32). Throws a SpeakerModelError saying what is wrong. */
export function loadEncoder(dir: string): Ge2eEncoder {
  let manifest: SpeakerModelManifest;
  let bytes: Buffer;
  try {
    manifest = speakerModelManifestSchema.parse(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')));
    bytes = readFileSync(join(dir, 'weights.f32'));
  } catch (err) {
    throw new SpeakerModelError(`no usable speaker model in ${dir}: ${(err as Error).message}`);
  }
  if (bytes.length !== 4 * manifest.elements)
    throw new SpeakerModelError(
      `${dir}/weights.f32 holds ${bytes.length} bytes, expected ${4 * manifest.elements}`,
    );
  const weights = new Float32Array(manifest.elements);
  new Uint8Array(weights.buffer).set(bytes);
  return encoderFromWeights(manifest, weights);
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/**
 * One LSTM layer over a batch of sequences sorted longest first: `inputs` holds, per step t, the rows of
 * the sequences still running at t (lengths[b] > t), each `layer.inputs` wide, packed; returns the same
 * layout of hidden states (HIDDEN wide).
 */
function runLayer(layer: Layer, inputs: Float32Array, lengths: readonly number[]): Float32Array {
  const batch = lengths.length;
  const steps = lengths[0] ?? 0;
  const width = layer.inputs + HIDDEN;
  const { weights, bias } = layer;
  const h = new Float32Array(batch * HIDDEN);
  const c = new Float32Array(batch * HIDDEN);
  const row = new Float32Array(batch * width);
  const gates = new Float64Array(batch * GATES);
  let total = 0;
  for (const n of lengths) total += n;
  const out = new Float32Array(total * HIDDEN);
  let inAt = 0;
  let outAt = 0;
  for (let t = 0, active = batch; t < steps; t++) {
    while (active > 0 && lengths[active - 1]! <= t) active--;
    for (let b = 0; b < active; b++) {
      row.set(inputs.subarray(inAt + b * layer.inputs, inAt + (b + 1) * layer.inputs), b * width);
      row.set(h.subarray(b * HIDDEN, (b + 1) * HIDDEN), b * width + layer.inputs);
    }
    inAt += active * layer.inputs;
    matmulRows(row, active, width, weights, GATES, bias, gates);
    for (let b = 0; b < active; b++) {
      const g = b * GATES;
      const s = b * HIDDEN;
      for (let j = 0; j < HIDDEN; j++) {
        const i = sigmoid(gates[g + j]!);
        const f = sigmoid(gates[g + HIDDEN + j]!);
        const cand = Math.tanh(gates[g + 2 * HIDDEN + j]!);
        const o = sigmoid(gates[g + 3 * HIDDEN + j]!);
        const cell = f * c[s + j]! + i * cand;
        c[s + j] = cell;
        h[s + j] = o * Math.tanh(cell);
      }
    }
    out.set(h.subarray(0, active * HIDDEN), outAt);
    outAt += active * HIDDEN;
  }
  return out;
}

/**
 * out[b][j] = bias[j] + Σ_k x[b][k] · w[j][k] for `rows` rows of x: four rows at a time, so that each
 * weight read serves four sums.
 */
function matmulRows(
  x: Float32Array,
  rows: number,
  width: number,
  w: Float32Array,
  outputs: number,
  bias: Float32Array,
  out: Float64Array,
): void {
  let b = 0;
  for (; b + 4 <= rows; b += 4) {
    const x0 = b * width;
    const x1 = x0 + width;
    const x2 = x1 + width;
    const x3 = x2 + width;
    for (let j = 0; j < outputs; j++) {
      const wj = j * width;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let k = 0; k < width; k++) {
        const wk = w[wj + k]!;
        s0 += x[x0 + k]! * wk;
        s1 += x[x1 + k]! * wk;
        s2 += x[x2 + k]! * wk;
        s3 += x[x3 + k]! * wk;
      }
      const bj = bias[j]!;
      out[b * outputs + j] = s0 + bj;
      out[(b + 1) * outputs + j] = s1 + bj;
      out[(b + 2) * outputs + j] = s2 + bj;
      out[(b + 3) * outputs + j] = s3 + bj;
    }
  }
  for (; b < rows; b++) {
    const x0 = b * width;
    for (let j = 0; j < outputs; j++) {
      const wj = j * width;
      let s = 0;
      for (let k = 0; k < width; k++) s += x[x0 + k]! * w[wj + k]!;
      out[b * outputs + j] = s + bias[j]!;
    }
  }
}

/**
 * Embeddings of a batch of mel sequences (each frames × GE2E_MELS, row-major; none empty): one row of
 * GE2E_EMBEDDING per sequence, L2-normed, in the order given.
 */
export function embedSequences(encoder: Ge2eEncoder, sequences: readonly Float32Array[]): Float32Array[] {
  const order = sequences.map((_, i) => i).sort((a, b) => sequences[b]!.length - sequences[a]!.length);
  const lengths = order.map((i) => sequences[i]!.length / GE2E_MELS);
  if (lengths.some((n) => !Number.isInteger(n) || n < 1))
    throw new SpeakerModelError('a mel sequence is empty or not a whole number of frames');
  // Packed by step: at step t the rows of the sequences still running.
  let total = 0;
  for (const n of lengths) total += n;
  const packed = new Float32Array(total * GE2E_MELS);
  let at = 0;
  for (let t = 0; t < lengths[0]!; t++)
    for (let b = 0; b < order.length && lengths[b]! > t; b++) {
      packed.set(sequences[order[b]!]!.subarray(t * GE2E_MELS, (t + 1) * GE2E_MELS), at);
      at += GE2E_MELS;
    }
  let x: Float32Array = packed;
  for (const layer of encoder.layers) x = runLayer(layer, x, lengths);
  // Each sequence's last hidden state: at its own last step.
  const last = new Float32Array(order.length * HIDDEN);
  let offset = 0;
  for (let t = 0, active = order.length; t < lengths[0]!; t++) {
    while (active > 0 && lengths[active - 1]! <= t) active--;
    for (let b = 0; b < active; b++)
      if (lengths[b] === t + 1)
        last.set(x.subarray(offset + b * HIDDEN, offset + (b + 1) * HIDDEN), b * HIDDEN);
    offset += active * HIDDEN;
  }
  const raw = new Float64Array(order.length * GE2E_EMBEDDING);
  matmulRows(last, order.length, HIDDEN, encoder.linear, GE2E_EMBEDDING, encoder.linearBias, raw);
  const result: Float32Array[] = new Array(order.length);
  order.forEach((seq, b) => {
    const e = new Float32Array(GE2E_EMBEDDING);
    let norm = 0;
    for (let j = 0; j < GE2E_EMBEDDING; j++) {
      const v = Math.max(0, raw[b * GE2E_EMBEDDING + j]!);
      e[j] = v;
      norm += v * v;
    }
    norm = Math.sqrt(norm) || 1;
    for (let j = 0; j < GE2E_EMBEDDING; j++) e[j] = e[j]! / norm;
    result[seq] = e;
  });
  return result;
}
