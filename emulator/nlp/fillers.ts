/**
 * The filler lexicon and the normalization of lengthened sounds, shared by `remove_filler` (spec 01,
 * "Filler removal") and by recognition's `baseParam.filler` (spec 02: fillers in square brackets).
 *
 * An emulation, deterministic and documented as such: a fixed list of Japanese fillers, matched at word
 * boundaries. Words that are also ordinary words (あの "that", その "that", まあ) count as fillers only
 * when a pause follows them (a comma, a lengthening mark, the end, or another filler).
 */

/** Fillers that are fillers wherever they start a word; longest first when matching. */
const UNAMBIGUOUS = [
  'えーっと',
  'えーと',
  'えっと',
  'ええっと',
  'ええと',
  'えと',
  'えー',
  'あのー',
  'あのう',
  'そのー',
  'うーん',
  'うーむ',
  'んーと',
  'んー',
  'うー',
  'あー',
  'まー',
  'ま、',
];
/** Fillers only when followed by a pause. */
const AMBIGUOUS = ['あの', 'その', 'まあ', 'なんか', 'ほら'];

const PAUSE = /[、，,。．.！!？?\s]/;
const LENGTHENING = /[ー〜～]{2,}|[〜～]/g;

/**
 * Normalization of lengthened or disrupted expressions: runs of lengthening marks become one `ー`, and
 * repeated small っ one. The golden `えーーっと` → `えーっと` is the case recorded from the live service.
 */
export function normalizeLengthening(text: string): string {
  return text.replace(LENGTHENING, 'ー').replace(/っ{2,}/g, 'っ');
}

export interface FillerSpan {
  /** Start of the filler word. */
  begin: number;
  /** End of the filler word (exclusive). */
  end: number;
  word: string;
}

function isWordStart(text: string, i: number, previousFillerEnd: number): boolean {
  if (i === 0 || i === previousFillerEnd) return true;
  const prev = text[i - 1]!;
  return PAUSE.test(prev) || prev === '[';
}

function matchAt(text: string, i: number): string | undefined {
  for (const word of UNAMBIGUOUS) if (text.startsWith(word, i)) return word.replace(/、$/, '');
  for (const word of AMBIGUOUS) {
    if (!text.startsWith(word, i)) continue;
    const next = text[i + word.length];
    if (next === undefined || PAUSE.test(next) || next === 'ー') return word;
    if (matchAt(text, i + word.length)) return word;
  }
  return undefined;
}

/** The filler words of a text, in order. */
export function findFillers(text: string): FillerSpan[] {
  const spans: FillerSpan[] = [];
  let lastEnd = -1;
  for (let i = 0; i < text.length;) {
    if (isWordStart(text, i, lastEnd)) {
      const word = matchAt(text, i);
      if (word) {
        spans.push({ begin: i, end: i + word.length, word });
        lastEnd = i + word.length;
        i = lastEnd;
        continue;
      }
    }
    i++;
  }
  return spans;
}
