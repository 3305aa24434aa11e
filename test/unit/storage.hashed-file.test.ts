import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { WRITE_BATCH_BYTES, writeHashedFile } from '../../activities/storage/hashed-file.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('writeHashedFile', () => {
  it('writes socket-sized chunks past several write batches whole and in order, with their digest', async () => {
    // 64-KiB chunks as a socket gives them, over two batches and an odd tail.
    const chunks = Array.from({ length: 2 * (WRITE_BATCH_BYTES / 65536) + 3 }, (_, i) =>
      Buffer.alloc(65536, i % 253),
    );
    chunks.push(Buffer.from('tail'));
    const path = join(tempDir('callpipe-hashed-'), 'copy');
    const whole = Buffer.concat(chunks);
    expect(await writeHashedFile(Readable.from(chunks), path)).toEqual({
      sha256: sha256(whole),
      bytes: whole.length,
    });
    expect(readFileSync(path).equals(whole)).toBe(true);
  });

  it('takes thousands of tiny chunks (more than one writev may carry) and empty bodies', async () => {
    const dir = tempDir('callpipe-hashed-');
    const chunks = Array.from({ length: 5000 }, (_, i) => Buffer.from([i % 256, (i >> 8) % 256]));
    const whole = Buffer.concat(chunks);
    expect((await writeHashedFile(Readable.from(chunks), join(dir, 'tiny'))).sha256).toBe(sha256(whole));
    expect(readFileSync(join(dir, 'tiny')).equals(whole)).toBe(true);
    expect(await writeHashedFile(Readable.from([]), join(dir, 'empty'))).toEqual({
      sha256: sha256(Buffer.alloc(0)),
      bytes: 0,
    });
  });

  it('rejects with the body’s own error when the download breaks off', async () => {
    async function* broken() {
      yield Buffer.alloc(1000);
      throw new Error('socket hang up');
    }
    await expect(
      writeHashedFile(Readable.from(broken()), join(tempDir('callpipe-hashed-'), 'x')),
    ).rejects.toThrow('socket hang up');
  });
});
