import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  JSON_SCHEMA_PATH,
  renderJsonSchema,
  renderRulesJsonSchema,
  RULES_JSON_SCHEMA_PATH,
  renderTablesReference,
  TABLES_REFERENCE_PATH,
} from '../../schemas/generate-json-schema.ts';
import { TABLES } from '../../schemas/tables.ts';
import { STAGES } from '../../schemas/recording.ts';
import { RESULT_SCHEMA_VERSION } from '../../schemas/result.ts';

describe('schemas/result.schema.json', () => {
  it('is what `node scripts/on-node.mjs ts schemas/generate-json-schema.ts` builds from schemas/result.ts', async () => {
    const committed = readFileSync(JSON_SCHEMA_PATH, 'utf8');
    // On failure: run the generator and commit the file with the schema change.
    expect(committed).toBe(await renderJsonSchema());
  });

  it('publishes result.json at the top and error.json under $defs.CallError', () => {
    const schema = JSON.parse(readFileSync(JSON_SCHEMA_PATH, 'utf8'));
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.$ref).toBe('#/$defs/CallResult');
    expect(schema.$defs.CallResult.required).toEqual(
      expect.arrayContaining(['schemaVersion', 'callId', 'utterances', 'talk', 'processing', 'stepFailures']),
    );
    expect(schema.$defs.CallError.required).toEqual(
      expect.arrayContaining(['callId', 'source', 'stage', 'reason', 'writtenAt']),
    );
    expect(schema.$defs.CallError.properties.stage.enum).toEqual([...STAGES]);
    expect(schema.$id).toBe(`https://callpipe.dev/schemas/result.v${RESULT_SCHEMA_VERSION}.schema.json`);
  });
});

describe('schemas/rules.schema.json', () => {
  it('is what the generator builds from schemas/rules.ts', async () => {
    expect(readFileSync(RULES_JSON_SCHEMA_PATH, 'utf8')).toBe(await renderRulesJsonSchema());
  });

  it('describes every rule kind', () => {
    const schema = JSON.parse(readFileSync(RULES_JSON_SCHEMA_PATH, 'utf8'));
    const kinds = (schema.$defs.Rule.oneOf ?? schema.$defs.Rule.anyOf).map(
      (r: { properties: { kind: { const: string } } }) => r.properties.kind.const,
    );
    expect(kinds).toEqual(
      expect.arrayContaining([
        'phrase',
        'sentiment',
        'silence',
        'overlap',
        'hold',
        'metric',
        'dialogAct',
        'redaction',
      ]),
    );
  });
});

describe('schemas/tables.md', () => {
  it('is what the generator builds from schemas/tables.ts, and documents every column', async () => {
    const committed = readFileSync(TABLES_REFERENCE_PATH, 'utf8');
    expect(committed).toBe(await renderTablesReference());
    for (const table of Object.values(TABLES)) {
      expect(committed).toContain(`## ${table.name}`);
      for (const c of table.columns) expect(committed).toMatch(new RegExp(`\\| \`${c.name}\` +\\|`));
    }
  });
});
