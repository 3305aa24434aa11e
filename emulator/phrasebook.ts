/**
 * The phrasebook: phrase id → text (docs/design.md; schema in schemas/synthetic-recording.ts). The default
 * Japanese call-center phrasebook ships beside this file; `--phrasebook` replaces it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { phrasebookSchema, type Phrasebook } from '../schemas/synthetic-recording.ts';

export const DEFAULT_PHRASEBOOK_PATH = fileURLToPath(new URL('./phrasebook.ja.json', import.meta.url));

export function loadPhrasebook(path = DEFAULT_PHRASEBOOK_PATH): Map<number, string> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`phrasebook ${path}: ${(err as Error).message}`);
  }
  const parsed = phrasebookSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`phrasebook ${path}: ${issue.path.join('.')}: ${issue.message}`);
  }
  return phrasebookMap(parsed.data);
}

export function phrasebookMap(book: Phrasebook): Map<number, string> {
  return new Map(Object.entries(book).map(([id, text]) => [Number(id), text]));
}
