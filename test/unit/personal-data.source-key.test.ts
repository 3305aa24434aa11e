/**
 * A recording's key can hold its caller's number (`09012345678_20261124-1015.wav`): it stays in
 * result.json (the call's source) but not in what everyone reads. The tables' `source_uri`/`source_key`
 * (tables/rows.ts), the call page (its note and its audio link: pages/call-page.ts, storage/results.ts)
 * and batch ids derived from a prefix or a manifest's name (cli/commands/backfill.ts) show it masked as
 * call ids and reports do; `CALLPIPE_CALL_ID=slug` keeps them as they are.
 */
import { describe, expect, it } from 'vitest';
import { callRows } from '../../activities/tables/rows.ts';
import { renderCallPage } from '../../activities/pages/call-page.ts';
import { writeCallPage } from '../../activities/storage/result-activities.ts';
import { batchIdOf } from '../../cli/commands/backfill.ts';
import type { ResultDocument } from '../../schemas/result.ts';
import { resultFixture } from '../helpers/result-fixture.ts';
import { MemoryStore } from './nlp.helpers.ts';

const NUMBER = '09012345678';
const KEY = `recordings/${NUMBER}_20261124-1015.wav`;

function namedByNumber(): ResultDocument {
  const doc = resultFixture({ callId: 'xxxxxxxxxxx_xxxxxxxx-xxxx-0a1b2c3d4e5f6a7b' });
  doc.source = { ...doc.source, bucket: 'callpipe', key: KEY, uri: `s3://callpipe/${KEY}` };
  return doc;
}

describe("a recording's key with a caller number", () => {
  it("is masked in the calls table's source_uri and source_key, and kept in result.json", () => {
    const doc = namedByNumber();
    const [row] = callRows(doc, 'results/x/result.json', 'UTC').rows.calls;
    expect(row!.source_key).toBe('recordings/xxxxxxxxxxx_xxxxxxxx-xxxx.wav');
    expect(row!.source_uri).toBe('s3://callpipe/recordings/xxxxxxxxxxx_xxxxxxxx-xxxx.wav');
    expect(JSON.stringify(row)).not.toContain(NUMBER);
    expect(doc.source.key).toBe(KEY);
    // A key without personal data is shown as it is; slug keeps every key as it is.
    const plain = resultFixture();
    expect(callRows(plain, 'k', 'UTC').rows.calls[0]!.source_key).toBe(plain.source.key);
    expect(callRows(doc, 'k', 'UTC', 'slug').rows.calls[0]!.source_key).toBe(KEY);
  });

  it('is masked on the call page, which links no recording whose key holds it', async () => {
    const doc = namedByNumber();
    const html = renderCallPage(doc, { timeZone: 'UTC' });
    expect(html).not.toContain(NUMBER);
    expect(html).toContain('recordings/xxxxxxxxxxx_xxxxxxxx-xxxx.wav');

    const store = new MemoryStore('callpipe');
    const keys = {
      bucket: 'callpipe',
      dir: `results/${doc.callId}/`,
      page: `results/${doc.callId}/call.html`,
    };
    await writeCallPage(store, keys, doc, 'UTC');
    const page = store.objects.get(keys.page)!;
    expect(page).not.toContain(NUMBER);
    expect(page).toContain('data-src=""');
    // A key without personal data is still linked, so the page plays the recording.
    const plain = resultFixture({ callId: 'call-a-1234abcd' });
    await writeCallPage(store, { ...keys, page: 'p.html' }, plain, 'UTC');
    expect(store.objects.get('p.html')).toContain(`data-src="../../${plain.source.key}"`);
  });

  it('is masked in a batch id derived from a prefix or a manifest name', () => {
    const output = { bucket: 'callpipe', prefix: 'results/' };
    const prefixId = batchIdOf({ kind: 'prefix', bucket: 'b', prefix: `${NUMBER}/` }, output, 'i');
    expect(prefixId).toMatch(/^prefix-xxxxxxxxxxx-[0-9a-f]{10}$/);
    const manifestId = batchIdOf(
      { kind: 'manifest', bucket: 'b', key: `m/calls-${NUMBER}.csv` },
      output,
      'i',
    );
    expect(manifestId).not.toContain(NUMBER);
    expect(manifestId).toMatch(/^manifest-calls-xxxxxxxxxxx-/);
    // Another prefix with the same shape is another batch: the hash tells them apart.
    expect(batchIdOf({ kind: 'prefix', bucket: 'b', prefix: '09087654321/' }, output, 'j')).not.toBe(
      prefixId,
    );
    expect(batchIdOf({ kind: 'prefix', bucket: 'b', prefix: 'calls/2026/' }, output, 'i')).toMatch(
      /^prefix-calls-2026-/,
    );
    expect(batchIdOf({ kind: 'prefix', bucket: 'b', prefix: `${NUMBER}/` }, output, 'i', 'slug')).toContain(
      NUMBER,
    );
  });
});
