/**
 * How the separator's frame pitch follows each voice (issue 36, fourteenth round; bench/README.md): per
 * call of a split and per speaker, the utterances' median pitch (semitones above 100 Hz), its spread, the
 * share of voiced frames an octave off their utterance's median (0.6 octave or more away: octave errors),
 * and for two-voice calls the voices' d′ (their median pitches apart over the pooled spread). Offline: no
 * verdict; each call staged as the pipeline stages it, every voiced frame as voicedFrames finds it.
 *
 *   node scripts/on-node.mjs ts bench/speakers-pitch.ts [--split dev] [--only two-21,two-22]
 */
import { parseArgs } from 'node:util';
import { stagedAudioReader } from '../activities/speakers/speakers-activities.ts';
import { analyzerFor, voicedFrames, VOICED_DIMS, V_PITCH } from '../activities/speakers/voice-features.ts';
import { BASIS_FRAMES } from '../activities/speakers/voice-separation.ts';
import { speakerCorpus, type Split } from './lib/speaker-corpus.ts';
import { stagedTrack } from './lib/staged-track.ts';

const { values } = parseArgs({ options: { only: { type: 'string' }, split: { type: 'string' } } });
const OCTAVE_OFF = 0.6;

interface Voice {
  medians: number[];
  frames: number;
  off: number;
}

/** Frames by their distance from their utterance's median, in tenths of an octave (−1.5 to +1.5). */
const histogram = new Array<number>(31).fill(0);

const meanSd = (xs: number[]) => {
  const m = xs.reduce((s, x) => s + x, 0) / xs.length;
  return { m, sd: Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / xs.length) };
};

async function main(): Promise<void> {
  const split = (values.split ?? 'dev') as Split;
  const only = values.only?.split(',').map((id) => id.trim());
  const calls = (await speakerCorpus({ split })).filter(
    (call) => call.kind !== 'dtmf' && (!only || only.includes(call.id)),
  );
  const analyzer = analyzerFor(8000);
  let allFrames = 0;
  let allOff = 0;
  for (const call of calls) {
    const { bytes } = await stagedTrack(call);
    const reader = stagedAudioReader([{ start: 0, bytes }]);
    const voices = new Map<number, Voice>();
    for (const span of call.spans) {
      if (Object.values(span.seconds).filter((s) => s > 0.05).length !== 1) continue;
      const voiced = voicedFrames(reader, span, analyzer, 1);
      // Utterances that decide the voices only (the separator's own bound).
      if (voiced.count < BASIS_FRAMES) continue;
      const p = Array.from({ length: voiced.count }, (_, i) => voiced.features[i * VOICED_DIMS + V_PITCH]!);
      const sorted = [...p].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)]!;
      const v = voices.get(span.speaker) ?? { medians: [], frames: 0, off: 0 };
      v.medians.push(12 * median);
      v.frames += p.length;
      v.off += p.filter((x) => Math.abs(x - median) >= OCTAVE_OFF).length;
      for (const x of p) {
        const b = Math.max(-15, Math.min(15, Math.round((x - median) * 10)));
        histogram[b + 15] = histogram[b + 15]! + 1;
      }
      voices.set(span.speaker, v);
    }
    const parts = [...voices.entries()]
      .sort(([a], [b]) => a - b)
      .map(([s, v]) => {
        allFrames += v.frames;
        allOff += v.off;
        const { m, sd } = meanSd(v.medians);
        return `s${s} ${m.toFixed(2)}±${sd.toFixed(2)} st (${v.medians.length}) off ${((100 * v.off) / v.frames).toFixed(1)} %`;
      });
    let apart = '';
    if (call.kind === 'two-voice' && voices.size === 2) {
      const [a, b] = [...voices.values()].map((v) => meanSd(v.medians));
      apart = ` d′ ${(Math.abs(a!.m - b!.m) / Math.sqrt((a!.sd ** 2 + b!.sd ** 2) / 2)).toFixed(2)}`;
    }
    console.log(`${call.id.padEnd(9)} ${parts.join('; ')}${apart}`);
  }
  console.log(histogram.map((n, i) => `${((i - 15) / 10).toFixed(1)}:${n}`).join(' '));
  console.log(`octave off: ${((100 * allOff) / allFrames).toFixed(2)} % of ${allFrames} frames`);
}

await main();
