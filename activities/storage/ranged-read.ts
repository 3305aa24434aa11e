/**
 * Reading an S3 object in bounded ranges, each request sent only as the reader drains the previous one,
 * so a slow reader holds a pooled socket for milliseconds at a time, never for its whole life.
 */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { s3StatusOf } from './s3-errors.ts';

/** The bucket an object store reads from, and the client it reads with. */
export interface BucketTarget {
  client: S3Client;
  Bucket: string;
}

/** S3's answer to a range that starts at or past the object's end (HTTP 416). */
function isRangeNotSatisfiable(err: unknown): boolean {
  return s3StatusOf(err) === 416 || (err as { name?: string })?.name === 'InvalidRange';
}

/** `bytes a-b/total` → total; undefined when the store did not say. */
function totalOfContentRange(contentRange: string | undefined): number | undefined {
  const total = contentRange?.split('/')[1];
  return total && total !== '*' ? Number(total) : undefined;
}

/**
 * One bounded GET, read to the end so the socket goes back to the pool at once. The bytes stay in the
 * pieces they arrived in: each can be freed once streamed, where one buffer of the whole range would live
 * until its last byte was.
 */
async function readRange(target: BucketTarget, key: string, first: number, last: number) {
  try {
    const res = await target.client.send(
      new GetObjectCommand({ Bucket: target.Bucket, Key: key, Range: `bytes=${first}-${last}` }),
    );
    const pieces: Buffer[] = [];
    let bytes = 0;
    for await (const piece of res.Body as Readable) {
      const buffer = Buffer.isBuffer(piece) ? piece : Buffer.from(piece as Uint8Array);
      pieces.push(buffer);
      bytes += buffer.byteLength;
    }
    return { pieces, bytes, total: totalOfContentRange(res.ContentRange) };
  } catch (err) {
    // A range from the object's end on: nothing (more) to read.
    if (isRangeNotSatisfiable(err)) return { pieces: [], bytes: 0, total: first };
    throw err;
  }
}

/**
 * The object from byte `start` to byte `end` (inclusive; the object's end when undefined), range by range.
 * The next range is asked for once less than `readAheadBytes` (default a range) is left to read.
 */
export function rangedStream(
  target: BucketTarget,
  key: string,
  start: number,
  end: number | undefined,
  rangeBytes: number,
  readAheadBytes: number = rangeBytes,
): Readable {
  for (const [name, value] of Object.entries({ rangeBytes, readAheadBytes }))
    if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  async function* ranges(): AsyncGenerator<Buffer> {
    let at = start;
    let last = end;
    while (last === undefined || at <= last) {
      const upTo = last === undefined ? at + rangeBytes - 1 : Math.min(at + rangeBytes - 1, last);
      const { pieces, bytes, total } = await readRange(target, key, at, upTo);
      if (total !== undefined) last = Math.min(last ?? total - 1, total - 1);
      if (bytes === 0) return;
      yield* pieces;
      at += bytes;
    }
  }
  // Byte mode with a high-water mark of the read-ahead: pieces are taken from the generator while less
  // than that is buffered, so the next request goes out when the current range is nearly streamed.
  return Readable.from(ranges(), { objectMode: false, highWaterMark: readAheadBytes });
}
