/**
 * Reading a rule file (schemas/rules.ts): YAML or JSON (JSON is YAML), its size bounded before it is
 * parsed (RULE_FILE_LIMITS), validated, with errors that name the file, the line and the field
 * (`rules.yaml: line 12: categories.1.rules.0.terms: …`, activities/user-file.ts), and a digest of what
 * it says (sha-256 of its canonical JSON: reformatting or comments do not change it) so a result records
 * exactly which rules scored it.
 *
 * Workers get a rule file as an object in the store (`uploadKey(…, 'rules', …)`, written by the CLI as
 * canonical JSON), or the default that ships beside this file.
 */
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { RULE_FILE_LIMITS, rulesFileSchema, type RulesFile } from '../../schemas/rules.ts';
import { parseUserFile, readUserFile, UserFileError } from '../user-file.ts';
import { FAILURE } from '../../schemas/retry-table.ts';
import type { ObjectStore } from '../storage/object-store.ts';

const DEFAULT_RULES_PATH = fileURLToPath(new URL('./default-rules.ja.yaml', import.meta.url));

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

/**
 * Parses and validates a rule file's text; `name` is how errors name it (its path). `json`: the text is
 * the canonical JSON the CLI stored, parsed fast (YAML's parser only places an error).
 */
export function parseRules(text: string, name: string, syntax: 'yaml' | 'json' = 'yaml'): LoadedRules {
  try {
    return loaded(
      parseUserFile(text, name, rulesFileSchema, { maxBytes: RULE_FILE_LIMITS.fileBytes, syntax }),
    );
  } catch (err) {
    if (err instanceof UserFileError) throw new RulesFileError(err.message);
    throw err;
  }
}

/** Reads a rule file from disk: its size is checked before it is read. */
export function readRulesFile(path: string): LoadedRules {
  let text: string;
  try {
    text = readUserFile(path, RULE_FILE_LIMITS.fileBytes);
  } catch (err) {
    if (err instanceof UserFileError) throw new RulesFileError(`rules file ${err.message}`);
    throw err;
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
          return parseRules(text, `s3://${store.bucket}/${key}`, 'json');
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
