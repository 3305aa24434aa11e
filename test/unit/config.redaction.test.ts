/**
 * Redaction's configuration: where unredacted copies may go (never the output prefix or inside it),
 * what a workflow is told (locations and flags, never rules), and the rules file (errors name the file
 * and field, never a value).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.ts';
import { ConfigError, loadConfig } from '../../schemas/config-loader.ts';
import { redactionInputOf } from '../../schemas/call-spec.ts';
import { callOutputKeys, KeyError, unredactedLocationOf } from '../../schemas/call-keys.ts';
import { loadRedactionRules, RedactionRulesError } from '../../activities/nlp/redaction/redaction-rules.ts';

const output = { bucket: 'callpipe', prefix: 'results/' };

describe('unredacted copies', () => {
  it('go to a prefix of their own, in the output bucket or another', () => {
    expect(unredactedLocationOf('unredacted', output)).toEqual({ bucket: 'callpipe', prefix: 'unredacted/' });
    expect(unredactedLocationOf('s3://restricted/pii/', output)).toEqual({
      bucket: 'restricted',
      prefix: 'pii/',
    });
    // The same prefix in another bucket is another place.
    expect(unredactedLocationOf('s3://restricted/results', output)).toEqual({
      bucket: 'restricted',
      prefix: 'results/',
    });
    const keys = callOutputKeys(output, 'call-1', { bucket: 'restricted', prefix: 'pii/' });
    expect(keys.unredacted).toEqual({
      bucket: 'restricted',
      dir: 'pii/call-1/',
      result: 'pii/call-1/result.json',
      transcript: 'pii/call-1/transcript.vtt',
    });
    expect(callOutputKeys(output, 'call-1').unredacted).toBeUndefined();
  });

  it('never where the redacted results are, inside them, or holding them', () => {
    for (const spelling of ['results', 'results/unredacted', 's3://callpipe/results/x/', '']) {
      expect(() => unredactedLocationOf(spelling, output), spelling).toThrow(KeyError);
    }
  });
});

describe('redactionInputOf', () => {
  it('tells the workflow where copies go and whether to redact audio, and nothing else', () => {
    const config = loadConfig({
      env: { CALLPIPE_UNREDACTED_PREFIX: 's3://restricted/pii' },
      file: undefined,
    });
    expect(redactionInputOf(config, output)).toEqual({
      unredacted: { bucket: 'restricted', prefix: 'pii/' },
    });
    expect(redactionInputOf(loadConfig({ env: {}, file: undefined }), output)).toEqual({});
  });

  it('the redacted audio: CALLPIPE_REDACT_AUDIO, a tone unless CALLPIPE_REDACT_AUDIO_MASK says silence', () => {
    const of = (env: Record<string, string>) =>
      redactionInputOf(loadConfig({ env, file: undefined }), output);
    expect(of({ CALLPIPE_REDACT_AUDIO: 'true' })).toEqual({ audio: { mask: 'tone' } });
    expect(of({ CALLPIPE_REDACT_AUDIO: 'true', CALLPIPE_REDACT_AUDIO_MASK: 'silence' })).toEqual({
      audio: { mask: 'silence' },
    });
    expect(of({ CALLPIPE_REDACT_AUDIO: 'false', CALLPIPE_REDACT_AUDIO_MASK: 'silence' })).toEqual({});
    expect(() => of({ CALLPIPE_REDACT_AUDIO_MASK: 'beep' })).toThrow(/CALLPIPE_REDACT_AUDIO_MASK/);
  });
});

describe('redaction rules', () => {
  const dir = tempDir('callpipe-redaction-');
  const base = { masks: {}, terms: [], patterns: [], audio: false, audioMask: 'tone' as const };

  it('come from the configuration, or from a file of their own', () => {
    expect(loadRedactionRules({ ...base, terms: [{ kind: 'vip', text: '山田' }] }).terms).toHaveLength(1);
    const file = join(dir, 'rules.json');
    writeFileSync(
      file,
      JSON.stringify({
        masks: { phone: { style: 'keepLast', digits: 4 }, contract: { style: 'label', label: '[契約番号]' } },
        patterns: [{ kind: 'contract', regex: 'C-\\\\d{6}' }],
      }),
    );
    const rules = loadRedactionRules({ ...base, rulesFile: file });
    expect(rules.masks.phone).toEqual({ style: 'keepLast', digits: 4 });
    expect(rules.patterns[0]!.kind).toBe('contract');
  });

  it('a bad file names the file and the field, never a value', () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ terms: [{ kind: 'Name', text: '鈴木花子' }] }));
    expect(() => loadRedactionRules({ ...base, rulesFile: file })).toThrow(RedactionRulesError);
    expect(() => loadRedactionRules({ ...base, rulesFile: file })).toThrow(
      /bad\.json: line 1: terms\.0\.kind/,
    );
    try {
      loadRedactionRules({ ...base, rulesFile: file });
    } catch (err) {
      expect(String(err)).not.toContain('鈴木花子');
    }
    const unknown = join(dir, 'unknown.json');
    writeFileSync(unknown, JSON.stringify({ masks: { phon: { style: 'off' } } }));
    expect(() => loadRedactionRules({ ...base, rulesFile: unknown })).toThrow(/masks\.phon: no such kind/);
    writeFileSync(unknown, JSON.stringify({ masks: { name: { style: 'keepLast', digits: 2 } } }));
    expect(() => loadRedactionRules({ ...base, rulesFile: unknown })).toThrow(
      /keepLast applies to digit kinds/,
    );
    writeFileSync(unknown, JSON.stringify({ patterns: [{ kind: 'x', regex: '(' }] }));
    expect(() => loadRedactionRules({ ...base, rulesFile: unknown })).toThrow(
      /not a regular expression callpipe can run/,
    );
    expect(() => loadRedactionRules({ ...base, rulesFile: join(dir, 'missing.json') })).toThrow(
      /missing\.json: ENOENT/,
    );
  });

  it('the configuration refuses a bad mask, naming where it is', () => {
    const bad = { redaction: { masks: { phone: { style: 'keepLast', digits: 9 } } } };
    expect(() => loadConfig({ env: {}, file: undefined, overrides: bad })).toThrow(ConfigError);
    expect(() => loadConfig({ env: {}, file: undefined, overrides: bad })).toThrow(/redaction\.masks\.phone/);
  });
});
