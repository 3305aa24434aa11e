/**
 * The files a batch of calls is processed with, besides the recordings: the rule file of call insights
 * (`--rules`, CALLPIPE_RULES) and the custom vocabulary (`--dictionary`, CALLPIPE_DICTIONARY, spec 02's
 * temporary dictionary). Each is
 * read and validated here, before any workflow starts, so a mistake fails the command with the file, the
 * line and the reason instead of failing calls in the middle of a night; then it is stored in the input
 * prefix, content-addressed and as the workers read it (canonical JSON), and only its key travels in the
 * workflows' inputs.
 */
import type { ObjectStore } from '../activities/storage/object-store.ts';
import {
  canonicalRules,
  readRulesFile,
  RulesFileError,
  type LoadedRules,
} from '../activities/insights/rule-file.ts';
import { createHash } from 'node:crypto';
import { readUserFile, UserFileError } from '../activities/user-file.ts';
import { loadRedactionRules, RedactionRulesError } from '../activities/nlp/redaction/redaction-rules.ts';
import { uploadKey } from '../schemas/call-keys.ts';
import {
  DictionaryFileError,
  MAX_DICTIONARY_FILE_BYTES,
  parseDictionary,
  temporaryWords,
} from '../service/dictionary.ts';
import type { Config } from '../schemas/config.ts';
import { lineClassifiers, type LineClassifier } from '../schemas/rules.ts';
import { CliError } from './command.ts';

export interface StoredRules {
  key: string;
  loaded: LoadedRules;
}

async function putOnce(store: ObjectStore, key: string, body: string): Promise<void> {
  if (!(await store.exists(key))) await store.put(key, body, { contentType: 'application/json' });
}

/** Reads, validates and stores the rule file named by `path` or the configuration; undefined: the shipped default. */
export async function storeRules(
  store: ObjectStore,
  config: Config,
  path: string | undefined,
): Promise<StoredRules | undefined> {
  const file = path ?? config.insights.rules;
  if (!file) return undefined;
  let loaded: LoadedRules;
  try {
    loaded = readRulesFile(file);
  } catch (err) {
    if (err instanceof RulesFileError) throw new CliError(`rules: ${err.message}`);
    throw err;
  }
  const key = uploadKey(config.s3.inputPrefix, 'rules', loaded.digest.replace(/^sha256:/, ''), 'rules.json');
  await putOnce(store, key, canonicalRules(loaded.rules));
  return { key, loaded };
}

/** Reads and checks a dictionary file (spec 02's rules, at most 1,000 temporary words); a CliError names the line. */
export function readDictionaryFile(path: string, maxEntries?: number) {
  let text: string;
  try {
    text = readUserFile(path, MAX_DICTIONARY_FILE_BYTES);
  } catch (err) {
    if (err instanceof UserFileError) throw new CliError(`dictionary: ${err.message}`);
    throw err;
  }
  try {
    return parseDictionary(text, { name: path, ...(maxEntries ? { maxEntries } : {}) });
  } catch (err) {
    if (err instanceof DictionaryFileError) throw new CliError(`dictionary: ${err.message}`);
    throw err;
  }
}

/** Checks and stores the custom vocabulary of `path` or the configuration as the workers read it (JSON words). */
async function storeDictionary(
  store: ObjectStore,
  config: Config,
  path: string | undefined,
): Promise<string | undefined> {
  const file = path ?? config.insights.dictionary;
  if (!file) return undefined;
  const body = JSON.stringify(temporaryWords(readDictionaryFile(file)));
  const digest = createHash('sha256').update(body).digest('hex');
  const key = uploadKey(config.s3.inputPrefix, 'dictionaries', digest, 'words.json');
  await putOnce(store, key, body);
  return key;
}

/** What the workflows take of these files: their keys (ProcessRecordingInput, a backfill's `child`). */
export interface CallFileKeys {
  rulesKey?: string;
  wordsKey?: string;
  /** The rule file's `reasons.model`. */
  reasonsModel?: string;
  /** The rule file's classifier rules' (model, speaker) pairs. */
  lineClassifiers?: LineClassifier[];
}

export interface CallFileOptions {
  /** `--rules`; default CALLPIPE_RULES, else the shipped rules. */
  rules?: string | undefined;
  /** `--dictionary`; default CALLPIPE_DICTIONARY, else none. */
  dictionary?: string | undefined;
}

/**
 * The redaction rules file the workers will load (`redaction.rulesFile`, CALLPIPE_REDACTION_RULES), checked
 * here too when this command sees one, so a pattern the workers would refuse fails the command first.
 */
export function checkRedactionRules(config: Config): void {
  try {
    loadRedactionRules(config.redaction);
  } catch (err) {
    if (err instanceof RedactionRulesError) throw new CliError(err.message);
    throw err;
  }
}

/** Validates and stores every file of {@link CallFileOptions}; run it before starting anything. */
export async function storeCallFiles(
  store: ObjectStore,
  config: Config,
  options: CallFileOptions,
): Promise<CallFileKeys> {
  checkRedactionRules(config);
  const rules = await storeRules(store, config, options.rules);
  const wordsKey = await storeDictionary(store, config, options.dictionary);
  const reasonsModel = rules?.loaded.rules.reasons?.model;
  const classifiers = rules ? lineClassifiers(rules.loaded.rules) : [];
  return {
    ...(rules ? { rulesKey: rules.key } : {}),
    ...(wordsKey ? { wordsKey } : {}),
    ...(reasonsModel ? { reasonsModel } : {}),
    ...(classifiers.length > 0 ? { lineClassifiers: classifiers } : {}),
  };
}

/** The help lines of the options above, their text starting at `column` as the command's others do. */
export function callFileHelp(column: number): string {
  const line = (flag: string, text: string[]) =>
    [`  ${flag}`.padEnd(column) + text[0], ...text.slice(1).map((t) => ' '.repeat(column) + t)].join('\n');
  return [
    line('--rules <file>', [
      'rule file of categories and the scorecard (YAML or JSON; default',
      'CALLPIPE_RULES, else the shipped Japanese one), checked before anything starts',
    ]),
    line('--dictionary <file>', [
      'custom vocabulary sent with every recognition session: lines of',
      'notation<TAB>reading[<TAB>weight] (default CALLPIPE_DICTIONARY), checked first',
    ]),
  ].join('\n');
}
