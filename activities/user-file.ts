/**
 * Files users hand in (rule files, redaction rules, dictionaries): read with their size checked before a
 * byte is read, so a file of millions of entries is refused at once instead of filling the memory of the
 * command or a worker; and parsed (YAML, or JSON, which is YAML) with errors that name the file, the line
 * and the field (`rules.yaml: line 12: categories.1.rules.0.terms: …`). The one module that uses the
 * `yaml` library. Errors never quote a value: a term may be a customer's name.
 */
import { readFileSync, statSync } from 'node:fs';
import { isNode, LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';

export class UserFileError extends Error {
  override name = 'UserFileError';
}

/** `4 MiB`, `512 KiB`, `300 bytes`: sizes as the limits are stated in docs/input-limits.md. */
export function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${+(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

/** The refusal of a text longer than `maxBytes`, or undefined. */
function oversize(name: string, bytes: number, maxBytes: number): UserFileError | undefined {
  return bytes > maxBytes
    ? new UserFileError(
        `${name}: the file is ${sizeText(bytes)}, more than the ${sizeText(maxBytes)} callpipe reads (docs/input-limits.md)`,
      )
    : undefined;
}

/**
 * Reads a user's file as UTF-8. Refused before reading: anything but a regular file (a FIFO or a device
 * would block the reader) and a file larger than `maxBytes`.
 */
export function readUserFile(path: string, maxBytes: number): string {
  let size: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new UserFileError(`${path}: not a regular file`);
    size = stat.size;
  } catch (err) {
    if (err instanceof UserFileError) throw err;
    throw new UserFileError(`${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const tooBig = oversize(path, size, maxBytes);
  if (tooBig) throw tooBig;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UserFileError(`${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  // The file may have grown between the check and the read.
  const grown = oversize(path, Buffer.byteLength(text), maxBytes);
  if (grown) throw grown;
  return text;
}

/** `line N: ` of a path in a parsed document: the deepest node of the path that exists in it. */
function lineOf(doc: Document, lines: LineCounter, path: readonly PropertyKey[]): string {
  const keys = path.filter((p): p is string | number => typeof p !== 'symbol');
  let node: unknown;
  for (let n = keys.length; n >= 0 && !isNode(node); n--) node = doc.getIn(keys.slice(0, n), true);
  const offset = isNode(node) ? node.range?.[0] : undefined;
  return offset === undefined ? '' : `line ${lines.linePos(offset).line}: `;
}

export interface ParseUserFileOptions {
  /** Most bytes of the text (checked before parsing). */
  maxBytes: number;
  /**
   * `json`: the text is parsed with JSON.parse (fast) and YAML's parser is used only to place an error;
   * `yaml` (default): YAML's parser throughout, duplicate keys refused.
   */
  syntax?: 'yaml' | 'json';
}

/**
 * Parses and validates a user's file; `name` is how errors name it (its path). Throws a
 * {@link UserFileError}: `<name>: line <n>: <field>: <reason>`.
 */
export function parseUserFile<S extends z.ZodType>(
  text: string,
  name: string,
  schema: S,
  options: ParseUserFileOptions,
): z.output<S> {
  const tooBig = oversize(name, Buffer.byteLength(text), options.maxBytes);
  if (tooBig) throw tooBig;
  let doc: Document | undefined;
  const lines = new LineCounter();
  const document = () =>
    (doc ??= parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true }));
  let value: unknown;
  let parsedAsJson = false;
  if (options.syntax === 'json') {
    try {
      value = JSON.parse(text.replace(/^\uFEFF/, ''));
      parsedAsJson = true;
    } catch {
      // YAML's parser says where the syntax breaks.
    }
  }
  if (!parsedAsJson) {
    const syntax = document().errors[0];
    if (syntax) {
      const at = `line ${lines.linePos(syntax.pos[0]).line}: `;
      throw new UserFileError(`${name}: ${at}${syntax.message.split('\n')[0]}`);
    }
    value = document().toJS();
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    throw new UserFileError(
      `${name}: ${lineOf(document(), lines, path)}${path.join('.') || '(file)'}: ${issue.message}`,
    );
  }
  return parsed.data as z.output<S>;
}
