/**
 * Where the redacted audio is masked: the redaction step's records (schemas/result.ts
 * redactionOutputSchema, one entry per utterance that held personal data) mapped to ranges of sample
 * frames of the recording.
 *
 * Which range, and why the whole utterance: stream recognition times sentences, not words (spec 02,
 * Server message: a `recognized` sentence has one `startTime`/`endTime`, nothing finer), so a
 * redaction's place inside an utterance is known in characters only. Spreading characters evenly over
 * the utterance's time would guess where the value was said, and a wrong guess leaves it audible; the
 * conservative mapping masks the utterance's whole recognized range, padded by
 * {@link REDACTED_AUDIO_PAD_SECONDS} each side. Should a recognizer time words some day, the range of
 * the words holding the value would take its place here. Every channel is masked over every range: a
 * customer's words reach the agent's channel too (side tone, echo, a speakerphone), and a mono
 * recording has both on one channel anyway.
 *
 * Fail-closed: an utterance whose times are not a range in the recording cannot be mapped, and then no
 * range is (a copy masked in some places but not all would look redacted and not be).
 */
import { REDACTED_AUDIO_END_TOLERANCE_SECONDS, REDACTED_AUDIO_PAD_SECONDS } from '../../schemas/limits.ts';

/** What the mapping reads of one record: an utterance's place in the timeline and its recognized times. */
export interface RedactedUtterance {
  index: number;
  start: number;
  end: number;
}

/** Sample frames [from, to) of the recording to mask, and the latest recognized end they cover (seconds). */
export interface FrameSpan {
  from: number;
  to: number;
  /** The latest end of the utterances merged into this span, unpadded: checked against the audio's length. */
  spokenEnd: number;
}

export type SpanMapping = { ok: true; spans: FrameSpan[] } | { ok: false; reason: string };

const at = (s: number) => `${s.toFixed(2)} s`;

/**
 * The frames to mask at `sampleRate`: each utterance's range padded by `pad` seconds (cut at 0),
 * rounded outwards to whole frames, overlapping or touching ranges merged, in time order. Refuses
 * times that are not finite, negative, or end before they start.
 */
export function mapRedactionSpans(
  utterances: readonly RedactedUtterance[],
  sampleRate: number,
  pad = REDACTED_AUDIO_PAD_SECONDS,
): SpanMapping {
  const ranges: FrameSpan[] = [];
  for (const u of utterances) {
    if (!Number.isFinite(u.start) || !Number.isFinite(u.end) || u.start < 0 || u.end <= u.start) {
      return {
        ok: false,
        reason: `utterance ${u.index} has no time range in the recording (${u.start}–${u.end} s): its redactions cannot be mapped to audio`,
      };
    }
    ranges.push({
      from: Math.max(0, Math.floor((u.start - pad) * sampleRate)),
      to: Math.ceil((u.end + pad) * sampleRate),
      spokenEnd: u.end,
    });
  }
  ranges.sort((a, b) => a.from - b.from);
  const spans: FrameSpan[] = [];
  for (const r of ranges) {
    const last = spans.at(-1);
    if (last && r.from <= last.to) {
      last.to = Math.max(last.to, r.to);
      last.spokenEnd = Math.max(last.spokenEnd, r.spokenEnd);
    } else spans.push({ ...r });
  }
  return { ok: true, spans };
}

/**
 * Why the spans do not fit a recording of `frames` sample frames, or undefined when they do: a span
 * must start inside it, and the speech it covers must end within {@link REDACTED_AUDIO_END_TOLERANCE_SECONDS}
 * of its end (further out, the recognized times and this audio disagree). Padding past the end is cut.
 */
export function spansBeyondAudio(
  spans: readonly FrameSpan[],
  frames: number,
  sampleRate: number,
  tolerance = REDACTED_AUDIO_END_TOLERANCE_SECONDS,
): string | undefined {
  const seconds = frames / sampleRate;
  for (const [i, s] of spans.entries()) {
    if (s.from >= frames || s.spokenEnd > seconds + tolerance) {
      return `redacted span ${i + 1} (${at(s.from / sampleRate)}–${at(s.spokenEnd)}) lies beyond the audio (${at(seconds)}): the recognized times do not fit this recording`;
    }
  }
  return undefined;
}

/** The spans as they lie in a recording of `frames` frames (cut at its end). */
export function clipSpans(spans: readonly FrameSpan[], frames: number): FrameSpan[] {
  return spans.filter((s) => s.from < frames).map((s) => ({ ...s, to: Math.min(s.to, frames) }));
}

/**
 * Walks a buffer of interleaved frames that starts at frame `position`, calling `outside` with each
 * stretch no span covers and `inside` with each stretch inside span `span` (its first frame's offset
 * from the span's start). Spans are sorted and disjoint; `cursor` (the first span not yet passed) is
 * carried from one buffer to the next.
 */
export function walkSpans(
  spans: readonly FrameSpan[],
  cursor: { span: number },
  position: number,
  frameCount: number,
  visit: {
    outside(first: number, count: number): void;
    inside(span: number, first: number, count: number, offsetInSpan: number): void;
  },
): void {
  let at = 0;
  while (at < frameCount) {
    const frame = position + at;
    while (cursor.span < spans.length && spans[cursor.span]!.to <= frame) cursor.span += 1;
    const next = spans[cursor.span];
    if (!next || next.from > frame) {
      const count = Math.min(frameCount - at, (next?.from ?? Infinity) - frame);
      visit.outside(at, count);
      at += count;
    } else {
      const count = Math.min(frameCount - at, next.to - frame);
      visit.inside(cursor.span, at, count, frame - next.from);
      at += count;
    }
  }
}
