/**
 * rangedStream: an object read in bounded GETs, each range kept as the pieces it arrived in, the next one
 * asked for only when less than the read-ahead is left (a fake S3 client that serves ranges of a buffer).
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { rangedStream } from '../../activities/storage/ranged-read.ts';

/** An S3 client serving `object`'s ranges in pieces of `pieceBytes`, recording each asked range. */
function fakeS3(object: Buffer, pieceBytes = 16 * 1024) {
  const asked: string[] = [];
  const client = {
    async send(command: { input: { Range: string } }) {
      asked.push(command.input.Range);
      const [first, last] = command.input.Range.replace('bytes=', '').split('-').map(Number) as [
        number,
        number,
      ];
      const bytes = object.subarray(first, Math.min(last, object.length - 1) + 1);
      const pieces = [];
      for (let at = 0; at < bytes.length; at += pieceBytes) pieces.push(bytes.subarray(at, at + pieceBytes));
      return {
        Body: Readable.from(pieces),
        ContentRange: `bytes ${first}-${first + bytes.length - 1}/${object.length}`,
      };
    },
  } as unknown as S3Client;
  return { client, asked };
}

async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

const object = Buffer.from(Array.from({ length: 1_300_000 }, (_, i) => i % 251));

describe('rangedStream', () => {
  it('reads the object from a start in ranges of the given size', async () => {
    const { client, asked } = fakeS3(object);
    const bytes = await readAll(rangedStream({ client, Bucket: 'b' }, 'k', 1000, undefined, 512 * 1024));
    expect(bytes.equals(object.subarray(1000))).toBe(true);
    expect(asked).toEqual(['bytes=1000-525287', 'bytes=525288-1049575', 'bytes=1049576-1299999']);
  });

  it('asks for the next range only when less than the read-ahead is left of the current one', async () => {
    const { client, asked } = fakeS3(object);
    const stream = rangedStream({ client, Bucket: 'b' }, 'k', 0, undefined, 512 * 1024, 128 * 1024);
    const take = async (n: number) => {
      for (let got = 0; got < n;) {
        const chunk = stream.read(Math.min(1920, n - got)) as Buffer | null;
        if (chunk) got += chunk.length;
        else await new Promise((resolve) => stream.once('readable', resolve));
      }
    };
    await take(256 * 1024);
    await new Promise((resolve) => setImmediate(resolve));
    expect(asked).toHaveLength(1);
    await take(400 * 1024 - 256 * 1024);
    await new Promise((resolve) => setImmediate(resolve));
    expect(asked).toHaveLength(2);
    stream.destroy();
  });
});
