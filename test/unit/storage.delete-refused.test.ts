/**
 * DeleteObjects answers 200 with the keys it refused in its body. The real AWS SDK talks to a local
 * HTTP server that answers as S3 does when a bucket policy denies some deletes: `deleteKeys` and
 * `deletePrefix` must fail, never report the objects gone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { createObjectStore, createS3Client } from '../../activities/storage/object-store.ts';
import { classifyFailure } from '../../activities/failure-classifier.ts';
import { FAILURE } from '../../schemas/retry-table.ts';
import { localS3Config } from '../helpers/local-s3.ts';

const XMLNS = 'http://s3.amazonaws.com/doc/2006-03-01/';
let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** Keys named `refused/…` are refused with `code`; every other key is deleted. */
async function fakeS3(code: string, keys: string[]) {
  const deleted: string[] = [];
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      res.setHeader('content-type', 'application/xml');
      if (req.method === 'GET') {
        const contents = keys.map((k) => `<Contents><Key>${k}</Key><Size>1</Size></Contents>`).join('');
        res.end(
          `<ListBucketResult xmlns="${XMLNS}"><IsTruncated>false</IsTruncated>${contents}</ListBucketResult>`,
        );
        return;
      }
      const asked = [...body.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!);
      const errors = asked
        .filter((k) => k.startsWith('refused/'))
        .map((k) => `<Error><Key>${k}</Key><Code>${code}</Code><Message>no</Message></Error>`);
      deleted.push(...asked.filter((k) => !k.startsWith('refused/')));
      res.end(`<DeleteResult xmlns="${XMLNS}">${errors.join('')}</DeleteResult>`);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const s3 = localS3Config(port);
  return { store: createObjectStore(s3, createS3Client(s3, { maxAttempts: 1 })), deleted };
}

describe('deletes that S3 refused per key', () => {
  it('deleteKeys fails with the count and codes, typed StorageRefused, naming no key', async () => {
    const { store, deleted } = await fakeS3('AccessDenied', []);
    const err = await store
      .deleteKeys(['ok/a.json', 'refused/09012345678.json', 'ok/b.json'])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe('S3 refused to delete 1 of 3 objects (AccessDenied ×1)');
    expect((err as Error).message).not.toContain('0901');
    expect(classifyFailure(err)).toBe(FAILURE.StorageRefused);
    expect(deleted).toEqual(['ok/a.json', 'ok/b.json']);
  });

  it('deletePrefix fails too; a refusal of the store itself is retryable', async () => {
    const { store } = await fakeS3('InternalError', ['p/x', 'refused/y', 'refused/z']);
    const err = await store.deletePrefix('p/').catch((e: unknown) => e);
    expect((err as Error).message).toBe('S3 refused to delete 2 of 3 objects (InternalError ×2)');
    expect(classifyFailure(err)).toBe(FAILURE.StorageUnavailable);
  });

  it('a delete with no refusals resolves to the count asked', async () => {
    const { store, deleted } = await fakeS3('AccessDenied', ['p/x', 'p/y']);
    expect(await store.deleteKeys(['a', 'b'])).toBe(2);
    expect(await store.deletePrefix('p/')).toBe(2);
    expect(deleted).toEqual(['a', 'b', 'p/x', 'p/y']);
  });
});
