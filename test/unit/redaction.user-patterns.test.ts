/**
 * Users' patterns (schemas/user-pattern.ts) run in linear time or are refused when the rules are loaded,
 * with the file, the line and the reason; users' files are bounded before they are parsed; and the
 * redaction step's own terms and patterns have a time bound per call that fails the step (and so the
 * call, storing no text), never the worker. `(a+)+$` over a run of 10,000 `a` is the pattern that held a
 * worker on JavaScript's backtracking engine.
 */
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.ts';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  compileUserPattern,
  USER_PATTERN_LIMITS,
  userPatternProblem,
  userRulesDeadline,
  UserRulesTimeExceeded,
} from '../../schemas/user-pattern.ts';
import { loadRedactionRules, RedactionRulesError } from '../../activities/nlp/redaction/redaction-rules.ts';
import {
  compileRules,
  localSpans,
  localSpansWithin,
  redactUtterances,
} from '../../activities/nlp/redaction/redact-call.ts';
import { createNlpActivities } from '../../activities/nlp/nlp-activities.ts';
import { REDACTION_RULE_LIMITS } from '../../schemas/redaction.ts';
import { readUserFile, UserFileError } from '../../activities/user-file.ts';
import { FakeService, MemoryStore, timeline, utterance } from './nlp.helpers.ts';
import { parseRules, readRulesFile, RulesFileError } from '../../activities/insights/rule-file.ts';
import { RULE_FILE_LIMITS } from '../../schemas/rules.ts';
import { MAX_DICTIONARY_FILE_BYTES, parseDictionary } from '../../service/dictionary.ts';
import { checkRedactionRules, readDictionaryFile } from '../../cli/call-files.ts';
import { CliError } from '../../cli/command.ts';
import { CONFIG_FILE_MAX_BYTES, ConfigError, loadConfig } from '../../schemas/config-loader.ts';

const RUN = 'a'.repeat(10_000);
const dir = tempDir('callpipe-user-patterns-');
const base = { masks: {}, terms: [], patterns: [], audio: false, audioMask: 'tone' as const };

function matches(source: string, text: string) {
  return [...compileUserPattern(source).matches(text)];
}

describe('a user pattern', () => {
  it('runs in linear time: (a+)+$ over a run of 10,000 a', () => {
    expect(matches('(a+)+$', `${RUN}です`)).toEqual([]);
    expect(matches('(a+)+$', `はい${RUN}`)).toEqual([{ index: 2, length: 10_000 }]);
    expect(matches('(a|aa)+b', RUN.repeat(3))).toEqual([]);
  });

  it('matches at UTF-16 positions, as String indices, with JavaScript escapes and Unicode classes', () => {
    const text = '𠮷さん 契約番号 C-123456 と C-654321';
    const found = matches('C-\\d{6}', text);
    expect(found.map((m) => text.slice(m.index, m.index + m.length))).toEqual(['C-123456', 'C-654321']);
    expect(matches('\\u5951\\u7d04', text)).toEqual([{ index: 5, length: 2 }]);
    expect(matches('\\p{Han}+', '田中です')).toEqual([{ index: 0, length: 2 }]);
    // An escaped backslash stays one: `\\u5951` is a backslash and the letters u5951.
    expect(matches('\\\\u5951', 'x\\u5951')).toEqual([{ index: 1, length: 6 }]);
  });

  it('is refused with the reason when the engine cannot run it in linear time, or it is too long or large', () => {
    expect(userPatternProblem('C-\\d{6}')).toBeUndefined();
    expect(userPatternProblem('(a)\\1')).toMatch(/backreference/);
    expect(userPatternProblem('(?<n>a)\\k<n>')).toMatch(/backreference/);
    expect(userPatternProblem('(?=C-)\\w+')).toMatch(/lookahead or lookbehind/);
    expect(userPatternProblem('(?<!C)-\\d+')).toMatch(/lookahead or lookbehind/);
    expect(userPatternProblem('(')).toMatch(
      /not a regular expression callpipe can run \(RE2 syntax\): missing/,
    );
    expect(userPatternProblem('a'.repeat(USER_PATTERN_LIMITS.length + 1))).toMatch(/at most 500/);
    expect(userPatternProblem('[0-9a-z]{1,1000}[^0-9a-z]')).toMatch(
      /too large for one pattern \(RE2 program size \d+, at most 1000\)/,
    );
  });
});

describe('a redaction rules file', () => {
  it('with a pattern the engine cannot run is refused at load: the file, the line and the reason', () => {
    const file = join(dir, 'lookbehind.json');
    const rules = {
      masks: { contract: { style: 'label', label: '[契約]' } },
      patterns: [
        { kind: 'contract', regex: 'C-\\d{6}' },
        { kind: 'member', regex: '(?<=会員)\\d+' },
      ],
    };
    const text = JSON.stringify(rules, null, 2);
    writeFileSync(file, text);
    const line = text.split('\n').findIndex((l) => l.includes('(?<=')) + 1;
    expect(line).toBe(15);
    let message = '';
    try {
      loadRedactionRules({ ...base, rulesFile: file });
    } catch (err) {
      expect(err).toBeInstanceOf(RedactionRulesError);
      message = (err as Error).message;
    }
    // The line of the second pattern's regex in the pretty-printed file.
    expect(message).toBe(
      `redaction rules ${file}: line ${line}: patterns.1.regex: uses lookahead or lookbehind ((?=, (?!, (?<=, (?<!), which callpipe does not run`,
    );
  });

  it('(a+)+$ is accepted and redacts only where it matches, over a run of 10,000 a', () => {
    const file = join(dir, 'hostile.json');
    writeFileSync(file, JSON.stringify({ patterns: [{ kind: 'contract', regex: '(a+)+$' }] }));
    const rules = compileRules(loadRedactionRules({ ...base, rulesFile: file }));
    const call = [
      { index: 0, speaker: 'customer', start: 0, end: 5, text: `${RUN}です` },
      { index: 1, speaker: 'customer', start: 6, end: 8, text: 'コードはaaaa' },
    ];
    // The stream of one speaker ends with the second utterance's run: `$` is the end of that stream.
    expect(localSpans(call, rules).map((s) => [s.utterance, s.begin, s.end, s.kind])).toEqual([
      [1, 4, 8, 'contract'],
    ]);
  });

  it('larger than the bound is refused before it is parsed, and a FIFO is never opened', () => {
    const big = join(dir, 'big.json');
    writeFileSync(big, Buffer.alloc(REDACTION_RULE_LIMITS.fileBytes + 1, 0x20));
    expect(() => loadRedactionRules({ ...base, rulesFile: big })).toThrow(
      /big\.json: the file is 4 MiB, more than the 4 MiB callpipe reads/,
    );
    const fifo = join(dir, 'rules.fifo');
    execFileSync('mkfifo', [fifo]);
    expect(() => readUserFile(fifo, 1024)).toThrow(UserFileError);
    expect(() => readUserFile(fifo, 1024)).toThrow(/not a regular file/);
  });
});

describe('the time bound of the deployment rules per call', () => {
  it('a deadline throws once its time has passed, by the clock it is given', () => {
    let now = 1_000;
    const deadline = userRulesDeadline(20, () => now);
    now += 19_999;
    expect(() => deadline.check()).not.toThrow();
    now += 1;
    expect(() => deadline.check()).toThrow(UserRulesTimeExceeded);
    expect(() => deadline.check()).toThrow(/did not finish within 20 s/);
  });

  it('is checked between patterns: a passed deadline stops the work', async () => {
    const rules = compileRules({
      patterns: [
        { kind: 'one', regex: 'x' },
        { kind: 'two', regex: 'y' },
      ],
    });
    const call = [{ index: 0, speaker: 'a', start: 0, end: 1, text: 'xy' }];
    let checks = 0;
    await expect(
      localSpansWithin(call, rules, () => {
        checks += 1;
        if (checks === 1) throw new UserRulesTimeExceeded('over');
      }),
    ).rejects.toThrow('over');
    expect(checks).toBe(1);
    expect((await localSpansWithin(call, rules, () => undefined)).map((s) => s.kind)).toEqual(['one', 'two']);
  });

  it('is checked while a value found once is looked for everywhere else in the call', () => {
    const rules = compileRules({ patterns: [{ kind: 'pair', regex: '\\S\\S' }] });
    const call = [{ index: 0, speaker: 'a', start: 0, end: 1, text: 'あいうえお' }];
    const spans = localSpans(call, rules);
    let checks = 0;
    expect(redactUtterances(call, spans, rules, () => void (checks += 1))[0]!.text).toBe('[pair]お');
    // One check per distinct value: あい, うえ.
    expect(checks).toBe(2);
    expect(() =>
      redactUtterances(call, spans, rules, () => {
        throw new UserRulesTimeExceeded('over');
      }),
    ).toThrow('over');
  });

  it('fails the redaction step with the reason and writes no redacted timeline (fail-closed)', async () => {
    const store = new MemoryStore();
    store.objects.set(
      's/timeline.json',
      JSON.stringify(timeline([utterance(0, 'customer', 0, 2, 'コードはC-123456です')], 10)),
    );
    const activities = createNlpActivities({
      service: new FakeService().client,
      store,
      options: { requestBaseDelayMs: 1, userRulesSeconds: 0 },
      redactionRules: { patterns: [{ kind: 'contract', regex: 'C-\\d{6}' }] },
    });
    const out = await activities.redactText({
      callId: 'call-1',
      timelineKey: 's/timeline.json',
      outputKey: 's/redaction.json',
      redactedTimelineKey: 's/timeline.redacted.json',
    });
    expect(out.status).toBe('failed');
    expect(out.reason).toMatch(
      /redaction: the deployment's redaction terms and patterns did not finish within 0 s/,
    );
    expect(store.objects.has('s/timeline.redacted.json')).toBe(false);
    expect(store.objects.has('s/redaction.json')).toBe(false);
  });
});

describe('files users hand in are bounded before they are parsed', () => {
  it('a rule file larger than its bound, or with more terms in all than its bound, is refused', () => {
    const big = join(dir, 'big-rules.yaml');
    writeFileSync(big, Buffer.alloc(RULE_FILE_LIMITS.fileBytes + 1, 0x20));
    expect(() => readRulesFile(big)).toThrow(RulesFileError);
    expect(() => readRulesFile(big)).toThrow(
      /big-rules\.yaml: the file is 2 MiB, more than the 2 MiB callpipe reads/,
    );
    const terms = Array.from({ length: RULE_FILE_LIMITS.terms + 1 }, (_, i) => `t${i}`);
    const many = JSON.stringify({
      format: 1,
      name: 'many',
      version: '1',
      categories: [{ name: 'many', rules: [{ kind: 'phrase', terms }] }],
    });
    expect(() => parseRules(many, 'many.json')).toThrow(
      `many.json: line 1: (file): ${terms.length} terms and phrases in all, at most ${RULE_FILE_LIMITS.terms}`,
    );
    const rules = Array.from({ length: 20 }, (_, c) => ({
      name: `c${c}`,
      rules: Array.from({ length: 101 }, () => ({ kind: 'silence' })),
    }));
    expect(() =>
      parseRules(
        JSON.stringify({ format: 1, name: 'r', version: '1', categories: rules }),
        'rules.json',
        'json',
      ),
    ).toThrow(/rules\.json: line 1: categories\.0\.rules: Too big: expected array to have <=100 items/);
    const wide = Array.from({ length: 21 }, (_, c) => ({
      name: `c${c}`,
      rules: Array.from({ length: 100 }, () => ({ kind: 'silence' })),
    }));
    expect(() =>
      parseRules(
        JSON.stringify({ format: 1, name: 'r', version: '1', categories: wide }),
        'wide.json',
        'json',
      ),
    ).toThrow(
      `wide.json: line 1: (file): 2100 rules in all (categories and questions), at most ${RULE_FILE_LIMITS.rules}`,
    );
    const long = `format: 1\nname: long\nversion: '1'\ncategories:\n  - name: long\n    rules:\n      - kind: phrase\n        terms: [${'あ'.repeat(RULE_FILE_LIMITS.termLength + 1)}]\n`;
    expect(() => parseRules(long, 'long.yaml')).toThrow(
      /long\.yaml: line 8: categories\.0\.rules\.0\.terms\.0: Too big/,
    );
  });

  it('a dictionary file larger than its bound is refused before it is read, by the command too', () => {
    const big = join(dir, 'big.dic');
    writeFileSync(big, Buffer.alloc(MAX_DICTIONARY_FILE_BYTES + 1, 0x23));
    expect(() => readDictionaryFile(big)).toThrow(CliError);
    expect(() => readDictionaryFile(big)).toThrow(
      /dictionary: .*big\.dic: the file is 2 MiB, more than the 2 MiB callpipe reads/,
    );
    expect(() => parseDictionary('#'.repeat(MAX_DICTIONARY_FILE_BYTES + 1), { name: 'words.tsv' })).toThrow(
      /words\.tsv: the file is \d+ bytes, more than the \d+ callpipe reads/,
    );
  });

  it('a command that processes calls checks the redaction rules file the workers will load', () => {
    const file = join(dir, 'backreference.json');
    writeFileSync(file, '{\n  "patterns": [\n    { "kind": "twice", "regex": "(\\\\d)\\\\1" }\n  ]\n}\n');
    const config = loadConfig({ env: { CALLPIPE_REDACTION_RULES: file } });
    expect(() => checkRedactionRules(config)).toThrow(CliError);
    expect(() => checkRedactionRules(config)).toThrow(
      `redaction rules ${file}: line 3: patterns.0.regex: uses a backreference (\\1, \\k<name>), which needs a backtracking engine: callpipe does not run it`,
    );
    expect(() => checkRedactionRules(loadConfig({ env: {} }))).not.toThrow();
  });
});

describe('the config file', () => {
  it('is refused before it is read when larger than its bound, or not a regular file', () => {
    const big = join(dir, 'callpipe.config.json');
    writeFileSync(big, Buffer.alloc(CONFIG_FILE_MAX_BYTES + 1, 0x20));
    expect(() => loadConfig({ env: {}, file: big })).toThrow(ConfigError);
    expect(() => loadConfig({ env: {}, file: big })).toThrow(
      `config file ${big}: the file is ${CONFIG_FILE_MAX_BYTES + 1} bytes, more than the ${CONFIG_FILE_MAX_BYTES} callpipe reads`,
    );
    expect(() => loadConfig({ env: {}, file: dir })).toThrow(`config file ${dir}: not a regular file`);
  });
});
