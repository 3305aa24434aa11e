/**
 * Reading a rule file (schemas/rules.ts): YAML or JSON (JSON is YAML), validated, with errors that
 * name the file, the line and the field (`rules.yaml: line 12: categories.1.rules.0.terms: …`), and a
 * digest of what it says (sha-256 of its canonical JSON: reformatting or comments do not change it) so a
 * result records exactly which rules scored it. The one module that uses the `yaml` library.
 *
 * Workers get a rule file as an object in the store (`uploadKey(…, 'rules', …)`, written by the CLI as
 * canonical JSON), or the default that ships beside this file.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isNode, LineCounter, parseDocument } from 'yaml';
import { rulesFileSchema, type RulesFile } from '../../schemas/rules.ts';
import { FAILURE } from '../../schemas/retry-table.ts';
import type { ObjectStore } from '../storage/object-store.ts';

export const DEFAULT_RULES_PATH = fileURLToPath(new URL('./default-rules.ja.yaml', import.meta.url));

export interface LoadedRules {
  rules: RulesFile;
  /** `sha256:<hex>` of {@link canonicalRules}. */
  digest: string;
}

export class RulesFileError extends Error {
  override name = 'RulesFileError';
}

/** JSON with object keys sorted: the same rules give the same text, whatever the file's layout. */
export function canonicalRules(rules: RulesFile): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v)
              .filter(([, x]) => x !== undefined)
              .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
              .map(([k, x]) => [k, sort(x)]),
          )
        : v;
  return JSON.stringify(sort(rules));
}

function loaded(rules: RulesFile): LoadedRules {
  return { rules, digest: `sha256:${createHash('sha256').update(canonicalRules(rules)).digest('hex')}` };
}

/** Parses and validates a rule file's text; `name` is how errors name it (its path). */
export function parseRules(text: string, name: string): LoadedRules {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number | undefined) =>
    offset === undefined ? '' : `line ${lines.linePos(offset).line}: `;
  const syntax = doc.errors[0];
  if (syntax) throw new RulesFileError(`${name}: ${at(syntax.pos[0])}${syntax.message.split('\n')[0]}`);
  const parsed = rulesFileSchema.safeParse(doc.toJS());
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    // The deepest node of the path that exists in the file gives the line.
    let node: unknown;
    for (let n = path.length; n >= 0 && !isNode(node); n--) node = doc.getIn(path.slice(0, n), true);
    const offset = isNode(node) ? node.range?.[0] : undefined;
    throw new RulesFileError(`${name}: ${at(offset)}${path.join('.') || '(file)'}: ${issue.message}`);
  }
  return loaded(parsed.data);
}

/** Reads a rule file from disk. */
export function readRulesFile(path: string): LoadedRules {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new RulesFileError(`rules file ${path}: ${(err as Error).message}`);
  }
  return parseRules(text, path);
}

let defaults: LoadedRules | undefined;
/** The shipped default rule file for Japanese call centers. */
export function defaultRules(): LoadedRules {
  return (defaults ??= readRulesFile(DEFAULT_RULES_PATH));
}

/**
 * Rule files as workers read them: the object the CLI stored (content-addressed: read once per process)
 * or, without a key, the shipped default. A stored file that does not parse was not written by callpipe:
 * no retry can help (`InvalidStepInput`).
 */
export function storedRules(store: ObjectStore): (key: string | undefined) => Promise<LoadedRules> {
  const byKey = new Map<string, Promise<LoadedRules>>();
  return (key) => {
    if (!key) return Promise.resolve(defaultRules());
    let rules = byKey.get(key);
    if (!rules) {
      rules = store.getText(key).then((text) => {
        try {
          return parseRules(text, `s3://${store.bucket}/${key}`);
        } catch (err) {
          throw Object.assign(new Error((err as Error).message), { name: FAILURE.InvalidStepInput });
        }
      });
      rules.catch(() => byKey.delete(key));
      byKey.set(key, rules);
    }
    return rules;
  };
}
