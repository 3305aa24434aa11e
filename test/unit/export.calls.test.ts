/**
 * exportCalls (activities/lifecycle/export-calls.ts) over an in-memory store that keeps bytes: what a
 * disclosure holds (outputs, the call's table rows out of a part shared with another call, the recording
 * and the unredacted copy only when asked), the manifest's hashes against the files, the audit record
 * without keys or values, and that an unknown call, a used target or a failed upload leaves nothing.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ObjectStore, ObjectInfo } from '../../activities/storage/object-store.ts';
import { exportCalls, ExportRequestError, MANIFEST_FILE } from '../../activities/lifecycle/export-calls.ts';
import type { CallPlaces } from '../../activities/lifecycle/call-objects.ts';
import { callRows } from '../../activities/tables/rows.ts';
import { writeRows } from '../../activities/tables/table-files.ts';
import { writeLocator } from '../../activities/tables/call-locator.ts';
import { partTableFileKey } from '../../schemas/call-keys.ts';
import { eventKey, failureKey } from '../../activities/events/event-store.ts';
import { exportAuditRecordSchema, exportManifestSchema } from '../../schemas/export.ts';
import { resultFixture } from '../helpers/result-fixture.ts';

/** An ObjectStore in memory that keeps bytes (Parquet, audio) and can be told to refuse a put. */
class BytesStore implements ObjectStore {
  readonly bucket: string;
  readonly all: Map<string, Map<string, Buffer>>;
  readonly refuse: { key?: string };
  constructor(bucket: string, all = new Map<string, Map<string, Buffer>>(), refuse: { key?: string } = {}) {
    this.bucket = bucket;
    this.all = all;
    this.refuse = refuse;
    if (!all.has(bucket)) all.set(bucket, new Map());
  }
  get objects(): Map<string, Buffer> {
    return this.all.get(this.bucket)!;
  }
  async put(key: string, body: string | Buffer) {
    if (this.refuse.key && key.endsWith(this.refuse.key)) throw new Error(`refused ${key}`);
    this.objects.set(key, Buffer.from(body));
  }
  async putFile(key: string, path: string) {
    await this.put(key, await readFile(path));
  }
  async getText(key: string) {
    return (await this.getBuffer(key)).toString('utf8');
  }
  async getBuffer(key: string) {
    const b = this.objects.get(key);
    if (!b) throw Object.assign(new Error(`NoSuchKey ${key}`), { name: 'NoSuchKey' });
    return b;
  }
  async getStream(key: string) {
    return Readable.from([await this.getBuffer(key)]);
  }
  async download(): Promise<void> {
    throw new Error('not in the fake');
  }
  async head(key: string): Promise<ObjectInfo | undefined> {
    const b = this.objects.get(key);
    return b ? { key, size: b.length } : undefined;
  }
  async read(key: string) {
    const b = this.objects.get(key);
    return b ? { body: b } : undefined;
  }
  async putIf(): Promise<'conflict'> {
    throw new Error('not in the fake');
  }
  async deleteKeys(keys: readonly string[]) {
    for (const k of keys) this.objects.delete(k);
    return keys.length;
  }
  async exists(key: string) {
    return this.objects.has(key);
  }
  async listPage(prefix: string, _next?: string, pageSize?: number, startAfter?: string) {
    const keys = [...this.objects.keys()]
      .filter((k) => k.startsWith(prefix) && (startAfter === undefined || k > startAfter))
      .sort();
    return {
      objects: keys
        .slice(0, pageSize ?? keys.length)
        .map((key) => ({ key, size: this.objects.get(key)!.length })),
    };
  }
  async deletePrefix(prefix: string) {
    const keys = [...this.objects.keys()].filter((k) => k.startsWith(prefix));
    return this.deleteKeys(keys);
  }
  async ensureBucket() {}
  withBucket(bucket: string): BytesStore {
    return new BytesStore(bucket, this.all, this.refuse);
  }
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const places: CallPlaces = {
  output: { bucket: 'callpipe', prefix: 'results/' },
  stagingPrefix: 'staging/',
  unredacted: { bucket: 'restricted', prefix: 'plain/' },
  tables: { bucket: 'callpipe', prefix: 'tables/', timeZone: 'UTC' },
};

const A = 'xxxxxxxxxxx_xxxxxxxx-xxxx-0a1b2c3d4e5f6a7b';
const B = 'call-b-1234abcd';
const RECORDING_KEY = 'recordings/09012345678_20261124-1015.wav';

/** Two processed calls whose table rows share one compacted part; call A named by a caller number. */
async function seeded(): Promise<BytesStore> {
  const store = new BytesStore('callpipe');
  const docs = [A, B].map((callId) => {
    const doc = resultFixture({ callId, lastModified: '2026-03-01T10:00:00Z' });
    if (callId === A)
      doc.source = { ...doc.source, uri: `s3://callpipe/${RECORDING_KEY}`, key: RECORDING_KEY };
    return doc;
  });
  const parts = { calls: [] as never[], utterances: [] as never[], personal_values: [] as never[] };
  for (const doc of docs) {
    const dir = `results/${doc.callId}/`;
    await store.put(`${dir}result.json`, JSON.stringify(doc));
    await store.put(`${dir}transcript.vtt`, `WEBVTT\n\n${doc.callId}\n`);
    await store.put(`${dir}call.html`, `<html>${doc.callId}</html>`);
    await store.put(`${dir}audio.redacted.flac`, Buffer.from([0x66, 0x4c, 0x61, 0x43, 0, 255, 1]));
    await store.put(`staging/calls/${doc.callId}/run/timeline.json`, '{"secret":"unredacted"}');
    // The call's events on two days, one delivery given up; and a batch's event, no call's.
    const done = eventKey(places.output, '2026-03-01T10:05:00.000Z', 'evt_done', doc.callId);
    await store.put(done, `{"subject":"${doc.callId}"}\n`);
    await store.put(eventKey(places.output, '2026-03-02T09:00:00.000Z', 'evt_redo', doc.callId), '{}\n');
    await store.put(failureKey(done, '2026-03-02T10:00:00.000Z', 'evt_done', 'slack'), '{}\n');
    await store.put(eventKey(places.output, '2026-03-01T10:06:00.000Z', 'evt_batch'), '{}\n');
    const { rows } = callRows(doc, `${dir}result.json`, 'UTC');
    for (const t of ['calls', 'utterances', 'personal_values'] as const)
      parts[t].push(...(rows[t] as never[]));
  }
  const files: Record<string, string> = {};
  for (const t of ['calls', 'utterances'] as const) {
    const key = partTableFileKey(places.tables, t, '2026-03-01', 'cmp', 0);
    await writeRows(store, t, key, parts[t]);
    files[t] = key;
  }
  for (const callId of [A, B])
    await writeLocator(store, places.tables, {
      callId,
      dt: '2026-03-01',
      files,
      processedAt: '2026-03-01T11:00:00Z',
    });
  await store.put(RECORDING_KEY, Buffer.from('RIFF-recording-bytes'));
  await store.withBucket('restricted').put(`plain/${A}/result.json`, '{"plain":true}');
  return store;
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-export-unit-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('exportCalls: to a folder', () => {
  it("exports a call's outputs and its own table rows to a folder, with hashes that match, and audits it", async () => {
    const store = await seeded();
    const to = join(dir, 'request');
    const done = await exportCalls(
      store,
      places,
      [A],
      { kind: 'dir', path: to },
      { requestId: 'export-unit' },
    );
    const manifest = exportManifestSchema.parse(JSON.parse(readFileSync(join(to, MANIFEST_FILE), 'utf8')));
    const files = manifest.calls[0]!.files;
    expect(files.map((f) => f.path)).toEqual(
      [
        `${A}/audio.redacted.flac`,
        `${A}/call.html`,
        `${A}/events/2026-03-01/evt_done.ndjson`,
        `${A}/events/2026-03-02/evt_redo.ndjson`,
        `${A}/events/failed/2026-03-02/evt_done.slack.json`,
        `${A}/result.json`,
        `${A}/tables/calls.json`,
        `${A}/tables/utterances.json`,
        `${A}/transcript.vtt`,
      ].sort((a, b) => a.localeCompare(b)),
    );
    for (const f of files) {
      const bytes = readFileSync(join(to, ...f.path.split('/')));
      expect({ path: f.path, size: bytes.length, sha256: sha(bytes) }).toEqual({
        path: f.path,
        size: f.size,
        sha256: f.sha256,
      });
    }
    expect(readFileSync(join(to, A, 'audio.redacted.flac'))).toEqual(
      store.objects.get(`results/${A}/audio.redacted.flac`),
    );
    // The part holds both calls: only A's rows are disclosed.
    const calls = JSON.parse(readFileSync(join(to, A, 'tables', 'calls.json'), 'utf8')) as {
      call_id: string;
    }[];
    const utterances = JSON.parse(readFileSync(join(to, A, 'tables', 'utterances.json'), 'utf8')) as {
      call_id: string;
    }[];
    expect(calls.map((r) => r.call_id)).toEqual([A]);
    expect(utterances.length).toBe(6);
    expect(new Set(utterances.map((r) => r.call_id))).toEqual(new Set([A]));
    // Neither the recording nor the unredacted copy without asking; staging never.
    expect(existsSync(join(to, A, 'recording.wav'))).toBe(false);
    expect(existsSync(join(to, A, 'unredacted'))).toBe(false);
    expect(manifest.calls[0]!.notExported.map((n) => n.kind).sort()).toEqual([
      'index',
      'staging',
      'unredacted',
    ]);
    expect(files.find((f) => f.path.endsWith('evt_done.ndjson'))!.from).toEqual([
      `s3://callpipe/results/events/2026-03-01/${A}/evt_done.ndjson`,
    ]);
    expect(manifest.totals).toEqual({ calls: 1, files: 9, bytes: files.reduce((n, f) => n + f.size, 0) });

    expect(done.auditKey).toBe('audit/export/export-unit.json');
    const auditText = store.objects.get(done.auditKey)!.toString('utf8');
    const audit = exportAuditRecordSchema.parse(JSON.parse(auditText));
    expect(audit).toMatchObject({
      requestId: 'export-unit',
      reason: 'export',
      calls: [A],
      destination: 'local folder',
    });
    expect(audit.counts.files).toBe(9);
    expect(audit.manifestSha256).toBe(sha(readFileSync(join(to, MANIFEST_FILE))));
    expect(auditText).not.toContain('09012345678');
    expect(auditText).not.toContain(to);
    // No gathering folder left beside the export.
    expect(readdirNames(dir)).toEqual(['request']);
  });
});

describe('exportCalls: what is asked for and refused', () => {
  it('adds the recording and the unredacted copy only when asked for', async () => {
    const store = await seeded();
    const to = join(dir, 'full');
    const { manifest } = await exportCalls(
      store,
      places,
      [A],
      { kind: 'dir', path: to },
      { recordings: true, unredacted: true },
    );
    expect(readFileSync(join(to, A, 'recording.wav'), 'utf8')).toBe('RIFF-recording-bytes');
    expect(readFileSync(join(to, A, 'unredacted', 'result.json'), 'utf8')).toBe('{"plain":true}');
    const kinds = manifest.calls[0]!.files.map((f) => f.kind);
    expect(kinds).toContain('recording');
    expect(kinds).toContain('unredacted');
    expect(manifest.calls[0]!.files.find((f) => f.kind === 'recording')!.from).toEqual([
      `s3://callpipe/${RECORDING_KEY}`,
    ]);
  });

  it('refuses a request with an unknown call id whole: no folder, no audit record', async () => {
    const store = await seeded();
    const to = join(dir, 'nope');
    const before = [...store.objects.keys()];
    await expect(
      exportCalls(store, places, [A, 'call-unknown-aaaaaaaa'], { kind: 'dir', path: to }, {}),
    ).rejects.toThrow(
      new ExportRequestError(
        'no call call-unknown-aaaaaaaa in s3://callpipe/results/ (neither result.json nor error.json); nothing was exported',
      ),
    );
    expect(existsSync(to)).toBe(false);
    expect([...store.objects.keys()]).toEqual(before);
    expect(readdirNames(dir)).toEqual([]);
    await expect(exportCalls(store, places, ['../x'], { kind: 'dir', path: to }, {})).rejects.toThrow(
      ExportRequestError,
    );
  });

  it('refuses a folder or a prefix that already holds files', async () => {
    const store = await seeded();
    const used = join(dir, 'used');
    mkdirSync(used);
    writeFileSync(join(used, 'notes.txt'), 'mine');
    await expect(exportCalls(store, places, [A], { kind: 'dir', path: used }, {})).rejects.toThrow(
      /is not empty/,
    );
    expect(readdirNames(used)).toEqual(['notes.txt']);
    await store.withBucket('disclosures').put('req/old.txt', 'x');
    await expect(
      exportCalls(store, places, [A], { kind: 's3', bucket: 'disclosures', prefix: 'req/' }, {}),
    ).rejects.toThrow(/is not empty/);
  });

  it('refuses a symbolic link to a folder, naming its target, before anything is written', async () => {
    const store = await seeded();
    const real = join(dir, 'real');
    mkdirSync(real);
    const link = join(dir, 'link');
    symlinkSync(real, link);
    const before = [...store.objects.keys()];
    await expect(exportCalls(store, places, [A], { kind: 'dir', path: link }, {})).rejects.toThrow(
      new ExportRequestError(
        `--to ${link} is a symbolic link (to ${real}): give the folder itself (or a new folder's path)`,
      ),
    );
    expect(readdirNames(real)).toEqual([]);
    expect(readdirNames(dir).sort()).toEqual(['link', 'real']);
    // No audit record of an export that did not happen.
    expect([...store.objects.keys()]).toEqual(before);
  });
});

describe('exportCalls: to S3', () => {
  it('to S3: the manifest last; an upload that fails leaves nothing behind', async () => {
    const store = await seeded();
    const { manifest, location } = await exportCalls(
      store,
      places,
      [A, B],
      { kind: 's3', bucket: 'disclosures', prefix: 'req-1' },
      {},
    );
    expect(location).toBe('s3://disclosures/req-1/');
    const out = store.withBucket('disclosures');
    for (const f of manifest.calls.flatMap((c) => c.files))
      expect(sha(out.objects.get(`req-1/${f.path}`)!)).toBe(f.sha256);
    expect(out.objects.has('req-1/manifest.json')).toBe(true);

    const failing = await seeded();
    failing.refuse.key = 'transcript.vtt';
    await expect(
      exportCalls(failing, places, [A], { kind: 's3', bucket: 'disclosures', prefix: 'req-2/' }, {}),
    ).rejects.toThrow(/refused/);
    expect([...failing.withBucket('disclosures').objects.keys()]).toEqual([]);
    expect([...failing.objects.keys()].filter((k) => k.startsWith('audit/'))).toEqual([]);
  });
});

function readdirNames(path: string): string[] {
  return readdirSync(path).sort();
}
