/**
 * The speakers benchmarks' reference of who speaks when, marked as diarization references mark it: speech,
 * not lines. NIST's Rich Transcription evaluations (and md-eval's scoring of them) merge a speaker's
 * stretches of speech separated by less than 0.3 s and leave longer pauses out of the reference, so a
 * pause inside a synthesized line that a recognizer ends an utterance at is nobody's speech.
 *
 * Found on each line's own clean synthesizer output, before any telephone line, level or mix: there the
 * pauses are tens of decibels below the speech, so a level detector is exact enough.
 */
import { roundSecondsToMs } from '../../schemas/units.ts';

/** One stretch of time, in seconds. */
export interface Stretch {
  start: number;
  end: number;
}

/** Pauses shorter than this stay speech; longer ones are left out of the reference (the RT convention). */
const MIN_PAUSE_SECONDS = 0.3;
const FRAME_SECONDS = 0.01;
/**
 * A 10-ms frame is speech when its power is within this of the line's mean power. On the synthesizers'
 * output the pauses lie 45–60 dB below the line's level and its consonants above −35 dB; stop closures
 * that dip lower last well under 0.3 s and are bridged.
 */
const SPEECH_WITHIN_DB = 35;

/** `stretches` sorted, with every gap shorter than `minPause` closed. */
export function bridgePauses(stretches: readonly Stretch[], minPause = MIN_PAUSE_SECONDS): Stretch[] {
  const out: Stretch[] = [];
  for (const s of [...stretches].sort((a, b) => a.start - b.start)) {
    const last = out.at(-1);
    if (last && s.start - last.end < minPause - 1e-9) last.end = Math.max(last.end, s.end);
    else out.push({ ...s });
  }
  return out;
}

/** The stretches of one clean line's samples that are speech, in seconds from its first sample. */
export function voicedStretches(samples: Float32Array, rate: number): Stretch[] {
  const frame = Math.max(1, Math.round(FRAME_SECONDS * rate));
  let energy = 0;
  for (const x of samples) energy += x * x;
  const threshold = (energy / Math.max(1, samples.length)) * 10 ** (-SPEECH_WITHIN_DB / 10);
  const frames: Stretch[] = [];
  for (let at = 0; at < samples.length; at += frame) {
    const end = Math.min(samples.length, at + frame);
    let e = 0;
    for (let i = at; i < end; i++) e += samples[i]! * samples[i]!;
    if (threshold > 0 && e / (end - at) >= threshold) frames.push({ start: at / rate, end: end / rate });
  }
  return bridgePauses(frames, FRAME_SECONDS / 2).map((s) => ({
    start: roundSecondsToMs(s.start),
    end: roundSecondsToMs(s.end),
  }));
}

/** One line as placed in a call: its speaker, where it starts, and its speech in seconds from there. */
interface PlacedSpeech {
  speaker: number;
  start: number;
  speech: readonly Stretch[];
}

/**
 * The reference of a call: each speaker's speech from every line they say, pauses shorter than
 * MIN_PAUSE_SECONDS closed (within a line and between one speaker's lines), ordered by start.
 */
export function voicedReference(lines: readonly PlacedSpeech[]): (Stretch & { speaker: number })[] {
  const speakers = [...new Set(lines.map((l) => l.speaker))];
  return speakers
    .flatMap((speaker) =>
      bridgePauses(
        lines
          .filter((l) => l.speaker === speaker)
          .flatMap((l) => l.speech.map((s) => ({ start: l.start + s.start, end: l.start + s.end }))),
      ).map((s) => ({ speaker, start: roundSecondsToMs(s.start), end: roundSecondsToMs(s.end) })),
    )
    .sort((a, b) => a.start - b.start || a.speaker - b.speaker);
}
