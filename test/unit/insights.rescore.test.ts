/**
 * Rescoring stored results (activities/insights/rescore-activities.ts): a page of result.json files scored again
 * with another rule file, each written once; what is current, missing or broken is reported, not written;
 * a retried attempt goes on from its heartbeat, and a call written before that heartbeat is not written
 * twice.
 */
import { describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  createRescoreActivities,
  type RescorePageInput,
} from '../../activities/insights/rescore-activities.ts';
import { canonicalRules, defaultRules, parseRules } from '../../activities/insights/rule-file.ts';
import { buildResult } from '../../activities/storage/result-document.ts';
import { resultDocumentSchema, type ResultDocument } from '../../schemas/result.ts';
import { rescoreRowSchema } from '../../schemas/rescore.ts';
import { FakeService, MemoryStore, SAMPLE_UTTERANCES, timeline } from './nlp.helpers.ts';
import { stereoCallFacts } from './result.helpers.ts';

function result(callId: string): ResultDocument {
  return buildResult({
    callId,
    timeline: { ...timeline(SAMPLE_UTTERANCES), callId },
    stepFailures: [],
    facts: stereoCallFacts({
      source: { bucket: 'in', key: `${callId}.wav` },
      durationSeconds: 100,
      sizeBytes: 1000,
      fingerprint: 'sha256:00',
      workflowId: `w-${callId}`,
      startedAt: '2026-11-22T00:00:00.000Z',
      recognitionRequests: 10,
    }),
  });
}

const NEW_RULES = parseRules(
  'format: 1\nname: billing\nversion: "2"\ncategories:\n  - name: billing\n    rules: [{ kind: phrase, terms: [請求書] }]\n',
  'billing.yaml',
);

function setup(calls = 5) {
  const store = new MemoryStore('callpipe');
  for (let i = 0; i < calls; i++) {
    const id = `call-${i}`;
    void store.put(`res/${id}/result.json`, JSON.stringify(result(id)));
    void store.put(`res/${id}/transcript.vtt`, 'WEBVTT\n');
  }
  void store.put('res/batches/b/report.json', '{}');
  void store.put('input/rules/x/rules.json', canonicalRules(NEW_RULES.rules));
  store.writes.length = 0;
  const input: RescorePageInput = {
    batchId: 'rescore-1',
    source: { kind: 'prefix', bucket: 'callpipe', prefix: 'res/' },
    output: { bucket: 'callpipe', prefix: 'res/' },
    cursor: { page: 0, finished: false },
    pageSize: 1000,
    rulesKey: 'input/rules/x/rules.json',
    rulesDigest: NEW_RULES.digest,
    force: false,
    concurrency: 2,
    partsPrefix: 'res/batches/rescore-1/parts/e/',
  };
  return { store, input, activities: createRescoreActivities({ store }) };
}

const resultWrites = (store: MemoryStore) => store.writes.filter((w) => w.endsWith('/result.json'));

describe('rescorePage: scoring and resuming', () => {
  it('scores every result of the prefix again, once, recording the rules and the batch', async () => {
    const { store, input, activities } = setup();
    const out = await activities.rescorePage(input);
    expect(out.counters).toEqual({ listed: 5, updated: 5, current: 0, missing: 0, failed: 0 });
    expect(out.cursor).toMatchObject({ page: 1, finished: true });
    expect(resultWrites(store)).toHaveLength(5);
    for (let i = 0; i < 5; i++) {
      const doc = resultDocumentSchema.parse(store.json(`res/call-${i}/result.json`));
      expect(doc.rules).toMatchObject({
        name: 'billing',
        version: '2',
        digest: NEW_RULES.digest,
        rescoreBatchId: 'rescore-1',
      });
      expect(doc.categories).toEqual([{ name: 'billing', matched: true, points: expect.any(Array) }]);
      expect(doc.scorecard).toBeNull();
      // The rest of the result is as it was.
      expect(doc.utterances).toEqual(result(`call-${i}`).utterances);
    }
    const rows = rescoreRowSchema.array().parse(store.json('res/batches/rescore-1/parts/e/page-000000.json'));
    expect(rows.map((r) => r.status)).toEqual(Array(5).fill('updated'));
    expect(rows[0]!.categories).toEqual(['billing']);
  });

  it('another batch with the same rules finds every call current and writes nothing; --force writes again', async () => {
    const { store, input, activities } = setup();
    await activities.rescorePage(input);
    store.writes.length = 0;
    const again = await activities.rescorePage({ ...input, batchId: 'rescore-2' });
    expect(again.counters).toMatchObject({ updated: 0, current: 5 });
    expect(resultWrites(store)).toEqual([]);
    const forced = await activities.rescorePage({ ...input, batchId: 'rescore-3', force: true });
    expect(forced.counters).toMatchObject({ updated: 5 });
    expect(resultWrites(store)).toHaveLength(5);
  });

  it('a retried attempt resumes after the rows of its heartbeat, and never writes a call twice', async () => {
    const { store, input, activities } = setup();
    // The first attempt wrote call-0 and call-1, heartbeat only call-0, then died.
    await activities.rescorePage({ ...input, concurrency: 1 });
    const firstRows = rescoreRowSchema
      .array()
      .parse(store.json('res/batches/rescore-1/parts/e/page-000000.json'));
    for (let i = 2; i < 5; i++)
      await store.put(`res/call-${i}/result.json`, JSON.stringify(result(`call-${i}`)));
    store.writes.length = 0;
    const env = new MockActivityEnvironment({
      attempt: 2,
      heartbeatDetails: { page: 0, rows: firstRows.slice(0, 1) },
    } as never);
    const out = (await env.run(activities.rescorePage, input)) as Awaited<
      ReturnType<typeof activities.rescorePage>
    >;
    expect(out.counters).toEqual({ listed: 5, updated: 5, current: 0, missing: 0, failed: 0 });
    // call-0 came from the heartbeat, call-1 was found written by this batch: neither is written again.
    expect(resultWrites(store).sort()).toEqual([2, 3, 4].map((i) => `callpipe/res/call-${i}/result.json`));
  });
});

describe('rescorePage: missing, refused and the report', () => {
  it('reports a manifest call without a result as missing, and a broken result as failed, writing neither', async () => {
    const { store, input, activities } = setup(2);
    await store.put('res/call-1/result.json', JSON.stringify({ schemaVersion: 2, callId: 'call-1' }));
    await store.put(
      'pages/page-000000.json',
      JSON.stringify([
        { line: 1, bucket: 'in', key: 'a.wav', callId: 'call-0', metadata: {} },
        { line: 2, bucket: 'in', key: 'b.wav', callId: 'call-1', metadata: {} },
        { line: 3, bucket: 'in', key: 'c.wav', callId: 'never-processed', metadata: {} },
      ]),
    );
    store.writes.length = 0;
    const out = await activities.rescorePage({
      ...input,
      source: { kind: 'manifest', bucket: 'callpipe', key: 'm.csv' },
      manifest: { pagesPrefix: 'pages/', pages: 1 },
    });
    expect(out.counters).toEqual({ listed: 3, updated: 1, current: 0, missing: 1, failed: 1 });
    expect(resultWrites(store)).toEqual(['callpipe/res/call-0/result.json']);
    const rows = rescoreRowSchema.array().parse(store.json('res/batches/rescore-1/parts/e/page-000000.json'));
    expect(rows.find((r) => r.callId === 'call-1')!.reason).toMatch(
      /^result\.json does not match its schema: /,
    );
  });

  it('refuses rules whose digest is not the batch’s (the shipped default changed under it)', async () => {
    const { input, activities } = setup(1);
    await expect(
      activities.rescorePage({ ...input, rulesKey: undefined, rulesDigest: NEW_RULES.digest }),
    ).rejects.toMatchObject({ name: 'InvalidStepInput' });
    expect(defaultRules().digest).not.toBe(NEW_RULES.digest);
  });

  it('merges the pages into report.json and report.csv', async () => {
    const { store, input, activities } = setup(3);
    await activities.rescorePage(input);
    const report = await activities.writeRescoreReport({
      output: input.output,
      reportPrefix: 'res/batches/rescore-1/',
      partsPrefix: input.partsPrefix,
      header: {
        batchId: 'rescore-1',
        counters: { listed: 3, updated: 3, current: 0, missing: 0, failed: 0 },
      },
    });
    expect(report.rows).toBe(3);
    const csv = await store.getText(report.csvKey);
    expect(csv.split('\n')[0]).toBe('callId,status,categories,score,max,reason,resultKey');
    expect(csv).toContain('call-0,updated,billing,,,,res/call-0/result.json');
  });
});

describe('rescorePage with a reasons model', () => {
  it('classifies calls processed before the model, then finds them current; reason rules read the reason', async () => {
    const { store, input } = setup(3);
    const rules = parseRules(
      'format: 1\nname: reasons\nversion: "1"\ncategories:\n  - name: billing_call\n    rules: [{ kind: reason, classes: [billing] }]\n',
      'reasons.yaml',
    );
    void store.put('input/rules/r/rules.json', canonicalRules(rules.rules));
    const service = new FakeService();
    const activities = createRescoreActivities({ store, service: () => service.client });
    const asked = { ...input, rulesKey: 'input/rules/r/rules.json', rulesDigest: rules.digest };
    const out = await activities.rescorePage({
      ...asked,
      reasons: { model: 'reasons-1', text: 'customer', chars: 600 },
    });
    expect(out.counters).toMatchObject({ updated: 3 });
    const doc = resultDocumentSchema.parse(store.json('res/call-0/result.json'));
    expect(doc.reasons).toMatchObject({
      top: [{ class: 'billing', score: 0.8 }, { class: 'outage' }],
      modelId: 'reasons-1',
      trainedAt: '2026-11-01T09:00:00+09:00',
    });
    expect(doc.categories).toEqual([{ name: 'billing_call', matched: true, points: expect.any(Array) }]);
    expect(service.count('classify')).toBe(3);
    // The result counts the request its reasons took (the pipeline sent none for this call).
    const before = resultDocumentSchema.parse(result('call-0')).processing;
    expect(before.requests.reasons).toBeUndefined();
    expect(doc.processing.requests.reasons).toEqual({ requests: 1, retries: 0 });
    expect(doc.processing.totalRequests).toBe(before.totalRequests + 1);
    // The same rules and model again: current, nothing sent; without the model, the reasons stay.
    const again = await activities.rescorePage({
      ...asked,
      batchId: 'rescore-2',
      reasons: { model: 'reasons-1', text: 'customer', chars: 600 },
    });
    expect(again.counters).toMatchObject({ updated: 0, current: 3 });
    expect(service.count('classify')).toBe(3);
  });

  it('takes a slot of the text workers’ pacer before each request it sends', async () => {
    const { store, input } = setup(3);
    const service = new FakeService();
    // What had been sent when each slot was taken: a slot comes before its request, never after.
    const sentAtSlot: number[] = [];
    const pacer = {
      acquire: async () => {
        sentAtSlot.push(service.count('classify') + service.count('listModels'));
      },
    };
    const activities = createRescoreActivities({ store, service: () => service.client, pacer });
    await activities.rescorePage({
      ...input,
      concurrency: 1,
      reasons: { model: 'reasons-1', text: 'customer', chars: 600 },
    });
    const sent = service.count('classify') + service.count('listModels');
    expect(service.count('classify')).toBe(3);
    expect(sentAtSlot).toHaveLength(sent);
    expect(sentAtSlot.every((n, i) => n <= i)).toBe(true);
  });
});

describe('rescorePage with classifier rules', () => {
  const LINE_RULES = parseRules(
    'format: 1\nname: lines\nversion: "1"\ncategories:\n  - name: billing_line\n    rules: [{ kind: classifier, model: reasons-1, class: billing, speaker: customer, above: 0.5 }]\n',
    'lines.yaml',
  );
  const customerBilling = (doc: ResultDocument) =>
    doc.utterances.map((u) => u.lineClasses?.['reasons-1']?.billing);

  function lineSetup() {
    const { store, input } = setup(3);
    void store.put('input/rules/l/rules.json', canonicalRules(LINE_RULES.rules));
    const service = new FakeService();
    let slots = 0;
    const pacer = {
      acquire: async () => {
        slots++;
      },
    };
    const activities = createRescoreActivities({ store, service: () => service.client, pacer });
    const asked = { ...input, rulesKey: 'input/rules/l/rules.json', rulesDigest: LINE_RULES.digest };
    return { store, service, activities, asked, slots: () => slots };
  }

  it('classifies each customer line of calls processed before the rule, paced, once: the rule reads the scores; then the calls are current', async () => {
    const { store, service, activities, asked, slots } = lineSetup();
    const out = await activities.rescorePage(asked);
    expect(out.counters).toMatchObject({ updated: 3, failed: 0 });
    // Three customer lines a call (請求書の件で…, はい, 困っている…), one request each; the agent's cost nothing.
    expect(service.count('classify')).toBe(9);
    expect(slots()).toBe(9);
    const doc = resultDocumentSchema.parse(store.json('res/call-0/result.json'));
    expect(customerBilling(doc)).toEqual([undefined, 0.8, undefined, 0.4, 0.4, undefined]);
    expect(doc.utterances[1]!.lineClasses).toEqual({ 'reasons-1': { billing: 0.8, outage: 0.2 } });
    expect(doc.categories).toEqual([
      { name: 'billing_line', matched: true, points: [expect.objectContaining({ utterance: 1 })] },
    ]);
    expect(JSON.stringify(doc)).not.toContain('line classes of model');
    // The result counts the three requests its lines took.
    const before = result('call-0').processing;
    expect(doc.processing.requests.lineClasses).toEqual({ requests: 3, retries: 0 });
    expect(doc.processing.totalRequests).toBe(before.totalRequests + 3);
    // The same rules again: every line carries its model's scores, nothing is sent.
    const again = await activities.rescorePage({ ...asked, batchId: 'rescore-2' });
    expect(again.counters).toMatchObject({ updated: 0, current: 3 });
    expect(service.count('classify')).toBe(9);
    // --force classifies every line again.
    const forced = await activities.rescorePage({ ...asked, batchId: 'rescore-3', force: true });
    expect(forced.counters).toMatchObject({ updated: 3 });
    expect(service.count('classify')).toBe(18);
    // What each rescore sent adds to what the call cost before.
    const forcedDoc = resultDocumentSchema.parse(store.json('res/call-0/result.json'));
    expect(forcedDoc.processing.requests.lineClasses).toEqual({ requests: 6, retries: 0 });
  });

  it('a call scored with these rules whose lines were not classified is not current: only its missing lines are sent, other models’ scores kept', async () => {
    const { store, service, activities, asked } = lineSetup();
    // Scored with the rules by workers that had no service client: the rule is unavailable, not a no.
    await createRescoreActivities({ store }).rescorePage(asked);
    const unclassified = resultDocumentSchema.parse(store.json('res/call-0/result.json'));
    expect(unclassified.categories).toEqual([
      { name: 'billing_line', matched: false, points: [], unavailable: ['line classes of model reasons-1'] },
    ]);
    // call-0's first customer line was classified already, with this model and another one.
    const partly = {
      ...unclassified,
      utterances: unclassified.utterances.map((u) =>
        u.index === 1
          ? { ...u, lineClasses: { 'reasons-1': { billing: 0.9, outage: 0.1 }, other: { x: 1 } } }
          : u,
      ),
    };
    await store.put('res/call-0/result.json', JSON.stringify(partly));
    const out = await activities.rescorePage({ ...asked, batchId: 'rescore-2' });
    expect(out.counters).toMatchObject({ updated: 3, current: 0 });
    expect(service.count('classify')).toBe(8);
    const doc = resultDocumentSchema.parse(store.json('res/call-0/result.json'));
    // call-0 sent two of the eight: its lines already classified cost nothing.
    expect(doc.processing.requests.lineClasses).toEqual({ requests: 2, retries: 0 });
    expect(doc.utterances[1]!.lineClasses).toEqual({
      'reasons-1': { billing: 0.9, outage: 0.1 },
      other: { x: 1 },
    });
    expect(customerBilling(doc)).toEqual([undefined, 0.9, undefined, 0.4, 0.4, undefined]);
    expect(doc.categories).toMatchObject([{ name: 'billing_line', matched: true }]);
  });
});
