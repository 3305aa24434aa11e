/**
 * Misrecognition detection (spec 01, `/nlp/beta/detect_misrecognition`; an emulation). The emulator
 * answers from what it knows of its own recognition: a placeholder of words nobody understood
 * (`〈不明〉`) is an error with no correction to offer; a span of a line it misheard (../misheard.ts) is an
 * error with what was meant as the correction. Anything else scores low with no candidate. Positions are
 * zero-based characters (code points), `end_pos` one past the last, as the service's other results.
 */
import { UNKNOWN_PHRASE_TEXT } from '../../schemas/synthetic-recording.ts';
import { MISHEARD } from '../misheard.ts';

/** The whole sentence's score without a known error: recognition is never certain. */
const CLEAN_SCORE = 0.05;
const PLACEHOLDER_SCORE = 0.9;
const MISHEARD_DETECT_SCORE = 0.85;
const CORRECTION_SCORE = 0.8;

type Candidate = {
  begin_pos: number;
  end_pos: number;
  form: string;
  detect_score: number;
  correction: { form: string; correct_score: number }[];
};

/** Every occurrence of `needle` in `text`, as code-point positions. */
function occurrences(text: string, needle: string): [number, number][] {
  const out: [number, number][] = [];
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) {
    const begin = [...text.slice(0, at)].length;
    out.push([begin, begin + [...needle].length]);
  }
  return out;
}

export function detectMisrecognition(sentence: string): { candidates: Candidate[]; score: number } {
  const candidates: Candidate[] = occurrences(sentence, UNKNOWN_PHRASE_TEXT).map(([b, e]) => ({
    begin_pos: b,
    end_pos: e,
    form: UNKNOWN_PHRASE_TEXT,
    detect_score: PLACEHOLDER_SCORE,
    correction: [],
  }));
  // Longest spans first; a span inside one already found is the same error.
  const spans = [...MISHEARD.values()].sort((a, b) => b.heard.length - a.heard.length);
  const overlaps = (b: number, e: number) => candidates.some((c) => b < c.end_pos && c.begin_pos < e);
  for (const { heard, meant } of spans) {
    for (const [b, e] of occurrences(sentence, heard).filter(([b, e]) => !overlaps(b, e))) {
      candidates.push({
        begin_pos: b,
        end_pos: e,
        form: heard,
        detect_score: MISHEARD_DETECT_SCORE,
        correction: [{ form: meant, correct_score: CORRECTION_SCORE }],
      });
    }
  }
  candidates.sort((a, b) => a.begin_pos - b.begin_pos);
  const score = candidates.reduce((s, c) => Math.max(s, c.detect_score), CLEAN_SCORE);
  return { candidates, score };
}
