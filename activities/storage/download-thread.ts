/**
 * The thread of `threaded-download.ts` (read that first): downloads objects to local files, hashing them,
 * on an event loop of its own. Each request names its store (the S3 settings and client options); one
 * client per store serves every request for it.
 */
import { parentPort } from 'node:worker_threads';
import type { S3Config } from '../../schemas/config.ts';
import { writeHashedFile } from './hashed-file.ts';
import { createObjectStore, createS3Client, type ObjectStore } from './object-store.ts';
import { s3CodeOf, s3StatusOf } from './s3-errors.ts';
import type { DownloadAnswer, DownloadRequest } from './threaded-download.ts';

const stores = new Map<string, ObjectStore>();

function storeFor(s3: S3Config, options: DownloadRequest['clientOptions']): ObjectStore {
  const id = JSON.stringify([s3, options]);
  let store = stores.get(id);
  if (!store) stores.set(id, (store = createObjectStore(s3, createS3Client(s3, options))));
  return store;
}

async function download(request: DownloadRequest): Promise<DownloadAnswer> {
  try {
    const store = storeFor(request.s3, request.clientOptions).withBucket(request.bucket);
    const { sha256, bytes } = await writeHashedFile(await store.getStream(request.key), request.path);
    return { id: request.id, ok: true, sha256, bytes };
  } catch (err) {
    const e = err as Error;
    return {
      id: request.id,
      ok: false,
      error: {
        name: e?.name ?? 'Error',
        message: e?.message ?? String(err),
        status: s3StatusOf(err),
        code: s3CodeOf(err),
      },
    };
  }
}

parentPort!.on('message', (request: DownloadRequest) => {
  void download(request).then((answer) => parentPort!.postMessage(answer));
});
