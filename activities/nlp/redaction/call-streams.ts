/**
 * The call's text as the detectors read it. A *span* is found in one utterance; a number or a date may
 * be split over consecutive utterances of one speaker (a pause while reading a card), so the detectors
 * read each speaker's *stream*: their utterances, one after another in time, joined by a line break
 * where less than {@link JOIN_GAP_SECONDS} of silence lies between them. A span found in a stream is cut
 * back into the utterances it covers. *Context* (is this date a birth date? is this number an account?)
 * is what was said just before: the utterance so far, the speaker's turn, and the question it answers.
 */
import type { RedactionSource } from '../../../schemas/redaction.ts';

export interface DetectionUtterance {
  index: number;
  speaker: string;
  start: number;
  end: number;
  text: string;
}

/** A stretch of one utterance's text that holds personal data of `kind`. */
export interface Span {
  /** The utterance's `index` in the timeline. */
  utterance: number;
  /** UTF-16 offsets in its text. */
  begin: number;
  end: number;
  kind: string;
  source: RedactionSource;
  /**
   * The digits of the whole value on its last part (or only part), `''` on the earlier parts of a value
   * split over utterances, absent when the span's own text gives them: what a mask that keeps the last
   * digits may show. Never stored.
   */
  digits?: string;
}

/** Utterances of one speaker further apart than this are separate numbers, not one said in two goes. */
const JOIN_GAP_SECONDS = 10;
/** Context: at most this many utterances before, all within this many seconds. */
const CONTEXT_UTTERANCES = 3;
const CONTEXT_SECONDS = 30;

const JOINER = '\n';

export interface StreamPiece {
  /** Position of the utterance in the call's time order. */
  position: number;
  /** Where its text starts in the stream. */
  offset: number;
  length: number;
}

export interface SpeakerStream {
  text: string;
  pieces: StreamPiece[];
}

/** Each speaker's utterances joined where they follow each other closely; `utterances` in time order. */
export function speakerStreams(utterances: readonly DetectionUtterance[]): SpeakerStream[] {
  const streams: SpeakerStream[] = [];
  const open = new Map<string, { stream: SpeakerStream; end: number }>();
  utterances.forEach((u, position) => {
    const last = open.get(u.speaker);
    let stream: SpeakerStream;
    if (last && u.start - last.end <= JOIN_GAP_SECONDS) {
      stream = last.stream;
      stream.text += JOINER;
    } else {
      stream = { text: '', pieces: [] };
      streams.push(stream);
    }
    stream.pieces.push({ position, offset: stream.text.length, length: u.text.length });
    stream.text += u.text;
    open.set(u.speaker, { stream, end: u.end });
  });
  return streams;
}

/** Where a stream offset lies: the piece holding it (or the next piece, at a joiner). */
export function pieceAt(stream: SpeakerStream, offset: number): StreamPiece {
  return stream.pieces.find((p) => offset < p.offset + p.length) ?? stream.pieces[stream.pieces.length - 1]!;
}

/**
 * A stream span as utterance spans, one per utterance it covers (joiners left out); the value's digits
 * go with the last part only.
 */
export function cutStreamSpan(
  utterances: readonly DetectionUtterance[],
  stream: SpeakerStream,
  span: { begin: number; end: number; kind: string; source: RedactionSource; digits?: string },
): Span[] {
  const parts: Span[] = [];
  for (const piece of stream.pieces) {
    const begin = Math.max(span.begin, piece.offset);
    const end = Math.min(span.end, piece.offset + piece.length);
    if (end <= begin) continue;
    parts.push({
      utterance: utterances[piece.position]!.index,
      begin: begin - piece.offset,
      end: end - piece.offset,
      kind: span.kind,
      source: span.source,
    });
  }
  // Only the last part may show the value's last digits; the others show none of theirs.
  if (span.digits !== undefined)
    parts.forEach((p, i) => (p.digits = i === parts.length - 1 ? span.digits : ''));
  return parts;
}

/**
 * What was said before `offset` of the utterance at `position` (time order): the speaker's own turn so
 * far and the other speaker's utterance before it (at most {@link CONTEXT_UTTERANCES} utterances, all
 * within {@link CONTEXT_SECONDS}), then the utterance up to `offset`.
 */
export function contextBefore(
  utterances: readonly DetectionUtterance[],
  position: number,
  offset: number,
): string {
  const here = utterances[position]!;
  const before: string[] = [];
  for (let p = position - 1; p >= 0 && before.length < CONTEXT_UTTERANCES; p--) {
    const u = utterances[p]!;
    if (here.start - u.end > CONTEXT_SECONDS) break;
    before.unshift(u.text);
    // The other speaker's last words are the question this turn answers; before them is another exchange.
    if (u.speaker !== here.speaker) break;
  }
  return [...before, here.text.slice(0, Math.max(0, offset))].join(JOINER);
}

/** {@link contextBefore} of a stream offset. */
export function streamContext(
  utterances: readonly DetectionUtterance[],
  stream: SpeakerStream,
  offset: number,
): string {
  const piece = pieceAt(stream, offset);
  return contextBefore(utterances, piece.position, offset - piece.offset);
}
