/**
 * Staging storage for a recording's transcoded tracks. The interface is what the media activities need
 * and no more; the S3 implementation lives in activities/storage/, the local-directory one here serves
 * tests and offline runs. Keys are deterministic (source fingerprint + track + format), so a retried
 * or re-run plan writes over its own earlier output.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { SessionAudioFormat } from '../../schemas/media-transcode.ts';

/** Object metadata: strings only, as S3 user metadata is. */
export type StagingMeta = Record<string, string>;

export interface StagedObjectInfo {
  size: number;
  meta: StagingMeta;
}

export interface StagingStore {
  exists(key: string): Promise<boolean>;
  /**
   * Stores `body` under `key`. Atomic: the object appears only once the body has ended without error;
   * a body stream that errors (e.g. a length check failing) leaves no object behind.
   */
  put(key: string, body: Readable | Buffer, meta: StagingMeta): Promise<void>;
  /** Stores a local file under `key` (its length known: one request, however long the track). */
  putFile(key: string, path: string, meta: StagingMeta): Promise<void>;
  /** Size and metadata of an object, or undefined when there is none. */
  head(key: string): Promise<StagedObjectInfo | undefined>;
}

/** File name extension of each audio format in keys. */
const FORMAT_EXTENSIONS: Record<SessionAudioFormat, string> = { mulaw: 'mulaw', pcm16k: 's16le-16k' };

export interface StagingKeyInput {
  fingerprint: string;
  track: number;
  format: SessionAudioFormat;
  /** Prefix such as the configured staging prefix (`staging/`). */
  prefix?: string;
}

/**
 * `<prefix><fingerprint>/t<track>/track.<ext>`: a whole track of the recording (staged-tracks.ts), which
 * sessions read by byte range.
 */
export function trackKey(input: StagingKeyInput): string {
  const fp = input.fingerprint.replace(/[^A-Za-z0-9._-]/g, '-');
  return `${input.prefix ?? ''}${fp}/t${input.track}/track.${FORMAT_EXTENSIONS[input.format]}`;
}

const META_SUFFIX = '.meta.json';

/** Staging in a local directory: `<root>/<key>` and `<root>/<key>.meta.json`. */
export class LocalStagingStore implements StagingStore {
  readonly root: string;
  constructor(root: string) {
    this.root = root;
  }

  /** The file of a key; refuses keys that would leave the root. */
  pathOf(key: string): string {
    const root = resolve(this.root);
    const path = resolve(root, key);
    if (!path.startsWith(root + sep)) throw new RangeError(`staging key escapes the store: ${key}`);
    return path;
  }

  async exists(key: string): Promise<boolean> {
    return (await this.head(key)) !== undefined;
  }

  async head(key: string): Promise<StagedObjectInfo | undefined> {
    const path = this.pathOf(key);
    try {
      const [info, meta] = await Promise.all([stat(path), readFile(path + META_SUFFIX, 'utf8')]);
      return { size: info.size, meta: JSON.parse(meta) as StagingMeta };
    } catch {
      return undefined;
    }
  }

  async put(key: string, body: Readable | Buffer, meta: StagingMeta): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    const tmp = join(dirname(path), `.${randomUUID()}.tmp`);
    try {
      if (Buffer.isBuffer(body)) await writeFile(tmp, body);
      else await pipeline(body, createWriteStream(tmp));
      await writeFile(path + META_SUFFIX, JSON.stringify(meta));
      await rename(tmp, path);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async putFile(key: string, path: string, meta: StagingMeta): Promise<void> {
    await this.put(key, createReadStream(path), meta);
  }
}
