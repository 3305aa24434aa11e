/**
 * Publishes the JSON Schema of result.json (and of error.json, under `$defs.CallError`) from the zod
 * schemas of `result.ts`, of the rule file from `rules.ts`, and the reference of the analysis tables from
 * `tables.ts`: `node scripts/on-node.mjs ts schemas/generate-json-schema.ts` rewrites `result.schema.json`,
 * `rules.schema.json` and `tables.md`. `test/unit/result.json-schema.test.ts` fails when a committed file
 * differs from what this builds.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { z } from 'zod';
import { errorDocumentSchema, RESULT_SCHEMA_VERSION, resultDocumentSchema } from './result.ts';
import { RULES_FORMAT_VERSION, rulesFileSchema } from './rules.ts';
import { tablesReference } from './tables.ts';

export const TABLES_REFERENCE_PATH = fileURLToPath(new URL('./tables.md', import.meta.url));

/** tables.md's exact text, formatted by prettier (`npm run lint` checks it). */
export async function renderTablesReference(): Promise<string> {
  const config = (await resolveConfig(TABLES_REFERENCE_PATH)) ?? {};
  return format(tablesReference(), { ...config, parser: 'markdown' });
}

export const JSON_SCHEMA_PATH = fileURLToPath(new URL('./result.schema.json', import.meta.url));
export const JSON_SCHEMA_ID = `https://callpipe.dev/schemas/result.v${RESULT_SCHEMA_VERSION}.schema.json`;

export const RULES_JSON_SCHEMA_PATH = fileURLToPath(new URL('./rules.schema.json', import.meta.url));
export const RULES_JSON_SCHEMA_ID = `https://callpipe.dev/schemas/rules.v${RULES_FORMAT_VERSION}.schema.json`;

type JsonSchema = Record<string, unknown> & { $defs?: Record<string, unknown> };

/** The published document: result.json's schema at the top, error.json's in `$defs.CallError`. */
export function buildJsonSchema(): JsonSchema {
  const options = { target: 'draft-2020-12', io: 'output' } as const;
  const result = z.toJSONSchema(resultDocumentSchema, options) as JsonSchema;
  const error = z.toJSONSchema(errorDocumentSchema, options) as JsonSchema;
  // Both tops are `$ref`s into their `$defs` (every schema of result.ts carries an id), so merging the
  // `$defs` puts error.json's schema at `#/$defs/CallError`.
  const { $schema, $defs: resultDefs = {}, ...resultSchema } = result;
  const $defs: Record<string, unknown> = { ...resultDefs, ...error.$defs };
  return {
    $schema,
    $id: JSON_SCHEMA_ID,
    ...resultSchema,
    $defs: Object.fromEntries(Object.entries($defs).sort(([a], [b]) => a.localeCompare(b))),
  };
}

/** The rule file as its authors write it (defaults optional: `io: 'input'`). */
export function buildRulesJsonSchema(): JsonSchema {
  const { $schema, ...rest } = z.toJSONSchema(rulesFileSchema, {
    target: 'draft-2020-12',
    io: 'input',
  }) as JsonSchema;
  return { $schema, $id: RULES_JSON_SCHEMA_ID, ...rest };
}

async function render(path: string, schema: JsonSchema): Promise<string> {
  const config = (await resolveConfig(path)) ?? {};
  return format(JSON.stringify(schema), { ...config, parser: 'json' });
}

/** The file's exact text, formatted by prettier with the repository's settings (`npm run lint` checks it). */
export async function renderJsonSchema(): Promise<string> {
  return render(JSON_SCHEMA_PATH, buildJsonSchema());
}

export async function renderRulesJsonSchema(): Promise<string> {
  return render(RULES_JSON_SCHEMA_PATH, buildRulesJsonSchema());
}

async function run(): Promise<void> {
  writeFileSync(JSON_SCHEMA_PATH, await renderJsonSchema());
  console.log(`wrote ${JSON_SCHEMA_PATH}`);
  writeFileSync(RULES_JSON_SCHEMA_PATH, await renderRulesJsonSchema());
  console.log(`wrote ${RULES_JSON_SCHEMA_PATH}`);
  writeFileSync(TABLES_REFERENCE_PATH, await renderTablesReference());
  console.log(`wrote ${TABLES_REFERENCE_PATH}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  run().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
