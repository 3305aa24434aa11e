/**
 * Source downloads on the download thread (activities/storage/threaded-download.ts) against the stack's
 * real S3 server: the bytes and digest of what the store holds, several downloads at once on the one
 * thread, and a missing object failing with what S3 said (so the call fails with `no such object`).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { threadedDownload } from '../../activities/storage/threaded-download.ts';
import { isNotFound, isPermanentS3Error, s3StatusOf } from '../../activities/storage/s3-errors.ts';
import { objectStore, stackConfig } from '../helpers/stack.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('downloads on the download thread', () => {
  it('copies objects byte for byte with their digests, several at once', async () => {
    const config = stackConfig();
    const store = objectStore(config);
    const prefix = `test/threaded-download/${randomUUID()}`;
    // Past the write batch (4 MiB) and odd-sized, so the last batch is partial.
    const bodies = [randomBytes(9 * 1024 * 1024 + 17), randomBytes(1000), randomBytes(5 * 1024 * 1024)];
    await Promise.all(bodies.map((body, i) => store.put(`${prefix}/${i}.wav`, body)));
    const download = threadedDownload(config.s3);
    const dir = tempDir('callpipe-threaded-');
    const digests = await Promise.all(
      bodies.map((_, i) => download({ bucket: store.bucket, key: `${prefix}/${i}.wav` }, join(dir, `${i}`))),
    );
    expect(digests).toEqual(bodies.map(sha256));
    bodies.forEach((body, i) => expect(readFileSync(join(dir, `${i}`)).equals(body)).toBe(true));
    await store.deletePrefix(`${prefix}/`);
  });

  it('fails a missing object with S3’s 404, which the probe reports as no such object', async () => {
    const config = stackConfig();
    const err = await threadedDownload(config.s3)(
      { bucket: config.s3.bucket, key: `test/threaded-download/${randomUUID()}/gone.wav` },
      join(tempDir('callpipe-threaded-'), 'gone'),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(s3StatusOf(err)).toBe(404);
    expect(isNotFound(err)).toBe(true);
    expect(isPermanentS3Error(err)).toBe(true);
  });
});
