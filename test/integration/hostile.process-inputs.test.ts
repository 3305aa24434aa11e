/**
 * `callpipe process` uploads only recordings, on the real stack (issue 41, finding 3): a symbolic link
 * named like a recording (`ln -s secret.txt x.wav`) is refused naming its target and nothing is
 * uploaded; so is a text file named `.wav`, and a link in a folder is listed as skipped. A file that
 * looks like a WAV by its first bytes but is none is uploaded, fails at the workers' probe, and the
 * upload is removed again: no failed call leaves its input in the bucket.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { inject } from 'vitest';
import { uploadKey } from '../../schemas/call-keys.ts';
import { callpipe } from '../helpers/cli.ts';
import { objectStore, stackConfig } from '../helpers/stack.ts';
import { runId } from '../helpers/run-id.ts';

describe('callpipe process checks local files before uploading them', () => {
  const run = runId();
  const dir = mkdtempSync(join(tmpdir(), 'callpipe-process-inputs-'));
  const store = objectStore();
  const { inputPrefix } = stackConfig().s3;
  const cli = (args: string[]) => callpipe(args, inject('stackEnv'));
  /** Where the command would have put a local file with this content under this name. */
  const uploadedAs = (name: string, content: Buffer | string) =>
    uploadKey(inputPrefix, 'local', createHash('sha256').update(content).digest('hex'), name);
  const secretText = `root:x:0:0:root:/root:/bin/bash ${run}\n`;
  const secret = join(dir, 'passwd');

  beforeAll(() => writeFileSync(secret, secretText));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a symbolic link to a non-audio file, naming its target, and uploads nothing', async () => {
    const link = join(dir, `x-${run}.wav`);
    symlinkSync(secret, link);
    const out = await cli(['process', link, '--detach']);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(
      `process: ${link}: a symbolic link (to ${secret}): not followed; give the recording itself`,
    );
    expect(out.stderr).toMatch(/1 of 1 input cannot be processed .*; nothing was started/);
    expect(await store.exists(uploadedAs(basename(link), secretText))).toBe(false);
  });

  it('refuses a text file named like a recording, by its content', async () => {
    const notes = join(dir, `notes-${run}.wav`);
    writeFileSync(notes, secretText);
    const out = await cli(['process', notes, '--detach']);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(
      `process: ${notes}: not a recording: text (extension 'wav', checked by content)`,
    );
    expect(await store.exists(uploadedAs(basename(notes), secretText))).toBe(false);
  });

  it('lists a link inside a folder as skipped, with its target', async () => {
    const folder = join(dir, `folder-${run}`);
    mkdirSync(folder);
    symlinkSync(secret, join(folder, 'call.wav'));
    const out = await cli(['process', folder, '--detach']);
    expect(out.stderr).toContain(
      `skipped ${join(folder, 'call.wav')}: a symbolic link (to ${secret}): not followed`,
    );
    expect(out.stderr).toContain('process: no recording to process');
    expect(out.code).toBe(1);
  });

  it('removes the upload of a call that failed at the probe', async () => {
    // A WAV header by its first bytes, then no audio the probe can read.
    const fake = Buffer.concat([
      Buffer.from('RIFF'),
      Buffer.from([0x24, 0, 0, 0]),
      Buffer.from('WAVEfmt '),
      Buffer.from(`not audio at all ${run} `.repeat(40)),
    ]);
    const path = join(dir, `fake-${run}.wav`);
    writeFileSync(path, fake);
    const key = uploadedAs(basename(path), readFileSync(path));
    const out = await cli(['process', path, '--json']);
    expect(out.code, out.stderr).toBe(1);
    const [outcome] = JSON.parse(out.stdout.slice(out.stdout.indexOf('['))) as {
      status: string;
      stage?: string;
      source: string;
    }[];
    expect(outcome).toMatchObject({ status: 'failed', stage: 'probe' });
    expect(outcome!.source).toBe(`s3://${store.bucket}/${key}`);
    expect(await store.exists(key)).toBe(false);
  });
});
