/**
 * A manifest batch's stored pages (`<parts>/manifest/page-*.json`) stay with the batch's objects, so they
 * hold no manifest cell: each page keeps the span of its rows in the manifest, and the listing reads the
 * cells back from the manifest itself (ranged reads), so the calls' inputs still get them.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { prepareManifest } from '../../activities/backfill/prepare-manifest.ts';
import { listBackfillPage } from '../../activities/backfill/list-page.ts';
import { manifestEntrySchema } from '../../schemas/manifest.ts';
import { MemoryStore } from './nlp.helpers.ts';

/** The memory store with ranged reads, as S3 gives them. */
class RangedStore extends MemoryStore {
  override async getStream(key?: string, options: { start?: number; end?: number } = {}): Promise<Readable> {
    const body = Buffer.from(await this.getText(key!));
    return Readable.from([body.subarray(options.start ?? 0, (options.end ?? body.length - 1) + 1)]);
  }
}

const VALUES = ['090-1111-2222', '山田 太郎', 'C-00123', 'a,b\r\nc', 'C-00999'];
// A BOM, CRLF line ends, a quoted cell with a comma and a line break, an empty line, a row without cells.
const CSV =
  '\ufeffkey,caller_number,customer_name,customer_id,note\r\n' +
  'rec/a.wav,090-1111-2222,山田 太郎,C-00123,"a,b\r\nc"\r\n' +
  '\r\n' +
  'rec/b.wav,,,,\r\n' +
  'rec/c.wav,,,C-00999,plain\r\n';

function stack() {
  const buckets = new Map<string, MemoryStore>();
  const out = new RangedStore('out', buckets);
  const input = new RangedStore('in', buckets);
  for (const k of ['rec/a.wav', 'rec/b.wav', 'rec/c.wav']) input.objects.set(k, 'audio');
  input.objects.set('m.csv', CSV);
  return { out, input };
}

const source = { kind: 'manifest' as const, bucket: 'in', key: 'm.csv' };

async function prepared(out: MemoryStore) {
  const read = await prepareManifest(out, {
    source,
    pagesPrefix: 'parts/manifest/',
    outputBucket: 'out',
    pageSize: 2,
  });
  expect(read).toEqual({ rows: 3, pages: 2 });
}

const listed = (out: MemoryStore, page: number) =>
  listBackfillPage(out, {
    source,
    output: { bucket: 'out', prefix: 'results/' },
    filters: {},
    cursor: { page, finished: false },
    pageSize: 2,
    redo: false,
    partsPrefix: 'parts/',
    manifest: { pagesPrefix: 'parts/manifest/', pages: 2 },
  });

describe("a manifest batch's stored pages", () => {
  it('hold no cell of the manifest, only where their rows are', async () => {
    const { out } = stack();
    await prepared(out);
    const pages = [...out.objects].filter(([k]) => k.startsWith('parts/manifest/'));
    expect(pages.map(([k]) => k)).toEqual([
      'parts/manifest/page-000000.json',
      'parts/manifest/page-000001.json',
    ]);
    for (const [key, body] of pages) {
      for (const value of [...VALUES, '09011112222', '山田', 'plain'])
        expect(body, `${key}: ${value}`).not.toContain(value);
      for (const e of manifestEntrySchema.array().parse(JSON.parse(body))) {
        expect(e.metadata).toEqual({});
        expect(e.span).toBeDefined();
      }
    }
  });

  it('give the calls their cells back, read from the manifest', async () => {
    const { out } = stack();
    await prepared(out);
    const items = [...(await listed(out, 0)).items, ...(await listed(out, 1)).items];
    expect(items.map((i) => [i.source.key, i.metadata])).toEqual([
      [
        'rec/a.wav',
        {
          caller_number: '090-1111-2222',
          customer_name: '山田 太郎',
          customer_id: 'C-00123',
          note: 'a,b\r\nc',
        },
      ],
      ['rec/b.wav', undefined],
      ['rec/c.wav', { customer_id: 'C-00999', note: 'plain' }],
    ]);
  });

  it('refuse a manifest changed since the batch read it, by its lines and without its cells', async () => {
    const { out, input } = stack();
    await prepared(out);
    input.objects.set('m.csv', CSV.replace('rec/c.wav', 'rec/d.wav'));
    const refused = await listed(out, 1).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(refused?.message).toMatch(
      /^the manifest changed since the batch began \(lines \d+–\d+ are not the rows it read\)/,
    );
    for (const value of VALUES) expect(refused?.message).not.toContain(value);
  });

  it('fail the batch for good when the manifest is gone', async () => {
    const { out, input } = stack();
    await prepared(out);
    input.objects.delete('m.csv');
    const original = input.getText.bind(input);
    input.getText = async (key: string) =>
      key === 'm.csv'
        ? Promise.reject(Object.assign(new Error('NoSuchKey'), { $metadata: { httpStatusCode: 404 } }))
        : original(key);
    await expect(listed(out, 0)).rejects.toThrow(
      /the manifest cannot be read since the batch began \(HTTP 404\)/,
    );
  });

  it('a manifest without cells: its pages as before', async () => {
    const { out, input } = stack();
    input.objects.set('m.csv', 'key\nrec/a.wav\nrec/b.wav\n');
    await prepareManifest(out, { source, pagesPrefix: 'parts/manifest/', outputBucket: 'out', pageSize: 10 });
    const [entry] = manifestEntrySchema
      .array()
      .parse(JSON.parse(out.objects.get('parts/manifest/page-000000.json')!));
    expect(entry).toEqual({ line: 2, bucket: 'in', key: 'rec/a.wav', metadata: {} });
  });
});
