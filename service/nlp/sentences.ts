/**
 * Sentence splitting and windowing for documents longer than the summarization limit (spec 03: 5,000
 * characters). Windows are cut at sentence boundaries so every window is a readable text of its own.
 */

/** Sentence ends: Japanese and ASCII full stops, question and exclamation marks, and line breaks. */
const SENTENCE = /[^。．！？!?\n]*(?:[。．！？!?]+[」』）)"'”’]*|\n+|$)/gu;

/**
 * Splits text into sentences, each keeping its terminator (and the closing brackets after it), so
 * `sentences.join('') === text`. An ASCII `.` ends a sentence only before whitespace (not in `3.5`).
 */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(SENTENCE)) {
    const piece = match[0];
    if (piece === '') continue;
    // Further split at ". " for English text.
    const parts = piece.split(/(?<=\.)(?=\s)/u);
    out.push(...parts.filter((p) => p !== ''));
  }
  return out;
}

/** Where to cut an over-long sentence: after the last comma or space before the limit. */
const SOFT_BREAK = /[、，,\s]/u;

/** Cuts `sentence` into pieces of at most `max` UTF-16 units, preferring commas and spaces, never inside a surrogate pair. */
export function cutLongSentence(sentence: string, max: number): string[] {
  const out: string[] = [];
  let rest = sentence;
  while (rest.length > max) {
    let cut = -1;
    for (let i = max - 1; i >= max / 2; i -= 1) {
      if (SOFT_BREAK.test(rest[i]!)) {
        cut = i + 1;
        break;
      }
    }
    if (cut < 0) {
      cut = max;
      const code = rest.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
    }
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest !== '') out.push(rest);
  return out;
}

/**
 * Packs sentences greedily into windows of at most `max` UTF-16 units (the larger of the two usual
 * character counts, so the service's limit holds however it counts). Only a single sentence longer than
 * `max` is cut inside, at a comma or space where possible.
 */
export function windowsOf(text: string, max: number): string[] {
  const windows: string[] = [];
  let current = '';
  for (const sentence of splitSentences(text)) {
    for (const piece of sentence.length > max ? cutLongSentence(sentence, max) : [sentence]) {
      if (current.length + piece.length > max && current !== '') {
        windows.push(current);
        current = '';
      }
      current += piece;
    }
  }
  if (current !== '') windows.push(current);
  return windows;
}

/** Characters as code points (the smaller count; used for the 10-character minimum). */
export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}
