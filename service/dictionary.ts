/**
 * Recognition dictionaries (spec 02): a custom vocabulary as a file of dictionary lines (notation, TAB,
 * reading, optionally TAB and weight, the format the user dictionary is uploaded in), checked line by
 * line with the spec's rules before anything is sent, so a bad entry is refused with its line and the
 * spec's reason (`Surface illegal`, `Reading illegal`, `Prob illegal`, `Surface too long`…) instead of
 * coming back as `410 Invalid Parameter` from every session of a night.
 *
 * The same entries go as the temporary dictionary (`words`) of a start request (at most 1,000) or as the
 * user dictionary of a model (upload, at most 5,000 lines in the spec's error detail).
 */
import type { TemporaryWord } from '../schemas/service-asr.ts';

/** Temporary dictionary limits (spec 02, Temporary dictionary entry and Limits). */
export const MAX_TEMPORARY_WORDS = 1000;
const WORD_PROB_RANGE = { min: 1, max: 100 } as const;
const MAX_WORD_BYTES = 251;
/** Characters a surface must not contain: | / : ; [ ] tab " (spec 02). */
const FORBIDDEN_SURFACE_CHARS = /[|/:;[\]\t"]/;
/** Full-width katakana, with the prolonged sound mark, middle dot and iteration marks. */
const KATAKANA_READING = /^[\u30A1-\u30FA\u30FC-\u30FE\u31F0-\u31FF]+$/u;

/** Spec 02, Dictionary operation errors: `Invalid Parameter -> List Exceed 5000 lines`. */
export const MAX_USER_DICTIONARY_LINES = 5000;
/**
 * Bytes of a dictionary file callpipe reads (checked before it is read or parsed): the spec's largest
 * dictionary, 5,000 lines of at most 251 bytes, is about 1.3 MB.
 */
export const MAX_DICTIONARY_FILE_BYTES = 2 * 1024 * 1024;

export interface DictionaryEntry extends TemporaryWord {
  /** 1-based line of the file it came from. */
  line?: number;
}

/** What is wrong with an entry, as spec 02 says it (`detail`) and in words (`field`, `why`). */
export interface EntryProblem {
  detail:
    | 'Surface empty'
    | 'Reading empty'
    | 'Surface illegal'
    | 'Reading illegal'
    | 'Prob illegal'
    | 'Surface too long';
  field: 'surface' | 'reading' | 'prob' | '';
  why: string;
}

/** Spec 02, "Temporary dictionary entry" and "Dictionary line": the first rule an entry breaks. */
export function dictionaryEntryProblem(entry: TemporaryWord): EntryProblem | undefined {
  if (entry.surface === '') return { detail: 'Surface empty', field: 'surface', why: 'must not be empty' };
  if (FORBIDDEN_SURFACE_CHARS.test(entry.surface))
    return {
      detail: 'Surface illegal',
      field: 'surface',
      why: 'must not contain | / : ; [ ] tab or double quote',
    };
  if (entry.reading === '') return { detail: 'Reading empty', field: 'reading', why: 'must not be empty' };
  if (!KATAKANA_READING.test(entry.reading))
    return { detail: 'Reading illegal', field: 'reading', why: 'must be full-width katakana' };
  if (
    entry.prob !== undefined &&
    (!Number.isInteger(entry.prob) || entry.prob < WORD_PROB_RANGE.min || entry.prob > WORD_PROB_RANGE.max)
  )
    return { detail: 'Prob illegal', field: 'prob', why: 'must be an integer from 1 to 100' };
  const bytes = Buffer.byteLength(entry.surface) + Buffer.byteLength(entry.reading);
  if (bytes > MAX_WORD_BYTES)
    return {
      detail: 'Surface too long',
      field: '',
      why: `surface plus reading is ${bytes} bytes, at most ${MAX_WORD_BYTES}`,
    };
  return undefined;
}

export class DictionaryFileError extends Error {
  override name = 'DictionaryFileError';
}

export interface ParseDictionaryOptions {
  /** How the file is named in errors (its path). */
  name: string;
  /** Most entries allowed: {@link MAX_TEMPORARY_WORDS} for a temporary dictionary (default). */
  maxEntries?: number;
}

/**
 * Parses dictionary lines (`#` comments and blank lines skipped, a BOM and CRLF tolerated); throws a
 * {@link DictionaryFileError} naming the file, each bad line (up to five) and the spec's reason.
 */
export function parseDictionary(text: string, options: ParseDictionaryOptions): DictionaryEntry[] {
  const max = options.maxEntries ?? MAX_TEMPORARY_WORDS;
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_DICTIONARY_FILE_BYTES)
    throw new DictionaryFileError(
      `${options.name}: the file is ${bytes} bytes, more than the ${MAX_DICTIONARY_FILE_BYTES} callpipe reads (docs/input-limits.md)`,
    );
  const entries: DictionaryEntry[] = [];
  const problems: string[] = [];
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((raw, i) => {
      const line = i + 1;
      if (raw.trim() === '' || raw.trimStart().startsWith('#')) return;
      const fields = raw.split('\t');
      if (fields.length < 2 || fields.length > 3) {
        problems.push(
          `line ${line}: Invalid Parameter -> List is null (a line is notation<TAB>reading[<TAB>weight])`,
        );
        return;
      }
      const [surface, reading, weight] = fields.map((f) => f.trim());
      const prob = weight === undefined || weight === '' ? undefined : Number(weight);
      const entry: DictionaryEntry = {
        surface: surface!,
        reading: reading!,
        ...(prob !== undefined ? { prob } : {}),
        line,
      };
      const problem = dictionaryEntryProblem(entry);
      if (problem)
        problems.push(
          `line ${line}: ${problem.detail} (${problem.field ? `${problem.field}: ` : ''}${problem.why})`,
        );
      else entries.push(entry);
    });
  if (problems.length > 0) {
    const more = problems.length > 5 ? `; and ${problems.length - 5} more` : '';
    throw new DictionaryFileError(`${options.name}: ${problems.slice(0, 5).join('; ')}${more}`);
  }
  if (entries.length === 0)
    throw new DictionaryFileError(`${options.name}: Invalid Parameter -> List is null (no entries)`);
  if (entries.length > max) {
    const detail =
      max === MAX_TEMPORARY_WORDS
        ? `Cascade words exceeded ${max}`
        : `Invalid Parameter -> List Exceed ${max} lines`;
    throw new DictionaryFileError(`${options.name}: ${detail} (${entries.length} entries)`);
  }
  return entries;
}

/** The entries as dictionary lines (an upload's `cascadeword` part). */
export function dictionaryLines(entries: readonly TemporaryWord[]): string {
  return (
    entries
      .map((e) => [e.surface, e.reading, ...(e.prob !== undefined ? [String(e.prob)] : [])].join('\t'))
      .join('\n') + '\n'
  );
}

/** The words of a start request: the entries without their line numbers. */
export function temporaryWords(entries: readonly DictionaryEntry[]): TemporaryWord[] {
  return entries.map(({ surface, reading, prob }) => ({
    surface,
    reading,
    ...(prob !== undefined ? { prob } : {}),
  }));
}
