/**
 * Plain-text tables for the commands' output (status, process, demo, query): columns padded to the
 * widest cell by display width, so Japanese text (two columns a character in a terminal) lines up.
 */

/** Terminal columns a string takes: East Asian wide and full-width characters count two. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    const wide =
      (cp >= 0x1100 && cp <= 0x115f) ||
      (cp >= 0x2e80 && cp <= 0xa4cf) ||
      (cp >= 0xac00 && cp <= 0xd7a3) ||
      (cp >= 0xf900 && cp <= 0xfaff) ||
      (cp >= 0xfe30 && cp <= 0xfe4f) ||
      (cp >= 0xff00 && cp <= 0xff60) ||
      (cp >= 0xffe0 && cp <= 0xffe6) ||
      (cp >= 0x20000 && cp <= 0x3fffd);
    width += wide ? 2 : 1;
  }
  return width;
}

/** Rows (the first is the header) as aligned text, two spaces between columns, no trailing blanks. */
export function textTable(rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return '';
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => displayWidth(r[i] ?? ''))));
  return rows
    .map((r) =>
      r
        .map((c, i) => c + ' '.repeat(widths[i]! - displayWidth(c)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
