/**
 * Users' names and keys as callpipe shows them to people (the pages, the night report, the Web UI's
 * summary of a workflow): the invisible characters that reorder text (bidirectional embeddings, overrides,
 * isolates and marks) are shown as visible escapes, so a key holding a right-to-left override reads as
 * it is stored, never reversed or disguised (`invoice\u202Egpj.wav` is not shown as `invoicevaw.jpg`).
 * Only what is displayed changes: keys, ids and documents keep their text.
 *
 * Pure, with no imports: workflow code and the browser-side data of the pages use it too.
 */

/** U+202A–U+202E (embeddings, overrides, pop), U+2066–U+2069 (isolates), U+200E/F and U+061C (marks). */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g;

/** `text` with each bidirectional control shown as `<U+202E>`. */
export function visibleControls(text: string): string {
  return text.replace(
    BIDI_CONTROLS,
    (c) => `<U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`,
  );
}
