/**
 * `transcript.vtt`: the call's utterances as WebVTT cues (W3C WebVTT), one cue per utterance with a
 * voice span naming the speaker (`<v agent>…`), the cleaned text where filler removal ran, and
 * timestamps `HH:MM:SS.mmm` on the recording's clock.
 */
import { secondsToMs } from '../../schemas/units.ts';

export interface VttUtterance {
  index: number;
  speaker: string;
  start: number;
  end: number;
  text: string;
  cleanedText?: string | null | undefined;
}

/** Seconds → `HH:MM:SS.mmm` (hours grow past two digits for very long recordings). */
export function vttTimestamp(seconds: number): string {
  const totalMs = Math.max(0, secondsToMs(seconds));
  const ms = totalMs % 1000;
  const totalSeconds = Math.floor(totalMs / 1000);
  const s = totalSeconds % 60;
  const m = Math.floor(totalSeconds / 60) % 60;
  const h = Math.floor(totalSeconds / 3600);
  const pad = (n: number, width: number) => String(n).padStart(width, '0');
  return `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}.${pad(ms, 3)}`;
}

/** Cue text: the three characters WebVTT reserves escaped, no line breaks (a blank line ends a cue). */
export function escapeCueText(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\s*[\r\n]+\s*/g, ' ')
    .trim();
}

/** A voice annotation may not hold `>` or line breaks, nor start or end with spaces. */
function voiceName(speaker: string): string {
  return (
    speaker
      .replace(/[<>&\r\n]/g, ' ')
      .replace(/\s+/g, ' ')
      .trim() || 'speaker'
  );
}

/**
 * The document. Cues are ordered by start time (WebVTT requires it), utterances without text after
 * filler removal are left out, and an end not after its start is moved 1 ms after it.
 */
export function toWebVtt(utterances: readonly VttUtterance[]): string {
  const cues = [...utterances]
    .sort((a, b) => a.start - b.start || a.index - b.index)
    .flatMap((u) => {
      const text = escapeCueText(u.cleanedText ?? u.text);
      if (text === '') return [];
      const start = vttTimestamp(u.start);
      const endSeconds = secondsToMs(u.end) > secondsToMs(u.start) ? u.end : u.start + 0.001;
      return [
        `u${u.index}\n${start} --> ${vttTimestamp(endSeconds)}\n<v ${voiceName(u.speaker)}>${text}</v>`,
      ];
    });
  return ['WEBVTT', ...cues].join('\n\n') + '\n';
}
