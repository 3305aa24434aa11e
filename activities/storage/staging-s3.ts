/**
 * Staging storage on S3 (the media module's StagingStore). A transcoded session is spooled to a temp
 * file first: the upload then has a known length (no aws-chunked streaming), and a body that fails its
 * length check never becomes an object.
 */
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { StagedObjectInfo, StagingMeta, StagingStore } from '../media/staging.ts';
import type { ObjectStore } from './object-store.ts';
import { makeScratchDir } from '../scratch.ts';

export class S3StagingStore implements StagingStore {
  private readonly store: ObjectStore;
  constructor(store: ObjectStore) {
    this.store = store;
  }

  async exists(key: string): Promise<boolean> {
    return this.store.exists(key);
  }

  async head(key: string): Promise<StagedObjectInfo | undefined> {
    const info = await this.store.head(key);
    return info ? { size: info.size, meta: info.metadata ?? {} } : undefined;
  }

  async put(key: string, body: Readable | Buffer, meta: StagingMeta): Promise<void> {
    if (Buffer.isBuffer(body)) return this.store.put(key, body, { metadata: meta });
    const dir = await makeScratchDir('staging-');
    try {
      const file = join(dir, 'body');
      await pipeline(body, createWriteStream(file));
      await this.store.putFile(key, file, { metadata: meta });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async putFile(key: string, path: string, meta: StagingMeta): Promise<void> {
    await this.store.putFile(key, path, { metadata: meta });
  }
}
