/**
 * Writing a downloaded object to a local file while hashing its bytes as they pass: the copy is never
 * read again for its digest. The bytes are written in batches of {@link WRITE_BATCH_BYTES} (one
 * `writev` of the chunks as they arrived, no copy), not one write per socket read: a 64-KiB write per
 * chunk took about twice the CPU, measured in isolation (bench/README.md, issue 38).
 */
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';

export const WRITE_BATCH_BYTES = 4 * 1024 * 1024;
/** Below Linux's IOV_MAX (1,024 buffers in one writev), whatever size the chunks come in. */
const WRITE_BATCH_CHUNKS = 512;

/** What was written: the SHA-256 of the bytes (hex) and how many there were. */
export interface HashedFile {
  sha256: string;
  bytes: number;
}

/** Downloads `key` of `bucket` to `path`, resolving to the SHA-256 of its bytes. */
export type HashedDownload = (object: { bucket: string; key: string }, path: string) => Promise<string>;

/** Writes `body` to `path` (created or truncated), hashing it; rejects, with the file left, on a failure. */
export async function writeHashedFile(body: Readable, path: string): Promise<HashedFile> {
  const hash = createHash('sha256');
  const file = await open(path, 'w');
  let batch: Buffer[] = [];
  let batchBytes = 0;
  let bytes = 0;
  const flush = async () => {
    if (batchBytes === 0) return;
    const chunks = batch;
    batch = [];
    batchBytes = 0;
    await file.writev(chunks);
  };
  // Leaving the loop by a throw (a failed write) destroys the body: for-await returns its iterator.
  try {
    for await (const piece of body) {
      const chunk = Buffer.isBuffer(piece) ? piece : Buffer.from(piece as Uint8Array);
      hash.update(chunk);
      batch.push(chunk);
      batchBytes += chunk.byteLength;
      bytes += chunk.byteLength;
      if (batchBytes >= WRITE_BATCH_BYTES || batch.length >= WRITE_BATCH_CHUNKS) await flush();
    }
    await flush();
  } finally {
    await file.close();
  }
  return { sha256: hash.digest('hex'), bytes };
}
