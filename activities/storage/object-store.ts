/**
 * The one module that talks to S3 (@aws-sdk/client-s3). Everything else reads and writes objects
 * through {@link ObjectStore}, so the SDK can be swapped or faked without touching callers.
 */
import { meterS3Requests } from '../cost/s3-meter.ts';
import {
  S3Client,
  GetObjectCommand,
  PutObjectCommand,
  HeadObjectCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
  CreateBucketCommand,
  HeadBucketCommand,
} from '@aws-sdk/client-s3';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { S3Config } from '../../schemas/config.ts';
import {
  S3_CONNECT_TIMEOUT_MS,
  S3_DEFAULT_MAX_SOCKETS,
  S3_SOCKET_IDLE_TIMEOUT_MS,
} from '../../schemas/limits.ts';
import { rangedStream, type BucketTarget } from './ranged-read.ts';
import { isNotFound, s3StatusOf } from './s3-errors.ts';
import { FAILURE } from '../../schemas/retry-table.ts';

export interface ObjectInfo {
  key: string;
  size: number;
  etag?: string;
  lastModified?: Date;
  metadata?: Record<string, string>;
}

interface ListPage {
  objects: ObjectInfo[];
  /** Opaque token for the next page; undefined on the last page. */
  next?: string;
}

export interface ObjectStore {
  readonly bucket: string;
  put(
    key: string,
    body: string | Buffer,
    options?: { contentType?: string; metadata?: Record<string, string> },
  ): Promise<void>;
  /** Uploads a local file (streamed; a known length avoids aws-chunked encoding). */
  putFile(
    key: string,
    path: string,
    options?: { contentType?: string; metadata?: Record<string, string> },
  ): Promise<void>;
  getText(key: string): Promise<string>;
  getBuffer(key: string): Promise<Buffer>;
  /**
   * A stream of the object, from byte `start` on when given, up to byte `end` (inclusive) when given (HTTP
   * Range). With `rangeBytes`, the object is read in requests of at most that many bytes, each sent only
   * as the reader drains the previous one: a reader that takes an hour (a real-time recognition stream)
   * holds a pooled socket for milliseconds at a time, never for its whole life (issue 18).
   */
  getStream(
    key: string,
    options?: { start?: number; end?: number; rangeBytes?: number; readAheadBytes?: number },
  ): Promise<Readable>;
  /** Spools an object to a local file (e.g. for ffmpeg, which cannot seek in a pipe). */
  download(key: string, path: string): Promise<void>;
  head(key: string): Promise<ObjectInfo | undefined>;
  /** The object's bytes and ETag; undefined when there is no such object. */
  read(key: string): Promise<{ body: Buffer; etag?: string } | undefined>;
  /**
   * Writes only when `condition` holds (S3 conditional writes): the object is absent (`ifNoneMatch:
   * '*'`) or still has the ETag `ifMatch`. Resolves to `'conflict'` when it does not (HTTP 412 or 409).
   */
  putIf(
    key: string,
    body: string | Buffer,
    condition: { ifNoneMatch: '*' } | { ifMatch: string },
    options?: { contentType?: string },
  ): Promise<{ etag?: string } | 'conflict'>;
  /** Deletes exactly these keys (absent ones are no error); resolves to how many were asked. */
  deleteKeys(keys: readonly string[]): Promise<number>;
  exists(key: string): Promise<boolean>;
  /** One page of keys under `prefix` in key order; with `startAfter`, only keys after it (S3 StartAfter). */
  listPage(prefix: string, next?: string, pageSize?: number, startAfter?: string): Promise<ListPage>;
  deletePrefix(prefix: string): Promise<number>;
  ensureBucket(bucket?: string): Promise<void>;
  /** Same store on another bucket (for `s3://other-bucket/...` sources). */
  withBucket(bucket: string): ObjectStore;
}

/** The store on `bucket`: itself when it is on it already, else the same store on the other bucket. */
export function onBucket<S extends Pick<ObjectStore, 'bucket' | 'withBucket'>>(
  store: S,
  bucket: string,
): S | ObjectStore {
  return bucket === store.bucket ? store : store.withBucket(bucket);
}

/** Region of S3 when neither callpipe's sources nor AWS's (AWS_REGION, the profile) name one. */
/** Every object under `prefix`, page after page, in the store's key order. */
export async function listObjectsUnder(
  store: Pick<ObjectStore, 'listPage'>,
  prefix: string,
): Promise<ObjectInfo[]> {
  const found: ObjectInfo[] = [];
  let next: string | undefined;
  do {
    const page = await store.listPage(prefix, next);
    found.push(...page.objects);
    next = page.next;
  } while (next);
  return found;
}

export const S3_FALLBACK_REGION = 'us-east-1';

/**
 * The region the AWS SDK resolves the way the AWS CLI does (AWS_REGION, then the profile's `region` in the
 * shared config file), else {@link S3_FALLBACK_REGION}: S3-compatible servers take any region, and a bare
 * SDK would refuse to start without one. Resolved once, on the first request.
 */
function sdkRegionOrFallback(profile: string | undefined): () => Promise<string> {
  let region: Promise<string> | undefined;
  return () =>
    (region ??= (async () => {
      const probe = new S3Client({ profile });
      try {
        return await probe.config.region();
      } catch {
        return S3_FALLBACK_REGION;
      } finally {
        probe.destroy();
      }
    })());
}

/**
 * The S3 client. Credentials: callpipe's static keys when configured (the local stack, tests), else none
 * given, so the SDK's default provider chain resolves them as AWS's tools do (environment keys with a
 * session token, AWS_PROFILE or `profile` with the shared files, SSO and credential_process, web identity,
 * container and instance roles). `maxAttempts` is the SDK's own retry of a request (default 3, its
 * standard); workers set 1, since Temporal's attempts already retry the activity that made the request.
 */
export function createS3Client(
  config: S3Config,
  options: { maxAttempts?: number; maxSockets?: number; idleTimeoutMs?: number } = {},
): S3Client {
  // The SDK's pool: at most this many sockets per host; a request beyond them waits, silently but for a
  // warning. Workers size it from their limits (schemas/limits.ts, s3SocketsFor).
  const maxSockets = options.maxSockets ?? S3_DEFAULT_MAX_SOCKETS;
  // The SDK version is pinned in package-lock.json; its warning about future releases needing Node 22
  // says nothing about the code we run, and would land in every worker log.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const client = new S3Client({
    region: config.region ?? sdkRegionOrFallback(config.profile),
    endpoint: config.endpoint,
    forcePathStyle: config.forcePathStyle,
    profile: config.profile,
    credentials:
      config.accessKeyId && config.secretAccessKey
        ? {
            accessKeyId: config.accessKeyId,
            secretAccessKey: config.secretAccessKey,
            sessionToken: config.sessionToken,
          }
        : undefined,
    maxAttempts: options.maxAttempts ?? 3,
    requestHandler: {
      httpAgent: { keepAlive: true, maxSockets },
      httpsAgent: { keepAlive: true, maxSockets },
      // The idle timeout of the socket (`requestTimeout` is a total one that only warns, unless told to throw).
      socketTimeout: options.idleTimeoutMs ?? S3_SOCKET_IDLE_TIMEOUT_MS,
      connectionTimeout: S3_CONNECT_TIMEOUT_MS,
    },
  });
  // Every request counted by operation (the cost meter): the one client every store is made with.
  return meterS3Requests(client);
}

/** The object's ETag without the quotes S3 puts around it. */
function bareEtag(etag: string | undefined): string | undefined {
  return etag?.replaceAll('"', '');
}

async function putObject(
  { client, Bucket }: BucketTarget,
  key: string,
  body: string | Buffer,
  options?: { contentType?: string; metadata?: Record<string, string> },
): Promise<void> {
  await client.send(
    new PutObjectCommand({
      Bucket,
      Key: key,
      Body: body,
      ContentType: options?.contentType,
      Metadata: options?.metadata,
    }),
  );
}

async function putLocalFile(
  { client, Bucket }: BucketTarget,
  key: string,
  path: string,
  options?: { contentType?: string; metadata?: Record<string, string> },
): Promise<void> {
  const { size } = await stat(path);
  await client.send(
    new PutObjectCommand({
      Bucket,
      Key: key,
      Body: createReadStream(path),
      ContentLength: size,
      ContentType: options?.contentType,
      Metadata: options?.metadata,
    }),
  );
}

async function getObjectStream(
  target: BucketTarget,
  key: string,
  options?: { start?: number; end?: number; rangeBytes?: number; readAheadBytes?: number },
): Promise<Readable> {
  const { start = 0, end, rangeBytes, readAheadBytes } = options ?? {};
  if (rangeBytes !== undefined) return rangedStream(target, key, start, end, rangeBytes, readAheadBytes);
  const Range = start || end !== undefined ? `bytes=${start}-${end ?? ''}` : undefined;
  const res = await target.client.send(new GetObjectCommand({ Bucket: target.Bucket, Key: key, Range }));
  return res.Body as Readable;
}

async function getObjectBuffer({ client, Bucket }: BucketTarget, key: string): Promise<Buffer> {
  const res = await client.send(new GetObjectCommand({ Bucket, Key: key }));
  return Buffer.from(await res.Body!.transformToByteArray());
}

async function headObject({ client, Bucket }: BucketTarget, key: string): Promise<ObjectInfo | undefined> {
  try {
    const res = await client.send(new HeadObjectCommand({ Bucket, Key: key }));
    return {
      key,
      size: res.ContentLength ?? 0,
      etag: bareEtag(res.ETag),
      lastModified: res.LastModified,
      metadata: res.Metadata,
    };
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function readObject(
  { client, Bucket }: BucketTarget,
  key: string,
): Promise<{ body: Buffer; etag?: string } | undefined> {
  try {
    const res = await client.send(new GetObjectCommand({ Bucket, Key: key }));
    return {
      body: Buffer.from(await res.Body!.transformToByteArray()),
      etag: bareEtag(res.ETag),
    };
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function putObjectIf(
  { client, Bucket }: BucketTarget,
  key: string,
  body: string | Buffer,
  condition: { ifNoneMatch: '*' } | { ifMatch: string },
  options?: { contentType?: string },
): Promise<{ etag?: string } | 'conflict'> {
  try {
    const res = await client.send(
      new PutObjectCommand({
        Bucket,
        Key: key,
        Body: body,
        ContentType: options?.contentType,
        ...('ifMatch' in condition ? { IfMatch: `"${condition.ifMatch}"` } : { IfNoneMatch: '*' }),
      }),
    );
    return { etag: bareEtag(res.ETag) };
  } catch (err) {
    // 412: the condition failed; 409: a concurrent conditional write of the same key won.
    const status = s3StatusOf(err);
    if (status === 412 || status === 409) return 'conflict';
    throw err;
  }
}

/** S3's DeleteObjects takes at most this many keys per request. */
const DELETE_BATCH_KEYS = 1000;

/** Per-key answers of DeleteObjects that a later attempt may not meet again. */
const RETRYABLE_DELETE_CODES = new Set(['InternalError', 'SlowDown', 'ServiceUnavailable', 'RequestTimeout']);

/**
 * DeleteObjects answers 200 even when it refused some keys: each refusal is an `Error` entry of the
 * body. A delete that left objects behind must fail, never pass as done (an erasure that keeps a copy).
 * The message counts and names the codes only: keys can hold what a file name held.
 */
export class DeleteRefusedError extends Error {
  readonly codes: Record<string, number>;
  /** The refused keys, for callers that know their keys hold no personal data (call-id based) to name them. */
  readonly keys: string[];
  constructor(refused: readonly { Code?: string; Key?: string }[], asked: number) {
    const codes: Record<string, number> = {};
    for (const e of refused) codes[e.Code ?? 'unknown'] = (codes[e.Code ?? 'unknown'] ?? 0) + 1;
    const list = Object.entries(codes)
      .map(([code, n]) => `${code} ×${n}`)
      .join(', ');
    super(`S3 refused to delete ${refused.length} of ${asked} objects (${list})`);
    this.codes = codes;
    this.keys = refused.flatMap((e) => (e.Key ? [e.Key] : []));
    // The failure type by name (failure-classifier.ts): retry when every refusal was the store's own trouble.
    this.name = Object.keys(codes).every((c) => RETRYABLE_DELETE_CODES.has(c))
      ? FAILURE.StorageUnavailable
      : FAILURE.StorageRefused;
  }
}

async function deleteBatch({ client, Bucket }: BucketTarget, keys: readonly string[]): Promise<void> {
  const res = await client.send(
    new DeleteObjectsCommand({ Bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }),
  );
  // An absent key is deleted as far as S3 is concerned: it answers no error for it.
  if (res.Errors?.length) throw new DeleteRefusedError(res.Errors, keys.length);
}

async function deleteObjectKeys(target: BucketTarget, keys: readonly string[]): Promise<number> {
  for (let i = 0; i < keys.length; i += DELETE_BATCH_KEYS) {
    await deleteBatch(target, keys.slice(i, i + DELETE_BATCH_KEYS));
  }
  return keys.length;
}

async function listObjectPage(
  { client, Bucket }: BucketTarget,
  prefix: string,
  next?: string,
  pageSize = 1000,
  startAfter?: string,
): Promise<ListPage> {
  const res = await client.send(
    new ListObjectsV2Command({
      Bucket,
      Prefix: prefix,
      ContinuationToken: next,
      MaxKeys: pageSize,
      StartAfter: startAfter,
    }),
  );
  return {
    objects: (res.Contents ?? []).map((o) => ({
      key: o.Key!,
      size: o.Size ?? 0,
      etag: bareEtag(o.ETag),
      lastModified: o.LastModified,
    })),
    next: res.IsTruncated ? res.NextContinuationToken : undefined,
  };
}

async function deleteObjectsUnder(store: ObjectStore, target: BucketTarget, prefix: string) {
  let deleted = 0;
  let next: string | undefined;
  do {
    const page = await store.listPage(prefix, next);
    if (page.objects.length > 0) {
      await deleteBatch(
        target,
        page.objects.map((o) => o.key),
      );
      deleted += page.objects.length;
    }
    next = page.next;
  } while (next);
  return deleted;
}

async function ensureBucketExists(client: S3Client, name: string): Promise<void> {
  try {
    await client.send(new HeadBucketCommand({ Bucket: name }));
  } catch {
    await client.send(new CreateBucketCommand({ Bucket: name }));
  }
}

export function createObjectStore(
  config: S3Config,
  client: S3Client = createS3Client(config),
  bucket = config.bucket,
): ObjectStore {
  const target: BucketTarget = { client, Bucket: bucket };
  const store: ObjectStore = {
    bucket,
    put: (key, body, options) => putObject(target, key, body, options),
    putFile: (key, path, options) => putLocalFile(target, key, path, options),
    getStream: (key, options) => getObjectStream(target, key, options),
    getBuffer: (key) => getObjectBuffer(target, key),
    async getText(key) {
      return (await store.getBuffer(key)).toString('utf8');
    },
    async download(key, path) {
      await pipeline(await store.getStream(key), createWriteStream(path));
    },
    head: (key) => headObject(target, key),
    read: (key) => readObject(target, key),
    putIf: (key, body, condition, options) => putObjectIf(target, key, body, condition, options),
    deleteKeys: (keys) => deleteObjectKeys(target, keys),
    async exists(key) {
      return (await store.head(key)) !== undefined;
    },
    listPage: (prefix, next, pageSize, startAfter) =>
      listObjectPage(target, prefix, next, pageSize, startAfter),
    deletePrefix: (prefix) => deleteObjectsUnder(store, target, prefix),
    ensureBucket: (name = bucket) => ensureBucketExists(client, name),
    withBucket: (other) => createObjectStore(config, client, other),
  };
  return store;
}

/** `s3://bucket/key` → parts; undefined for anything else. */
export { parseS3Url } from '../../schemas/call-keys.ts';
