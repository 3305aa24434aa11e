/**
 * A corpus call as the pipeline's recognizer cuts it (`bench:speakers -- --spans recognizer`): the
 * emulator's own segmenter (emulator/segments.ts: a segment opens at the first 10-ms frame above
 * −35 dBFS and closes after 0.2 s below) run on the staged 8-kHz mu-law track, as the emulator hears the
 * track the pipeline streams. Each segment is one utterance, and its truth the speaker holding most of it
 * in the voiced reference, as bench:speakers:pipeline scores result utterances. Offline: no stack.
 *
 * The script's lines (the default spans) are whole sentences; the recognizer cuts a line at every pause of
 * 0.2 s or more and opens segments on loud fragments of quiet speech, so this is the harder condition, and
 * the one users get. Unlike bench:speakers:pipeline (the test split's calls through the real stack), it
 * gives the development split the same condition to tune on.
 */
import { decodeMulaw } from '../../schemas/g711.ts';
import { Segmenter } from '../../emulator/segments.ts';
import { mostHeld, secondsHeld } from './diarization-score.ts';
import type { CorpusCall } from './speaker-corpus.ts';

/** Sample rate of a staged track (activities/media/channel-analysis.ts writes 8-kHz mu-law). */
const STAGED_RATE = 8000;

/** `call` with its spans replaced by the recognizer's segments of its staged track. */
export function withRecognizerSpans(call: CorpusCall, staged: Uint8Array): CorpusCall {
  const segmenter = new Segmenter(STAGED_RATE);
  const samples = decodeMulaw(staged);
  const segments = [...segmenter.push(samples), ...segmenter.flush()].flatMap((e) =>
    e.kind === 'end' ? [{ start: e.start, end: e.end }] : [],
  );
  const reference = call.reference.map((r) => ({ start: r.start, end: r.end, who: r.speaker }));
  const spans = segments.map((s) => {
    const held = secondsHeld(s, reference, call.voices);
    // Who is heard in the span, as the corpus's own spans say it (speakers absent left out).
    const seconds = Object.fromEntries(held.flatMap((t, who) => (t > 0 ? [[who, t]] : [])));
    return { ...s, speaker: mostHeld(held), seconds };
  });
  return { ...call, spans };
}
