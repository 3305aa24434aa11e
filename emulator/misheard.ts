/**
 * Lines the emulator "mishears", as a recognizer does in noise or with an unfamiliar word: phrasebook
 * lines 401–406 hold the text as heard (a wrong kanji compound where a common one was said), recognized
 * with a low confidence; the misrecognition endpoint (nlp/misrecognition.ts) knows what was meant and
 * suggests it. What the emulator knows is what it answers from: the heard span, the meant one, the
 * confidence it gave. Test recordings use these ids for calls with garbled utterances.
 */

/** A misheard line: the span as heard, and as meant. */
interface Misheard {
  heard: string;
  meant: string;
}

/** Recognition confidence of a misheard line (a decoded line has 0.95, a placeholder 0.1). */
export const MISHEARD_SCORE = 0.45;

/** Phrase id → the span recognized wrongly in its phrasebook text and what was said. */
export const MISHEARD: ReadonlyMap<number, Misheard> = new Map<number, Misheard>([
  [401, { heard: '声急所', meant: '請求書' }],
  [402, { heard: '津中らない', meant: 'つながらない' }],
  [403, { heard: '同すれば', meant: 'どうすれば' }],
  [404, { heard: '声急', meant: '請求' }],
  [405, { heard: '天滅', meant: '点滅' }],
  [406, { heard: '会約', meant: '解約' }],
]);
