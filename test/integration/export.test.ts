/**
 * `callpipe export` on the real stack: one call, recorded under a name that holds its caller's number, is
 * processed by `callpipe process` and exported by the command to a local folder (with its recording) and
 * to an S3 prefix. Every file the manifest lists is there with the manifest's size and SHA-256; the
 * call's table rows come as JSON; the audit record is in the output bucket and holds neither the number
 * nor the folder. The stored call page and the table rows show the number masked (the source key stays in
 * result.json). `--phone` finds the call by the number in its file name, echoing nothing of it. An unknown
 * call id refuses the request and writes nothing.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHash, randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { exportAuditRecordSchema, exportManifestSchema, type ExportManifest } from '../../schemas/export.ts';
import { callpipe as run } from '../helpers/cli.ts';
import { makeCall } from '../helpers/pipeline.ts';
import { stackConfig } from '../helpers/stack.ts';
import { runId } from '../helpers/run-id.ts';

// A number of this run's own: the bucket is shared, and other tests search it for the phrasebook's numbers.
const NUMBER = `090${randomInt(10_000_000, 100_000_000)}`;
const NAME = `${NUMBER}_20261124-1015.wav`;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let dir: string;
let pc: PipelineClient;
const id = runId();
const output = `export-${id}/results/`;
const env = () => ({ ...inject('stackEnv'), CALLPIPE_S3_TABLES_PREFIX: `export-${id}/tables/` });
const callpipe = (...args: string[]) => run(args, env());
let callId: string;
let recording: Buffer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-export-'));
  pc = await connectPipeline(stackConfig());
  const { path } = await makeCall(dir, NAME, { durationSeconds: 4, stereo: true, seed: 11 });
  recording = readFileSync(path);
  const key = `${pc.config.s3.inputPrefix}export-${id}/${NAME}`;
  await pc.store.putFile(key, path);
  const processed = await callpipe(
    'process',
    `s3://${pc.store.bucket}/${key}`,
    '--out',
    `s3://${pc.store.bucket}/${output}`,
    '--json',
  );
  expect(processed.code, processed.stderr).toBe(0);
  const [call] = JSON.parse(processed.stdout) as { callId: string; status: string }[];
  expect(call!.status).toBe('done');
  callId = call!.callId;
});

afterAll(async () => {
  await pc?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const outArgs = () => ['--out', `s3://${pc.store.bucket}/${output}`];

describe('callpipe export: to a folder', () => {
  it('exports to a folder, with the recording when asked: the files match the manifest, the audit record holds no value', async () => {
    const to = join(dir, 'disclosure');
    const done = await callpipe('export', callId, '--to', to, '--recordings', '--json', ...outArgs());
    expect(done.code, done.stderr).toBe(0);
    const manifest = exportManifestSchema.parse(JSON.parse(done.stdout));
    expect(JSON.parse(readFileSync(join(to, 'manifest.json'), 'utf8'))).toEqual(manifest);
    const files = manifest.calls[0]!.files;
    expect(files.map((f) => f.path)).toEqual(
      expect.arrayContaining([
        `${callId}/result.json`,
        `${callId}/transcript.vtt`,
        `${callId}/call.html`,
        `${callId}/tables/calls.json`,
        `${callId}/tables/utterances.json`,
        `${callId}/recording.wav`,
      ]),
    );
    for (const f of files) {
      const bytes = readFileSync(join(to, ...f.path.split('/')));
      expect({ path: f.path, size: bytes.length, sha256: sha(bytes) }).toEqual({
        path: f.path,
        size: f.size,
        sha256: f.sha256,
      });
    }
    expect(readFileSync(join(to, callId, 'recording.wav'))).toEqual(recording);
    // The call's events are disclosed with it: at least its completed event, about this call.
    const events = files.filter((f) => f.kind === 'events');
    expect(events.map((f) => f.path)).toContainEqual(
      expect.stringMatching(new RegExp(`^${callId}/events/\\d{4}-\\d{2}-\\d{2}/evt_[a-z]+\\.ndjson$`)),
    );
    const lines = events
      .filter((f) => f.path.endsWith('.ndjson'))
      .map(
        (f) =>
          JSON.parse(readFileSync(join(to, ...f.path.split('/')), 'utf8')) as {
            type: string;
            subject: string;
          },
      );
    expect(lines.map((e) => e.subject)).toEqual(lines.map(() => callId));
    expect(lines.map((e) => e.type)).toContain('callpipe.call.completed');
    const rows = JSON.parse(readFileSync(join(to, callId, 'tables', 'calls.json'), 'utf8')) as {
      call_id: string;
      source_key: string;
    }[];
    expect(rows.map((r) => r.call_id)).toEqual([callId]);
    // The number stays in result.json (the call's source), masked in the rows and the page.
    expect(readFileSync(join(to, callId, 'result.json'), 'utf8')).toContain(NUMBER);
    expect(rows[0]!.source_key).not.toContain(NUMBER);
    expect(readFileSync(join(to, callId, 'call.html'), 'utf8')).not.toContain(NUMBER);

    const auditKey = `audit/export/${manifest.requestId}.json`;
    const auditText = await pc.store.getText(auditKey);
    const audit = exportAuditRecordSchema.parse(JSON.parse(auditText));
    expect(audit).toMatchObject({ reason: 'export', calls: [callId], destination: 'local folder' });
    expect(audit.counts.byKind.recording).toEqual({ files: 1, bytes: recording.length });
    expect(audit.manifestSha256).toBe(sha(readFileSync(join(to, 'manifest.json'))));
    expect(auditText).not.toContain(NUMBER);
    expect(auditText).not.toContain(to);
  });
});

describe('callpipe export: to S3', () => {
  it('exports to an S3 prefix whose objects match the manifest; refuses an unknown call and writes nothing', async () => {
    const prefix = `export-${id}/disclosures/one/`;
    const done = await callpipe('export', callId, '--to', `s3://${pc.store.bucket}/${prefix}`, ...outArgs());
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain(`exported 1 call`);
    const manifest: ExportManifest = exportManifestSchema.parse(
      JSON.parse(await pc.store.getText(`${prefix}manifest.json`)),
    );
    expect(manifest.options).toEqual({ recordings: false, unredacted: false });
    const files = manifest.calls[0]!.files;
    expect(files.some((f) => f.kind === 'recording')).toBe(false);
    for (const f of files) {
      const bytes = await pc.store.getBuffer(`${prefix}${f.path}`);
      expect({ path: f.path, sha256: sha(bytes), size: bytes.length }).toEqual({
        path: f.path,
        sha256: f.sha256,
        size: f.size,
      });
    }

    // Found as find finds it: the caller number of the file name, in another notation, never echoed.
    const byPhone = join(dir, 'by-phone');
    const found = await callpipe(
      'export',
      '--phone',
      `+81 ${NUMBER.slice(1, 3)}-${NUMBER.slice(3, 7)}-${NUMBER.slice(7)}`,
      '--to',
      byPhone,
      '--json',
      ...outArgs(),
    );
    expect(found.code, found.stderr).toBe(0);
    expect(exportManifestSchema.parse(JSON.parse(found.stdout)).calls.map((c) => c.callId)).toEqual([callId]);
    expect(found.stderr).not.toContain(NUMBER.slice(3, 7));
    const none = await callpipe(
      'export',
      '--phone',
      '080-0000-1111',
      '--to',
      join(dir, 'none'),
      ...outArgs(),
    );
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no call holds [phone: 11 digits]');
    expect(none.stderr).not.toContain('0000');

    const to = join(dir, 'unknown');
    const refused = await callpipe('export', callId, 'call-unknown-abcdefgh', '--to', to, ...outArgs());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('no call call-unknown-abcdefgh');
    expect(existsSync(to)).toBe(false);
    const emptyPrefix = `export-${id}/disclosures/two/`;
    const refusedS3 = await callpipe(
      'export',
      'call-unknown-abcdefgh',
      '--to',
      `s3://${pc.store.bucket}/${emptyPrefix}`,
      ...outArgs(),
    );
    expect(refusedS3.code).toBe(2);
    expect((await pc.store.listPage(emptyPrefix)).objects).toEqual([]);
  });
});
