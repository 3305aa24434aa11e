/**
 * The redaction rules a text worker uses: the configuration's own (`redaction.masks`, `terms`,
 * `patterns`), or those of `redaction.rulesFile` when one is set. A bad file stops the worker at start-up
 * with the file and the field at fault, never a value (a term may be a customer's name).
 */
import { readFileSync } from 'node:fs';
import { redactionRulesSchema, type RedactionRules } from '../../../schemas/redaction.ts';
import type { RedactionConfig } from '../../../schemas/config.ts';

export class RedactionRulesError extends Error {
  override name = 'RedactionRulesError';
}

export function loadRedactionRules(config: RedactionConfig): RedactionRules {
  if (!config.rulesFile) return { masks: config.masks, terms: config.terms, patterns: config.patterns };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(config.rulesFile, 'utf8'));
  } catch (err) {
    const why =
      err instanceof SyntaxError ? 'not JSON' : ((err as NodeJS.ErrnoException).code ?? 'unreadable');
    throw new RedactionRulesError(`redaction rules ${config.rulesFile}: ${why}`);
  }
  const parsed = redactionRulesSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new RedactionRulesError(
      `redaction rules ${config.rulesFile}: ${issue.path.join('.') || '(file)'}: ${issue.message}`,
    );
  }
  return parsed.data;
}
