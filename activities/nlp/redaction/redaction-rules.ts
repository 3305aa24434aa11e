/**
 * The redaction rules a text worker uses: the configuration's own (`redaction.masks`, `terms`,
 * `patterns`), or those of `redaction.rulesFile` when one is set. The file's size is bounded before it is
 * read (REDACTION_RULE_LIMITS) and every pattern must run on the linear-time engine
 * (schemas/user-pattern.ts). A bad file stops the worker at start-up, and fails a command that takes
 * rules before anything starts, with the file, the line, the field and the reason, never a value (a term
 * may be a customer's name).
 */
import {
  REDACTION_RULE_LIMITS,
  redactionRulesSchema,
  type RedactionRules,
} from '../../../schemas/redaction.ts';
import type { RedactionConfig } from '../../../schemas/config.ts';
import { parseUserFile, readUserFile, UserFileError } from '../../user-file.ts';

export class RedactionRulesError extends Error {
  override name = 'RedactionRulesError';
}

export function loadRedactionRules(config: RedactionConfig): RedactionRules {
  if (!config.rulesFile) return { masks: config.masks, terms: config.terms, patterns: config.patterns };
  try {
    const text = readUserFile(config.rulesFile, REDACTION_RULE_LIMITS.fileBytes);
    return parseUserFile(text, config.rulesFile, redactionRulesSchema, {
      maxBytes: REDACTION_RULE_LIMITS.fileBytes,
      syntax: 'json',
    });
  } catch (err) {
    if (err instanceof UserFileError) throw new RedactionRulesError(`redaction rules ${err.message}`);
    throw err;
  }
}
