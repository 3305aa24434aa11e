/**
 * From a call to `callpipe find`, without the stack: redaction with a digest key, result.json with the
 * manifest's personal columns masked and digested, the `personal_values` rows in Parquet, and the
 * lookup over them with DuckDB: the calls that hold a value, exactly, and no value in any stored byte.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createNlpActivities } from '../../activities/nlp/nlp-activities.ts';
import { insightsThenPublish, stereoCallFacts } from './result.helpers.ts';
import type { ResultFacts } from '../../activities/storage/result-document.ts';
import { encodeTable } from '../../activities/tables/parquet.ts';
import { callRows } from '../../activities/tables/rows.ts';
import { callsFromSource, callsWithDigest, valuesOfCall } from '../../cli/commands/find.ts';
import { openTablesDatabase } from '../../cli/query/duckdb.ts';
import { tableFiles } from '../../cli/query/tables-mirror.ts';
import { callOutputKeys } from '../../schemas/call-keys.ts';
import { maskPersonalMetadata, personalColumnsOf } from '../../schemas/personal-columns.ts';
import { digestKeyFrom, personalDigest } from '../../schemas/personal-digest.ts';
import { resultDocumentSchema, type ResultDocument } from '../../schemas/result.ts';
import { TABLES } from '../../schemas/tables.ts';
import { FakeService, MemoryStore, timeline, utterance } from './nlp.helpers.ts';

const key = digestKeyFrom('unit-test-digest-key-0001', 'test');

describe('personal manifest columns', () => {
  it('common names and declared ones are masked and digested; other columns kept', () => {
    const columns = personalColumnsOf({ Contract_No: 'customer' });
    const { metadata, personalValues } = maskPersonalMetadata(
      {
        Caller_Number: '090-1111-2222',
        contract_no: 'K-77',
        customer_name: '山田太郎',
        agent: 'sato',
        started_at: '2026-11-01T10:00:00Z',
      },
      columns,
      key,
    );
    expect(metadata).toEqual({
      Caller_Number: '[電話番号]',
      contract_no: '[customer]',
      customer_name: '[氏名]',
      agent: 'sato',
      started_at: '2026-11-01T10:00:00Z',
    });
    expect(personalValues).toEqual([
      { column: 'Caller_Number', kind: 'phone', digest: personalDigest(key, 'phone', '09011112222') },
      { column: 'contract_no', kind: 'customer', digest: personalDigest(key, 'customer', 'k-77') },
      { column: 'customer_name', kind: 'name', digest: personalDigest(key, 'name', '山田太郎') },
    ]);
  });

  it('without a key the columns are masked all the same, and no digest is made', () => {
    const out = maskPersonalMetadata({ customer_id: 'C-1' }, personalColumnsOf(), undefined);
    expect(out).toEqual({ metadata: { customer_id: '[customer]' }, personalValues: [] });
  });
});

const facts = (metadata: Record<string, string>, sourceKey = 'calls/a.wav'): ResultFacts =>
  stereoCallFacts({
    source: { bucket: 'in', key: sourceKey, metadata },
    durationSeconds: 30,
    sizeBytes: 960_044,
    fingerprint: 'sha256:ab',
    workflowId: 'w',
    startedAt: '2026-11-23T00:00:00.000Z',
    recognitionRequests: 1,
  });

/** One call through redaction and result.json, as the workers do it with a digest key. */
async function processCall(
  callId: string,
  lines: string[],
  metadata: Record<string, string>,
  sourceKey?: string,
) {
  const store = new MemoryStore();
  const said = lines.map((text, i) => utterance(i, i % 2 ? 'customer' : 'agent', i * 3, i * 3 + 2.5, text));
  store.objects.set('s/timeline.json', JSON.stringify(timeline(said, 30)));
  const nlp = createNlpActivities({
    service: new FakeService().client,
    store,
    options: { requestBaseDelayMs: 1 },
    digestKey: key,
  });
  const redacted = await nlp.redactText({
    callId,
    timelineKey: 's/timeline.json',
    outputKey: 's/redaction.json',
    redactedTimelineKey: 's/timeline.redacted.json',
  });
  expect(redacted.status).toBe('ok');
  const output = callOutputKeys({ bucket: 'results', prefix: 'results/' }, callId, {
    bucket: 'restricted',
    prefix: 'unredacted/',
  });
  await insightsThenPublish(
    { store, digestKey: key },
    {
      callId,
      output,
      timelineKey: 's/timeline.redacted.json',
      recognizedTimelineKey: 's/timeline.json',
      redactionKey: 's/redaction.json',
      stepFailures: [],
      facts: facts(metadata, sourceKey),
    },
  );
  const results = store.withBucket('results');
  const restricted = store.withBucket('restricted');
  return {
    stored: [...results.objects.values()].join('\n'),
    doc: resultDocumentSchema.parse(results.json(`results/${callId}/result.json`)) as ResultDocument,
    copy: resultDocumentSchema.parse(restricted.json(`unredacted/${callId}/result.json`)) as ResultDocument,
  };
}

describe('find over the personal_values table', () => {
  const dir = mkdtempSync(join(tmpdir(), 'find-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers with exactly the calls that hold the value, and where; no value is stored', async () => {
    const calls = [
      await processCall(
        'call-a',
        ['お電話番号をお願いします。', '090-1234-5678です。', 'ありがとうございます。'],
        { customer_id: 'C-100', agent: 'sato' },
      ),
      await processCall('call-b', ['ご用件をどうぞ。', '請求書の件です。'], { customer_id: 'C-200' }),
      await processCall('call-c', ['ご連絡先は。', '〇九〇の一二三四の五六七八です。'], {
        caller_number: '03-9999-0000',
      }),
    ];
    const [a] = calls;
    expect(a!.doc.source.metadata).toEqual({ customer_id: '[customer]', agent: 'sato' });
    expect(a!.copy.source.metadata).toEqual({ customer_id: 'C-100', agent: 'sato' });
    for (const { doc, stored } of calls) {
      for (const value of ['1234', '5678', 'C-100', 'C-200', '9999', '一二三四'])
        expect(stored, `${doc.callId}: ${value}`).not.toContain(value);
      const { start, rows } = callRows(doc, `results/${doc.callId}/result.json`, 'UTC');
      for (const table of Object.values(TABLES)) {
        if (rows[table.name].length === 0) continue;
        const folder = join(dir, table.name, `dt=${start.dt}`);
        mkdirSync(folder, { recursive: true });
        writeFileSync(join(folder, `call-${doc.callId}.parquet`), encodeTable(table, rows[table.name]));
      }
    }
    for (const table of readdirSync(dir))
      for (const f of tableFiles(dir, table))
        for (const value of ['1234', 'C-100', '9999'])
          expect(readFileSync(join(dir, table, f)).includes(value), `${table}/${f}`).toBe(false);

    const db = await openTablesDatabase((t) => tableFiles(dir, t).map((f) => join(dir, t, f)), 'UTC');
    try {
      const phone = await callsWithDigest(db, personalDigest(key, 'phone', '０９０(1234)5678')!);
      expect(phone.map((c) => c.callId)).toEqual(['call-a', 'call-c']);
      expect(phone[0]!.occurrences).toEqual([
        { kind: 'phone', origin: 'speech', column: null, utterance: 1, startSeconds: 3 },
      ]);
      const customer = await callsWithDigest(db, personalDigest(key, 'customer', 'c-200')!);
      expect(customer).toEqual([
        {
          callId: 'call-b',
          occurrences: [
            {
              kind: 'customer',
              origin: 'manifest',
              column: 'customer_id',
              utterance: null,
              startSeconds: null,
            },
          ],
        },
      ]);
      const caller = await callsWithDigest(db, personalDigest(key, 'phone', '0399990000')!);
      expect(caller.map((c) => c.callId)).toEqual(['call-c']);
      expect(await callsWithDigest(db, personalDigest(key, 'phone', '09000000000')!)).toEqual([]);
      const other = digestKeyFrom('another-key-another-deployment', 'test');
      expect(await callsWithDigest(db, personalDigest(other, 'phone', '09012345678')!)).toEqual([]);
      const ofA = await valuesOfCall(db, 'call-a');
      expect(ofA[0]!.occurrences.map((o) => o.kind).sort()).toEqual(['customer', 'phone']);
    } finally {
      db.close();
    }
  });
});

describe("find by a number or an address in a recording's file name", () => {
  const dir = mkdtempSync(join(tmpdir(), 'find-source-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("digests the key's caller number and address (not its date stamps) and finds exactly their calls", async () => {
    const calls = [
      await processCall('call-n', ['ご用件をどうぞ。'], {}, 'rec/08033334444_20261124-1015.wav'),
      await processCall('call-m', ['ご用件をどうぞ。'], {}, 'rec/2026-11-24/Taro.Y@Example.jp_0930.wav'),
      await processCall('call-d', ['ご用件をどうぞ。'], {}, 'rec/20261124_101500.wav'),
    ];
    const [n, m, d] = calls.map((c) => c.doc);
    // The key stays the call's source in result.json; its values are also kept as digests.
    expect(n!.source.personalValues).toEqual([
      { kind: 'phone', digest: personalDigest(key, 'phone', '08033334444'), origin: 'source' },
    ]);
    expect(m!.source.personalValues).toEqual([
      { kind: 'email', digest: personalDigest(key, 'email', 'taro.y@example.jp'), origin: 'source' },
    ]);
    expect(d!.source.personalValues).toBeUndefined();
    for (const doc of [n!, m!, d!]) {
      const { start, rows } = callRows(doc, `results/${doc.callId}/result.json`, 'UTC');
      const table = TABLES.personal_values;
      if (rows.personal_values.length === 0) continue;
      const folder = join(dir, table.name, `dt=${start.dt}`);
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, `call-${doc.callId}.parquet`), encodeTable(table, rows.personal_values));
    }
    const db = await openTablesDatabase((t) => tableFiles(dir, t).map((f) => join(dir, t, f)), 'UTC');
    try {
      expect(await callsWithDigest(db, personalDigest(key, 'phone', '080-3333-4444')!)).toEqual([
        {
          callId: 'call-n',
          occurrences: [
            { kind: 'phone', origin: 'source', column: null, utterance: null, startSeconds: null },
          ],
        },
      ]);
      const mail = await callsWithDigest(db, personalDigest(key, 'email', 'TARO.Y@example.jp')!);
      expect(mail.map((c) => c.callId)).toEqual(['call-m']);
      // A date stamp of a file name is no number: nothing answers for it.
      expect(await callsWithDigest(db, personalDigest(key, 'phone', '20261124101500')!)).toEqual([]);
      expect(await callsWithDigest(db, personalDigest(key, 'phone', '20261124')!)).toEqual([]);
    } finally {
      db.close();
    }
  });
});

describe('find by a recording or a prefix (--source)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'find-by-source-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers exactly the calls of a key or under a prefix, masked keys confirmed by their result', async () => {
    const keys: Record<string, string> = {
      'call-p': 'rec/08033334444/a.wav',
      // Masked alike in the tables: only its result.json tells it apart.
      'call-q': 'rec/08033335555/a.wav',
      'call-r': 'rec/plain/agent1.wav',
      'call-s': 'rec/plain/agent2.wav',
    };
    const sources = new Map<string, string>();
    for (const [callId, sourceKey] of Object.entries(keys)) {
      const { doc } = await processCall(callId, ['ご用件をどうぞ。'], {}, sourceKey);
      const resultKey = `results/${callId}/result.json`;
      sources.set(resultKey, doc.source.uri);
      const { start, rows } = callRows(doc, resultKey, 'UTC');
      const folder = join(dir, TABLES.calls.name, `dt=${start.dt}`);
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, `call-${callId}.parquet`), encodeTable(TABLES.calls, rows.calls));
    }
    for (const f of tableFiles(dir, 'calls'))
      expect(readFileSync(join(dir, 'calls', f)).includes('33334444'), f).toBe(false);
    const reads: string[] = [];
    const reader = async (resultKey: string) => (reads.push(resultKey), sources.get(resultKey));
    const rule = { mode: 'auto' as const, key };
    const db = await openTablesDatabase((t) => tableFiles(dir, t).map((f) => join(dir, t, f)), 'UTC');
    try {
      const ids = async (uri: string) => (await callsFromSource(db, uri, rule, reader)).map((c) => c.callId);
      expect(await ids('s3://in/rec/08033334444/')).toEqual(['call-p']);
      expect(await ids('s3://in/rec/08033335555/a.wav')).toEqual(['call-q']);
      expect(await ids('s3://in/rec/09000000000/')).toEqual([]);
      expect(await ids('s3://in/rec/')).toEqual(['call-p', 'call-q', 'call-r', 'call-s']);
      expect(await ids('s3://in/rec/plain/agent2.wav')).toEqual(['call-s']);
      expect(await ids('s3://other/rec/')).toEqual([]);
      // Keys stored as they are need no result read.
      expect(reads.every((k) => k.includes('call-p') || k.includes('call-q'))).toBe(true);
    } finally {
      db.close();
    }
  });
});
