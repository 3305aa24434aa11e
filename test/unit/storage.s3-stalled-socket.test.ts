/**
 * An S3 endpoint that accepts a request and then says nothing: the request fails after the socket's idle
 * timeout as a retryable storage failure, rather than holding its activity until the activity's own
 * timeout (the SDK's default waits forever). A local TCP server that never answers stands in for a
 * stalled S3 server; the real AWS SDK sends the request.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server, type Socket } from 'node:net';
import { createObjectStore, createS3Client } from '../../activities/storage/object-store.ts';
import { failureTypeOf } from '../../activities/failure-boundary.ts';
import { FAILURE } from '../../schemas/retry-table.ts';
import { localS3Config } from '../helpers/local-s3.ts';

let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

describe('a stalled S3 socket', () => {
  it('fails the request after the idle timeout, as StorageUnavailable (retryable)', async () => {
    let requests = 0;
    server = createServer((socket) => {
      sockets.push(socket);
      socket.on('data', () => requests++); // read the request, answer nothing
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const s3 = localS3Config(port);
    const store = createObjectStore(s3, createS3Client(s3, { maxAttempts: 1, idleTimeoutMs: 300 }));
    const err: unknown = await store.getText('results/call.json').catch((e: unknown) => e);
    expect(requests).toBeGreaterThan(0);
    expect(err).toBeInstanceOf(Error);
    expect(failureTypeOf(err)).toBe(FAILURE.StorageUnavailable);
  });
});
