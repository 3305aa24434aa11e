/**
 * Custom vocabulary on the shared test stack: a dictionary file with a bad entry is refused before any
 * session starts, with its line and spec 02's reason; a good one reaches every start request of the call
 * (the emulator's request log) and changes what is recognized; `callpipe dictionary` manages the model's
 * user dictionary. The service is an emulator of this file's own, whose request log only this file adds to.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderFixture } from '../../activities/media/fixture.ts';
import { connectPipeline, type PipelineClient } from '../../cli/stack-client.ts';
import { callpipe as run } from '../helpers/cli.ts';
import { ownService, type OwnService } from '../helpers/own-service.ts';
import type { RequestLogEntry } from '../helpers/request-log.ts';
import { resultDocumentSchema } from '../../schemas/result.ts';
import type { FixtureScript } from '../../schemas/synthetic-recording.ts';

const starts = (entries: RequestLogEntry[]) => entries.filter((e) => e.messages?.includes('started'));

const GOOD = '# products\nギガ光プラス\tギガヒカリプラス\t70\nスマホ安心パック\tスマホアンシンパック\n';
const BAD =
  'ギガ光プラス\tギガヒカリプラス\n# a reading must be katakana\nスマホ安心パック\tすまほあんしんぱっく\n';

let dir: string;
let pc: PipelineClient;
let service: OwnService;
let recording: string;
const callpipe = (...args: string[]) => service.callpipe(...args);
const log = () => service.requests();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'callpipe-dictionary-'));
  service = await ownService('dictionary', dir);
  pc = await connectPipeline(service.config);
  writeFileSync(join(dir, 'words.tsv'), GOOD);
  writeFileSync(join(dir, 'bad.tsv'), BAD);
  // A stereo call in which both speakers name products known only from the dictionary.
  const script: FixtureScript = {
    durationSeconds: 20,
    background: 'silence',
    channels: [
      {
        phrases: [
          { id: 1, start: 0.5 },
          { id: 301, start: 4 },
          { id: 303, start: 12 },
        ],
      },
      {
        phrases: [
          { id: 302, start: 7 },
          { id: 304, start: 15 },
        ],
      },
    ],
  };
  recording = join(dir, 'products.wav');
  await renderFixture(script, recording, { sampleRate: 8000 });
}, 120_000);

afterAll(async () => {
  await pc?.close();
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('custom vocabulary: refusals', () => {
  it('a dictionary with a bad entry is refused before any session starts, with the line and the reason', async () => {
    const before = log().length;
    const out = await callpipe('process', recording, '--dictionary', join(dir, 'bad.tsv'), '--json');
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('bad.tsv: line 3: Reading illegal (reading: must be full-width katakana)');
    expect(starts(log().slice(before))).toEqual([]);
  });

  it('a batch (backfill, nightly schedule, CALLPIPE_DICTIONARY) with a bad entry is refused before it starts', async () => {
    const before = log().length;
    const t0 = new Date();
    const reason = 'bad.tsv: line 3: Reading illegal (reading: must be full-width katakana)';
    const source = `s3://${pc.config.s3.bucket}/dictionary-batch/`;
    const backfill = await callpipe('backfill', source, '--dictionary', join(dir, 'bad.tsv'), '--json');
    expect(backfill.code).toBe(2);
    expect(backfill.stderr).toContain(reason);
    const fromEnv = await run(['backfill', source, '--json'], {
      ...service.env,
      CALLPIPE_DICTIONARY: join(dir, 'bad.tsv'),
    });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain(reason);
    const id = 'dictionary-refused';
    const schedule = await callpipe(
      'schedule',
      'nightly',
      '--id',
      id,
      '--cron',
      '0 2 * * *',
      '--source',
      `${source}{date}/`,
      '--dictionary',
      join(dir, 'bad.tsv'),
    );
    expect(schedule.code).toBe(2);
    expect(schedule.stderr).toContain(reason);
    await expect(pc.client.schedule.getHandle(id).describe()).rejects.toThrow();
    const started: string[] = [];
    for await (const w of pc.client.workflow.list({
      query: `WorkflowType = 'backfill' AND StartTime > "${t0.toISOString()}"`,
    }))
      started.push(w.workflowId);
    expect(started).toEqual([]);
    expect(starts(log().slice(before))).toEqual([]);
  });
});

describe('custom vocabulary: recognition and the command', () => {
  it('a good one reaches every start request and is recognized with its surfaces', async () => {
    const before = log().length;
    const out = await callpipe(
      'process',
      recording,
      '--dictionary',
      join(dir, 'words.tsv'),
      '--redo',
      '--json',
    );
    expect(out.code, out.stderr).toBe(0);
    const [outcome] = JSON.parse(out.stdout) as { status: string; resultKey: string; sessions: number }[];
    expect(outcome!.status).toBe('done');
    const started = starts(log().slice(before));
    expect(started.length).toBeGreaterThanOrEqual(outcome!.sessions);
    for (const s of started) expect(s.words, JSON.stringify(s)).toBe(2);
    const doc = resultDocumentSchema.parse(JSON.parse(await pc.store.getText(outcome!.resultKey)));
    const texts = doc.utterances.map((u) => `${u.speaker}: ${u.text}`);
    expect(texts).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^agent: ギガ光プラスへのお切り替え/),
        expect.stringMatching(/^customer: ギガ光プラスにしたいんですけど/),
        expect.stringMatching(/^agent: スマホ安心パックにはご加入/),
        expect.stringMatching(/^customer: スマホ安心パックって/),
      ]),
    );

    // Without it, the same call is recognized as heard.
    const plain = await callpipe('process', recording, '--redo', '--json');
    const [again] = JSON.parse(plain.stdout) as { resultKey: string }[];
    const heard = resultDocumentSchema.parse(JSON.parse(await pc.store.getText(again!.resultKey)));
    expect(heard.utterances.map((u) => u.text).join('\n')).toContain('ギガヒカリプラス');
    expect(heard.utterances.map((u) => u.text).join('\n')).not.toContain('ギガ光プラス');
  });

  it('callpipe dictionary uploads, reports, downloads and clears the user dictionary, explaining the reflection', async () => {
    const upload = await callpipe('dictionary', 'upload', join(dir, 'words.tsv'));
    expect(upload.code, upload.stderr).toBe(0);
    expect(upload.stdout).toMatch(/uploaded 2 entries to ja-gen_tf-08 .*on the hour \(minute 0\)/);
    const status = await callpipe('dictionary', 'status', '--json');
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ model: 'ja-gen_tf-08', isSet: expect.any(Boolean) });
    const file = join(dir, 'downloaded.tsv');
    const download = await callpipe('dictionary', 'download', '--out', file);
    expect(download.code, download.stderr).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(
      'ギガ光プラス\tギガヒカリプラス\t70\nスマホ安心パック\tスマホアンシンパック\t30\n',
    );
    const bad = await callpipe('dictionary', 'upload', join(dir, 'bad.tsv'));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('line 3: Reading illegal');
    expect((await callpipe('dictionary', 'clear')).code).toBe(0);
  });
});
