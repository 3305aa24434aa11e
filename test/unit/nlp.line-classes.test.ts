/**
 * Line classification for the rule file's classifier rules: each line of a classifier's speaker is sent
 * once per model (the other speakers' lines, and empty ones, cost nothing), its scores kept per model;
 * result.json's utterances carry them, and a classifier rule reads them.
 */
import { describe, expect, it } from 'vitest';
import { resultUtterances } from '../../activities/storage/call-content.ts';
import { resultLineClassifier } from '../../activities/nlp/line-classes.ts';
import { lineClassesOutputSchema } from '../../schemas/result.ts';
import { timelineSchema } from '../../schemas/transcript.ts';
import { callSpecOf } from '../../schemas/call-spec.ts';
import { loadConfig } from '../../schemas/config-loader.ts';
import { MemoryStore, nlpSetup, utterance } from './nlp.helpers.ts';
import { storeCallFiles } from '../../cli/call-files.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('classifyLines', () => {
  it("sends one request per line of each classifier's speaker and model, and keeps every class's score", async () => {
    const { store, service, activities } = nlpSetup('t.json', [
      utterance(0, 'agent', 0, 3, 'お電話ありがとうございます。'),
      utterance(1, 'customer', 3, 6, '請求書が届かないんです。'),
      utterance(2, 'agent', 6, 9, '請求書は来週お送りします。'),
      utterance(3, 'agent', 9, 10, '  '),
    ]);
    const classifiers = [
      { model: 'reasons-1', speaker: 'agent' },
      { model: 'reasons-2', speaker: 'agent' },
    ];
    const out = await activities.classifyLines({
      callId: 'c',
      timelineKey: 't.json',
      outputKey: 'l.json',
      classifiers,
    });
    expect(out).toMatchObject({ status: 'ok', cost: { requests: 4 } });
    expect(service.count('classify')).toBe(4);
    const doc = lineClassesOutputSchema.parse(JSON.parse(await store.getText('l.json')));
    expect(doc.classifiers).toEqual(classifiers);
    expect(doc.utterances.map((u) => u.index)).toEqual([0, 2]);
    expect(doc.utterances[1]!.lineClasses).toEqual({
      'reasons-1': { billing: 0.8, outage: 0.2 },
      'reasons-2': { billing: 0.8, outage: 0.2 },
    });
    // result.json's utterances carry the scores of the classified lines only.
    const timeline = timelineSchema.parse(JSON.parse(await store.getText('t.json')));
    const utterances = resultUtterances({ timeline, lineClasses: doc });
    expect(utterances.map((u) => u.lineClasses?.['reasons-1']?.billing)).toEqual([
      0.4,
      undefined,
      0.8,
      undefined,
    ]);
  });
});

describe('a line said again word for word', () => {
  const said = [
    utterance(0, 'customer', 0, 3, '請求書が届かないんです。'),
    utterance(1, 'agent', 3, 6, 'はい'),
    utterance(2, 'customer', 6, 9, '請求書が届かないんです。'),
    utterance(3, 'customer', 9, 12, 'はい'),
  ];
  const classifiers = [{ model: 'reasons-1', speaker: 'customer' }];

  it('is classified once per model by the step, and both lines carry the scores', async () => {
    const { store, service, activities } = nlpSetup('t.json', said);
    const out = await activities.classifyLines({
      callId: 'c',
      timelineKey: 't.json',
      outputKey: 'l.json',
      classifiers,
    });
    expect(out).toMatchObject({ status: 'ok', cost: { requests: 2 } });
    expect(service.count('classify')).toBe(2);
    const doc = lineClassesOutputSchema.parse(JSON.parse(await store.getText('l.json')));
    expect(doc.utterances.map((u) => u.index)).toEqual([0, 2, 3]);
    expect(doc.utterances[1]!.lineClasses).toEqual(doc.utterances[0]!.lineClasses);
    expect(doc.utterances[0]!.lineClasses).not.toEqual(doc.utterances[2]!.lineClasses);
  });

  it('is classified once per model by a rescore of the stored result', async () => {
    const { service } = nlpSetup('t.json', said);
    const rescore = resultLineClassifier(service.client, classifiers);
    const { utterances, requests } = await rescore.classify({ utterances: said as never }, true);
    expect(service.count('classify')).toBe(2);
    expect(requests).toBe(2);
    expect(utterances[2]!.lineClasses).toEqual(utterances[0]!.lineClasses);
    expect(utterances[1]!.lineClasses).toBeUndefined();
  });
});

describe("a call's spec", () => {
  const output = { bucket: 'callpipe', prefix: 'results/' };
  it("asks for line classification only when the rule file's classifier rules name models", () => {
    const config = loadConfig({ env: {} });
    expect(callSpecOf(config, output).lineClassifiers).toBeUndefined();
    const lineClassifiers = [{ model: 'ng-1', speaker: 'agent' }];
    expect(callSpecOf(config, output, { lineClassifiers }).lineClassifiers).toEqual(lineClassifiers);
  });

  it('takes the pairs from the rule file the CLI stores, each once; the shipped file has none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callpipe-lines-'));
    try {
      const path = join(dir, 'rules.yaml');
      const rule = (cls: string) => `{ kind: classifier, model: ng-1, class: ${cls}, speaker: agent }`;
      writeFileSync(
        path,
        `format: 1\nname: t\nversion: '1'\ncategories:\n  - { name: ng, match: any, rules: [${rule('ng')}, ${rule('rude')}] }\n`,
      );
      const config = loadConfig({ env: {} });
      const files = await storeCallFiles(new MemoryStore(), config, { rules: path });
      expect(files.lineClassifiers).toEqual([{ model: 'ng-1', speaker: 'agent' }]);
      expect((await storeCallFiles(new MemoryStore(), config, {})).lineClassifiers).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
