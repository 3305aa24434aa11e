/**
 * The one module that talks to S3 (@aws-sdk/client-s3). Everything else reads and writes objects
 * through {@link ObjectStore}, so the SDK can be swapped or faked without touching callers.
 */
import {
  S3Client,
  GetObjectCommand,
  PutObjectCommand,
  HeadObjectCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
  CreateBucketCommand,
  HeadBucketCommand,
  NotFound,
  NoSuchKey,
} from '@aws-sdk/client-s3';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type { S3Config } from '../../schemas/config.ts';
import {
  S3_CONNECT_TIMEOUT_MS,
  S3_DEFAULT_MAX_SOCKETS,
  S3_SOCKET_IDLE_TIMEOUT_MS,
} from '../../schemas/limits.ts';

export interface ObjectInfo {
  key: string;
  size: number;
  etag?: string;
  lastModified?: Date;
  metadata?: Record<string, string>;
}

export interface ListPage {
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
  getStream(key: string, options?: { start?: number; end?: number; rangeBytes?: number }): Promise<Readable>;
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
  listPage(prefix: string, next?: string, pageSize?: number): Promise<ListPage>;
  deletePrefix(prefix: string): Promise<number>;
  ensureBucket(bucket?: string): Promise<void>;
  /** Same store on another bucket (for `s3://other-bucket/...` sources). */
  withBucket(bucket: string): ObjectStore;
}

/** Region of S3 when neither callpipe's sources nor AWS's (AWS_REGION, the profile) name one. */
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
  return new S3Client({
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

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return (
    err instanceof NotFound ||
    err instanceof NoSuchKey ||
    e?.name === 'NotFound' ||
    e?.name === 'NoSuchKey' ||
    e?.$metadata?.httpStatusCode === 404
  );
}

/** HTTP status of a failed S3 request, when the store answered at all. */
export function s3StatusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

/**
 * The store answered that this request cannot succeed as made (a 4xx other than timeout and
 * throttling): no such object, a key it refuses to hold (SeaweedFS answers 400 to `../` segments),
 * access denied. Retrying in seconds will not help; the caller should fail or report it.
 */
export function isPermanentS3Error(err: unknown): boolean {
  const status = s3StatusOf(err);
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
}

export function createObjectStore(
  config: S3Config,
  client: S3Client = createS3Client(config),
  bucket = config.bucket,
): ObjectStore {
  const Bucket = bucket;

  /** One bounded GET: the bytes, read to the end so the socket goes back to the pool at once. */
  async function readRange(key: string, first: number, last: number) {
    try {
      const res = await client.send(
        new GetObjectCommand({ Bucket, Key: key, Range: `bytes=${first}-${last}` }),
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

  function rangedStream(key: string, start: number, end: number | undefined, rangeBytes: number): Readable {
    if (!Number.isInteger(rangeBytes) || rangeBytes <= 0)
      throw new Error(`rangeBytes must be a positive integer`);
    async function* ranges(): AsyncGenerator<Buffer> {
      let at = start;
      let last = end;
      while (last === undefined || at <= last) {
        const upTo = last === undefined ? at + rangeBytes - 1 : Math.min(at + rangeBytes - 1, last);
        const { bytes, total } = await readRange(key, at, upTo);
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

  const store: ObjectStore = {
    bucket,
    async put(key, body, options) {
      await client.send(
        new PutObjectCommand({
          Bucket,
          Key: key,
          Body: body,
          ContentType: options?.contentType,
          Metadata: options?.metadata,
        }),
      );
    },
    async putFile(key, path, options) {
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
    },
    async getStream(key, options) {
      const { start = 0, end, rangeBytes } = options ?? {};
      if (rangeBytes !== undefined) return rangedStream(key, start, end, rangeBytes);
      const Range = start || end !== undefined ? `bytes=${start}-${end ?? ''}` : undefined;
      const res = await client.send(new GetObjectCommand({ Bucket, Key: key, Range }));
      return res.Body as Readable;
    },
    async getBuffer(key) {
      const res = await client.send(new GetObjectCommand({ Bucket, Key: key }));
      return Buffer.from(await res.Body!.transformToByteArray());
    },
    async getText(key) {
      return (await store.getBuffer(key)).toString('utf8');
    },
    async download(key, path) {
      await pipeline(await store.getStream(key), createWriteStream(path));
    },
    async head(key) {
      try {
        const res = await client.send(new HeadObjectCommand({ Bucket, Key: key }));
        return {
          key,
          size: res.ContentLength ?? 0,
          etag: res.ETag?.replaceAll('"', ''),
          lastModified: res.LastModified,
          metadata: res.Metadata,
        };
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async read(key) {
      try {
        const res = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        return {
          body: Buffer.from(await res.Body!.transformToByteArray()),
          etag: res.ETag?.replaceAll('"', ''),
        };
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async putIf(key, body, condition, options) {
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
        return { etag: res.ETag?.replaceAll('"', '') };
      } catch (err) {
        // 412: the condition failed; 409: a concurrent conditional write of the same key won.
        const status = s3StatusOf(err);
        if (status === 412 || status === 409) return 'conflict';
        throw err;
      }
    },
    async deleteKeys(keys) {
      for (let i = 0; i < keys.length; i += 1000) {
        const batch = keys.slice(i, i + 1000);
        await client.send(
          new DeleteObjectsCommand({
            Bucket,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
        );
      }
      return keys.length;
    },
    async exists(key) {
      return (await store.head(key)) !== undefined;
    },
    async listPage(prefix, next, pageSize = 1000) {
      const res = await client.send(
        new ListObjectsV2Command({ Bucket, Prefix: prefix, ContinuationToken: next, MaxKeys: pageSize }),
      );
      return {
        objects: (res.Contents ?? []).map((o) => ({
          key: o.Key!,
          size: o.Size ?? 0,
          etag: o.ETag?.replaceAll('"', ''),
          lastModified: o.LastModified,
        })),
        next: res.IsTruncated ? res.NextContinuationToken : undefined,
      };
    },
    async deletePrefix(prefix) {
      let deleted = 0;
      let next: string | undefined;
      do {
        const page = await store.listPage(prefix, next);
        if (page.objects.length > 0) {
          await client.send(
            new DeleteObjectsCommand({
              Bucket,
              Delete: { Objects: page.objects.map((o) => ({ Key: o.key })) },
            }),
          );
          deleted += page.objects.length;
        }
        next = page.next;
      } while (next);
      return deleted;
    },
    async ensureBucket(name = bucket) {
      try {
        await client.send(new HeadBucketCommand({ Bucket: name }));
      } catch {
        await client.send(new CreateBucketCommand({ Bucket: name }));
      }
    },
    withBucket(other) {
      return createObjectStore(config, client, other);
    },
  };
  return store;
}

/** `s3://bucket/key` → parts; undefined for anything else. */
export { parseS3Url } from '../../schemas/call-keys.ts';
