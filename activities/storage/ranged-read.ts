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

/** One bounded GET: the bytes, read to the end so the socket goes back to the pool at once. */
async function readRange(target: BucketTarget, key: string, first: number, last: number) {
  try {
    const res = await target.client.send(
      new GetObjectCommand({ Bucket: target.Bucket, Key: key, Range: `bytes=${first}-${last}` }),
    );
    const bytes = await res.Body!.transformToByteArray();
    return {
      bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      total: totalOfContentRange(res.ContentRange),
    };
  } catch (err) {
    // A range from the object's end on: nothing (more) to read.
    if (isRangeNotSatisfiable(err)) return { bytes: Buffer.alloc(0), total: first };
    throw err;
  }
}

/** The object from byte `start` to byte `end` (inclusive; the object's end when undefined), range by range. */
export function rangedStream(
  target: BucketTarget,
  key: string,
  start: number,
  end: number | undefined,
  rangeBytes: number,
): Readable {
  if (!Number.isInteger(rangeBytes) || rangeBytes <= 0)
    throw new Error(`rangeBytes must be a positive integer`);
  async function* ranges(): AsyncGenerator<Buffer> {
    let at = start;
    let last = end;
    while (last === undefined || at <= last) {
      const upTo = last === undefined ? at + rangeBytes - 1 : Math.min(at + rangeBytes - 1, last);
      const { bytes, total } = await readRange(target, key, at, upTo);
      if (total !== undefined) last = Math.min(last ?? total - 1, total - 1);
      if (bytes.byteLength === 0) return;
      yield bytes;
      at += bytes.byteLength;
    }
  }
  // Byte mode with a high-water mark of one range: the next request goes out when the reader has taken
  // the previous range, so at most about two ranges are in memory per reader.
  return Readable.from(ranges(), { objectMode: false, highWaterMark: rangeBytes });
}
