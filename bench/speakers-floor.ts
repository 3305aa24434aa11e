/**
 * What the floor of bench:speakers:pipeline's speech calls is made of (issue 36): the DER of a
 * recognizer's utterances each given its true speaker, the part no separator removes. Offline, no stack:
 * the emulator's own segmenter (emulator/segments.ts, as the pipeline's recognizer cuts utterances) run on
 * each speech call's audio as the corpus wrote it, each segment given the speaker holding most of it in the
 * voiced reference, and the missed speech split by why: two speakers under one segment, or no segment open
 * while the call's audio is below the segmenter's −35 dBFS, or above it. The corpus audio, not the staged
 * track the pipeline streams, so the floor is near the pipeline's, not equal to it.
 *
 *   node scripts/on-node.mjs ts bench/speakers-floor.ts [--speech 14]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Segmenter } from '../emulator/segments.ts';
import { derOf, totalDer, truthLabelledError, type DerParts } from './lib/diarization-score.ts';
import { pipelineSpeechCalls, type CorpusCall } from './lib/speaker-corpus.ts';

const STEP = 0.01;
const COLLAR_SECONDS = 0.25;
/** The segmenter's loud frame (emulator/segments.ts). */
const SOUND_DBFS = -35;

/** Mono 16-bit PCM samples of a corpus WAV (the corpus writes nothing else). */
function wavSamples(path: string): { samples: Float32Array; rate: number } {
  const b = readFileSync(path);
  let rate = 0;
  for (let at = 12; at + 8 <= b.length;) {
    const id = b.toString('ascii', at, at + 4);
    const size = b.readUInt32LE(at + 4);
    if (id === 'fmt ') {
      if (b.readUInt16LE(at + 8) !== 1 || b.readUInt16LE(at + 10) !== 1 || b.readUInt16LE(at + 22) !== 16)
        throw new Error(`${path}: not mono 16-bit PCM`);
      rate = b.readUInt32LE(at + 12);
    }
    if (id === 'data') {
      const n = Math.min(size, b.length - at - 8) >> 1;
      const samples = new Float32Array(n);
      for (let i = 0; i < n; i++) samples[i] = b.readInt16LE(at + 8 + 2 * i) / 32768;
      return { samples, rate };
    }
    at += 8 + size + (size & 1);
  }
  throw new Error(`${path}: no data chunk`);
}

interface Causes {
  /** Seconds of reference speaker time scored (outside the collars). */
  scored: number;
  /** Missed: a second speaker under a segment that is one speaker's. */
  overlap: number;
  /** Missed: no segment open, the audio below SOUND_DBFS. */
  quiet: number;
  /** Missed: no segment open over louder audio. */
  loud: number;
}

function missedByCause(
  call: CorpusCall,
  spans: readonly { start: number; end: number }[],
  audio: Float32Array,
  rate: number,
): Causes {
  const end = Math.max(...call.reference.map((r) => r.end), ...spans.map((s) => s.end));
  const n = Math.ceil(end / STEP) + 1;
  const speakers = new Uint8Array(n);
  const open = new Uint8Array(n);
  const scored = new Uint8Array(n).fill(1);
  const index = (t: number) => Math.max(0, Math.min(n, Math.round(t / STEP)));
  for (const r of call.reference) {
    for (let i = index(r.start); i < index(r.end); i++) speakers[i]!++;
    for (const t of [r.start, r.end]) scored.fill(0, index(t - COLLAR_SECONDS), index(t + COLLAR_SECONDS));
  }
  for (const s of spans) open.fill(1, index(s.start), index(s.end));
  const frame = Math.round(STEP * rate);
  const causes: Causes = { scored: 0, overlap: 0, quiet: 0, loud: 0 };
  for (let i = 0; i < n; i++) {
    const k = speakers[i]!;
    if (!scored[i] || !k) continue;
    causes.scored += k * STEP;
    if (open[i]) {
      causes.overlap += (k - 1) * STEP;
      continue;
    }
    let energy = 0;
    const from = i * frame;
    const to = Math.min(audio.length, from + frame);
    for (let j = from; j < to; j++) energy += audio[j]! * audio[j]!;
    const dbfs = 10 * Math.log10(energy / Math.max(1, to - from) + 1e-20);
    causes[dbfs < SOUND_DBFS ? 'quiet' : 'loud'] += k * STEP;
  }
  return causes;
}

const { values } = parseArgs({ options: { speech: { type: 'string', default: '14' } } });
const rows: { call: CorpusCall; floor: DerParts; lines: DerParts; causes: Causes }[] = [];
for (const call of await pipelineSpeechCalls(Number(values.speech))) {
  const { samples, rate } = wavSamples(call.path);
  const segmenter = new Segmenter(rate);
  const spans = [...segmenter.push(samples), ...segmenter.flush()].flatMap((e) =>
    e.kind === 'end' ? [{ start: e.start, end: e.end }] : [],
  );
  const labelled = (segments: CorpusCall['segments']) =>
    truthLabelledError(
      segments.map((s) => ({ start: s.start, end: s.end, who: s.speaker })),
      spans,
      3,
    );
  rows.push({
    call,
    floor: labelled(call.reference),
    lines: labelled(call.segments),
    causes: missedByCause(call, spans, samples, rate),
  });
}

const pct = (x: number, of: number) => `${((100 * x) / Math.max(1e-9, of)).toFixed(1)}`;
const report = (label: string, group: typeof rows) => {
  if (!group.length) return;
  const floor = totalDer(group.map((r) => r.floor));
  const lines = totalDer(group.map((r) => r.lines));
  const c = group.reduce(
    (a, r) => ({
      scored: a.scored + r.causes.scored,
      overlap: a.overlap + r.causes.overlap,
      quiet: a.quiet + r.causes.quiet,
      loud: a.loud + r.causes.loud,
    }),
    { scored: 0, overlap: 0, quiet: 0, loud: 0 },
  );
  console.log(
    `${label.padEnd(34)} floor ${pct(derOf(floor), 1)} % = missed ${pct(floor.missed, floor.scored)} (two speakers under one segment ${pct(c.overlap, c.scored)}, no segment over audio below ${SOUND_DBFS} dBFS ${pct(c.quiet, c.scored)}, over louder audio ${pct(c.loud, c.scored)}) + false alarm ${pct(floor.falseAlarm, floor.scored)} + confusion ${pct(floor.confusion, floor.scored)}; against the lines ${pct(derOf(lines), 1)} %`,
  );
};
console.log(
  "the emulator's segmenter on the corpus audio, each segment given its true speaker (collar 0.25 s)",
);
for (const r of rows) report(`${r.call.id} (${r.call.description.split('; ').at(-1)})`, [r]);
for (const engine of ['openjtalk', 'espeak'] as const)
  for (const style of ['pure', 'dtmf+speech'] as const)
    report(
      `${engine} ${style}`,
      rows.filter((r) => r.call.engine === engine && r.call.style === style),
    );
report('all', rows);
